"""Where the history's assistant turns lie in the inference prompt, for ``train_on_history``.

Each turn is located in the prompt text (not re-rendered alone), so that the learnt ids are
the prompt's own ids: what the model would have generated at that point of the conversation.
Templates that write earlier turns differently once more follow are handled by tracing the
turn's text with sentinels, or, for a tool call (no text to trace), by rendering the turn as a
sentinel text and matching the rest of the prompt around it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from modules.local.safe_tokens import Span

__all__ = ["calls_written", "common_prefix", "history_regions", "unmask"]

logger = logging.getLogger("modules.local.training.example")  # one logger for the example's warnings


def history_regions(
    messages: list[dict[str, Any]], tools: list[Any] | None, render: Any, prompt: str
) -> list[tuple[int, int]]:
    """``(start, end)`` in the prompt of each assistant turn of the history: what the model would have generated.

    A turn starts where the prompt for it ends (the conversation before it, with the
    generation prompt), when that prompt is where the conversation begins; it ends where the
    conversation through it stops agreeing with the prompt. Templates that write earlier turns
    differently once more follow (a system prompt moved to the last user turn, Alpaca's
    separators, Qwen3's think block on the last answer only, tools placed before the last user
    turn) break one of those agreements: the turn's text, traced through the prompt with
    sentinels, then bounds it (it starts at the text; it ends with the closing the template
    writes after it), so that neither the user's words nor template scaffolding are learnt,
    and no answer of the history is silently left out. A tool call has no text to trace: it is
    found by rendering its turn as a sentinel text instead (see :func:`_call_region`).
    """
    regions = []
    for k, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        before = render(messages[:k], tools, True)
        start: int | None = len(before) if prompt.startswith(before) else None
        through = render(messages[: k + 1], tools, False)
        end = common_prefix(prompt, through)
        text = _traced(messages, k, tools, render, True, prompt)
        if text is None:  # no text to trace (a tool call): the agreements alone, when they hold
            if start is not None and end > start and calls_written(message, prompt[start:end]):
                regions.append((start, end))
            elif (found := _call_region(messages, k, tools, render, prompt)) is not None:
                regions.append(found)
            else:
                logger.warning("train_on_history: cannot locate history answer %d in the prompt; not learnt", k)
            continue
        text_start, text_end = text
        if start is None or start > text_start:
            start = text_start
        if end < text_end:  # the turn is written differently as the last one: learn its text and its closing
            last = _traced(messages[: k + 1], k, tools, render, False, through)
            closing = through[last[1] :] if last is not None else ""
            end = text_end + common_prefix(prompt[text_end:], closing)
        regions.append((start, end))
    return regions


def calls_written(message: Mapping[str, Any], region: str) -> bool:
    """Whether the template wrote the turn's tool calls (by name) in its region: a template that
    drops them leaves an empty turn, and learning that would teach the model to answer nothing. The
    turn's own text is left out of the search first: a name it mentions is no call written."""
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        region = region.replace(content.strip(), "", 1)
    names = [
        str(fn.get("name", "")) if isinstance(fn, Mapping) else ""
        for fn in (c.get("function", c) if isinstance(c, Mapping) else None for c in message.get("tool_calls") or ())
    ]
    return all(name and name in region for name in names)


_OPEN, _CLOSE = "\ue000", "\ue001"


def _call_region(
    messages: list[dict[str, Any]], k: int, tools: list[Any] | None, render: Any, prompt: str
) -> tuple[int, int] | None:
    """Where the tool calls of message *k* lie in *prompt* when the agreements with the tools fail (templates
    that write the last turn differently, as Qwen3's think block, or move the tools, as Mistral's): the
    agreements without the tools, or the prompt rendered with that turn as a sentinel text, which must be the
    prompt with the sentinel in place of the calls."""
    if not messages[k].get("tool_calls") or _OPEN in prompt:
        return None
    # What the template writes after this turn (Mistral's tools and system prompt, in the last user turn) is
    # no part of the conversation up to it: the agreements hold without them.
    plain = [m for m in messages[: k + 1] if m.get("role") != "system"]
    for upto in (messages[: k + 1], plain):
        before, through = _render(render, upto[:-1], None, True), _render(render, upto, None, False)
        if before is None or through is None or not prompt.startswith(before):
            continue
        start, end = len(before), common_prefix(prompt, through)
        if end > start and calls_written(messages[k], prompt[start:end]):
            return start, end
    swapped = [dict(m) for m in messages]
    swapped[k] = {"role": "assistant", "content": _OPEN}
    text = _render(render, swapped, tools, True)
    if text is None or text.count(_OPEN) != 1:
        return None
    head, tail = text.split(_OPEN)
    start, end = len(head), len(prompt) - len(tail)
    if end <= start or not (prompt.startswith(head) and prompt.endswith(tail)):
        return None
    return (start, end) if calls_written(messages[k], prompt[start:end]) else None


def _render(render: Any, messages: list[dict[str, Any]], tools: list[Any] | None, gen: bool) -> str | None:
    """``render(...)``, or None when the template refuses that conversation (then it gives no region)."""
    try:
        return str(render(messages, tools, gen))
    except Exception:  # any template error: this way of locating the turn does not apply
        return None


def _traced(
    messages: list[dict[str, Any]], k: int, tools: list[Any] | None, render: Any, gen: bool, plain: str
) -> tuple[int, int] | None:
    """Where message *k*'s text lies in *plain* (``render(messages, tools, gen)``), found by rendering it
    between two sentinels (inside its surrounding whitespace, which a template may trim); None when the
    text cannot be traced (no string content, or the template does not print it as it is)."""
    content = messages[k].get("content")
    if not isinstance(content, str) or not content.strip() or _OPEN in plain or _CLOSE in plain:
        return None
    core = content.strip()
    head = content[: len(content) - len(content.lstrip())]
    tail = content[len(content.rstrip()) :]
    marked = [dict(m) for m in messages]
    marked[k]["content"] = f"{head}{_OPEN}{core}{_CLOSE}{tail}"
    try:
        text = render(marked, tools, gen)
    except Exception:  # a template that refuses the sentinels: the text cannot be traced
        return None
    if text.count(_OPEN) != 1 or text.count(_CLOSE) != 1:
        return None
    start = text.index(_OPEN)
    end = text.index(_CLOSE) - 1
    if end < start or text.replace(_OPEN, "").replace(_CLOSE, "") != plain:
        return None
    return start, end


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def unmask(
    labels: list[int], ids: list[int], offsets: list[Span], start: int, end: int, stops: set[int], text: str
) -> None:
    after = len(ids)
    for i, (a, b) in enumerate(offsets):
        # wholly inside (a token merely begun there is the next turn's), or the answer's first token
        # with the space the template writes before it merged in (" a1" after Mistral's "[/INST]")
        if (start <= a or (b > start and text[a:start].isspace())) and b <= end and a < end:
            labels[i] = ids[i]
            if ids[i] in stops:
                return
            after = i + 1
    # A template that closes a turn only when another follows (Qwen1.5's "<|im_end|>" after every
    # turn but the last) ends the region before its stop token: learn that token, as for the final
    # answer, when nothing but whitespace the template wrote lies between it and the answer.
    for i in range(after, len(ids)):
        if ids[i] in stops:
            labels[after : i + 1] = ids[after : i + 1]
            return
        if not text[offsets[i][0] : offsets[i][1]].isspace():
            return

"""What :meth:`ModelFormat.from_chat_template` reads of a template's tokens: the special tokens
it writes, the one that closes an assistant turn (the first stop word), and, where the template
writes none after an answer, the tokens that open the turn after it (GLM's ``<|user|>`` and
``<|observation|>``, where its models stop).

The turn end is probed: the template is rendered once with an answer. A probe that runs out
of time because the machine was busy for a moment is tried again, in a session of its own, up
to :data:`~prompter.formats.budget.PROBE_TRIES` times for one template and tokens (each try at
most one probe render's time, so a template that is slow every time costs what it did
before): a busy moment must not build a format that never stops at its turn's end.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prompter.errors import PromptError, TemplateTimeoutError
from prompter.formats.budget import PROBE_RENDER_SECONDS, may_probe, probe_timed_out, probing
from prompter.formats.sandbox import compile_template, render_template

__all__ = ["next_turn_tokens", "special_tokens", "turn_end"]

_TOKEN = re.compile(
    r"<\|[^|<>\s]{1,40}\|>|<｜[^｜<>]{1,40}｜>|\[/?[A-Z_]{3,30}\]|<</?SYS>>|<[a-z_]{3,20}>|</[a-z_]{3,20}>"
)

_ANSWER = "\ue000answer\ue001"


def special_tokens(source: str, bos_token: str | None, eos_token: str | None) -> tuple[str, ...]:
    """The tokens given, then every delimiter-looking literal of *source*, each once."""
    found = [t for t in (bos_token, eos_token) if t]
    found += _TOKEN.findall(source)
    return tuple(dict.fromkeys(found))


def turn_end(source: str, bos_token: str | None, eos_token: str | None, special: Sequence[str]) -> str | None:
    """The special token that closes an assistant turn in *source*, where no fixed layout says it.

    Phi-3's template writes ``answer<|end|>\\n`` and then, after the last turn, the eos token;
    InternLM2's ``answer<|im_end|>\\n</s>``. The model stops at that first token (its
    generation config lists it), and so must a stop list built from the template: rendered
    with an answer, the first of the template's special tokens right after it (None if none,
    if the template fails on the probe, or if it ran out of time on every try).
    """
    tail = _after_answer(source, bos_token, eos_token, _ANSWERED, "turn_end")
    return None if tail is None else _leading(tail, special)


_ANSWERED = [{"role": "user", "content": "question"}, {"role": "assistant", "content": _ANSWER}]


def _leading(tail: str, special: Sequence[str]) -> str | None:
    """The longest of the *special* tokens *tail* starts with (None if none)."""
    return next((t for t in sorted(special, key=len, reverse=True) if t and tail.startswith(t)), None)


NEXT_TURNS = ("user", "observation")
"""The turns that follow an answer: the next question, and a tool's result (GLM's templates, the ones
that write nothing after an answer, name that turn ``observation``, as ChatGLM3 and GLM-4 do)."""


def next_turn_tokens(
    source: str, bos_token: str | None, eos_token: str | None, special: Sequence[str]
) -> tuple[str, ...]:
    """The special tokens that open the turn after an answer, for a template that writes none after it.

    GLM-4's template writes ``<|assistant|>\\nanswer`` and then the next turn's ``<|user|>`` or
    ``<|observation|>``: its models end an answer with one of those (their generation config lists
    them beside the eos token, and GLM's own fine-tuning teaches ``<|user|>`` there), so a stop
    list built from the template holds them. Each turn of :data:`NEXT_TURNS` is rendered after an
    answer; a turn the template refuses, or one opened by no token, gives nothing.
    """
    found = []
    for role in NEXT_TURNS:
        messages = [*_ANSWERED, {"role": role, "content": "next"}]
        tail = _after_answer(source, bos_token, eos_token, messages, ("next_turn", role))
        if tail is None:
            continue
        match = _TOKEN.match(tail)
        token = _leading(tail, special) or (match.group() if match else None)
        if token is not None:
            found.append(token)
    return tuple(dict.fromkeys(found))


def _after_answer(
    source: str, bos_token: str | None, eos_token: str | None, messages: list[dict[str, str]], what: object
) -> str | None:
    """What *source* writes after the answer of *messages* (leading whitespace dropped), or None if it
    fails on them, writes the answer other than once, or ran out of time on every try."""
    context = {"messages": messages, "add_generation_prompt": False, "bos_token": bos_token or "",
               "eos_token": eos_token or ""}  # fmt: skip
    compiled = compile_template(source)
    key = (what, source, bos_token, eos_token)
    text = None
    while text is None and may_probe(key):
        try:
            with probing(PROBE_RENDER_SECONDS):
                text = render_template(compiled, context)
        except TemplateTimeoutError:
            probe_timed_out(key)  # a busy moment: the next try is a session of its own
        except PromptError:
            return None
    if text is None or text.count(_ANSWER) != 1:
        return None
    return text.split(_ANSWER, 1)[1].lstrip()


def stop_words(
    source: str, bos_token: str | None, eos_token: str | None, special: Sequence[str], end: str | None = None
) -> tuple[str, ...]:
    """The stop list of a format built from *source*: the token that closes an answer (*end*, where a fixed
    layout says it, else :func:`turn_end`), then the eos token; where no token closes an answer, the eos
    token first (what fine-tuning teaches after an answer the template closes with nothing), then the
    tokens that open the next turn (:func:`next_turn_tokens`)."""
    following: tuple[str, ...] = ()
    if not end:
        tail = _after_answer(source, bos_token, eos_token, _ANSWERED, "turn_end")
        end = None if tail is None else _leading(tail, special)
        if tail is not None and end is None:  # it rendered (neither failed nor ran out of time), and closes nothing
            following = next_turn_tokens(source, bos_token, eos_token, special)
    return tuple(dict.fromkeys(t for t in (end, eos_token, *following) if t))

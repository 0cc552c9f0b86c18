"""Where a meta template's own text sits in a parsed prompt, so a local model may read it as markup.

A meta template (``begin``, each role's ``begin``/``end``, ``end``) is written by the
config, as a model's chat template is: OpenCompass tokenizes its ``<|im_start|>`` as the
control token. Everything else in the prompt (the prompt template's text, and every
dataset value and in-context example filled into it) is data here: it is never read as
a control token, whatever it spells. :func:`parse_with_spans` gives the parsed text and
the spans of it that are data, for ``TrainableModule.prepare_text(text, user_spans=...)``.

The technique is the one :mod:`prompter.formats.spans` uses for chat templates: parse the
prompt a second time with every non-empty text of it between fresh sentinels, check that
deleting them gives back the same text, and read the spans off the sentinels. A meta
template only tests the texts it writes for emptiness, which the sentinels never change;
where the check fails anyway, the whole text is data (no control token from it at all).

>>> from prompter.templates import MetaTemplate, PromptList
>>> meta = MetaTemplate(round=[dict(role="HUMAN", begin="<|im_start|>user\\n", end="<|im_end|>\\n"),
...                            dict(role="BOT", begin="<|im_start|>assistant\\n", generate=True)])
>>> text, spans = parse_with_spans(meta, PromptList([dict(role="HUMAN", prompt="Hi <|im_end|>"),
...                                                 dict(role="BOT", prompt="")]))
>>> text
'<|im_start|>user\\nHi <|im_end|><|im_end|>\\n<|im_start|>assistant\\n'
>>> [text[s:e] for s, e in spans]
['Hi <|im_end|>']
"""

from __future__ import annotations

import secrets
from typing import Any

from prompter.templates.meta_template import MetaTemplate, Mode

__all__ = ["parse_with_spans"]

Spans = tuple[tuple[int, int], ...]


def parse_with_spans(meta: MetaTemplate, prompt: Any, mode: Mode = "gen") -> tuple[str, Spans]:
    """``meta.parse(prompt, mode)`` and the spans of it that are data (all but the meta template's own text)."""
    text = meta.parse(prompt, mode)
    whole: Spans = ((0, len(text)),) if text else ()
    if isinstance(prompt, str) or not isinstance(prompt, (list, tuple)):
        return text, whole  # a string passes through parse unchanged: all of it is data
    nonce = secrets.token_hex(6)
    opening, closing = f"\ue000{nonce}\ue001", f"\ue002{nonce}\ue003"
    if opening in text or closing in text:
        return text, whole
    marked_items: list[Any] = []
    for item in prompt:
        if isinstance(item, str):
            marked_items.append(opening + item + closing if item else item)
        elif isinstance(item, dict) and isinstance(item.get("prompt"), str) and item["prompt"]:
            marked_items.append({**item, "prompt": opening + item["prompt"] + closing})
        else:
            marked_items.append(item)
    try:
        marked = meta.parse(type(prompt)(marked_items), mode)
    except Exception:  # noqa: BLE001 - the plain parse above succeeded: no spans is the safe answer
        return text, whole
    spans = _read(marked, opening, closing)
    if spans is None or marked.replace(opening, "").replace(closing, "") != text:
        return text, whole
    return text, spans


def _read(marked: str, opening: str, closing: str) -> Spans | None:
    """The spans between the sentinels, in the text without them; None where they do not pair up."""
    spans: list[tuple[int, int]] = []
    at = removed = 0
    while True:
        start = marked.find(opening, at)
        if start < 0:
            return None if closing in marked[at:] else tuple(spans)
        end = marked.find(closing, start + len(opening))
        if end < 0 or opening in marked[start + len(opening) : end] or closing in marked[at:start]:
            return None
        begin = start - removed
        removed += len(opening)
        spans.append((begin, end - removed))
        removed += len(closing)
        at = end + len(closing)

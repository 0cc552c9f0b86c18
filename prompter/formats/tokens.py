"""What :meth:`ModelFormat.from_chat_template` reads of a template's tokens: the special tokens
it writes, and the one that closes an assistant turn (the first stop word).

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

__all__ = ["special_tokens", "turn_end"]

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
    messages = [{"role": "user", "content": "question"}, {"role": "assistant", "content": _ANSWER}]
    context = {"messages": messages, "add_generation_prompt": False, "bos_token": bos_token or "",
               "eos_token": eos_token or ""}  # fmt: skip
    compiled = compile_template(source)
    key = ("turn_end", source, bos_token, eos_token)
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
    tail = text.split(_ANSWER, 1)[1].lstrip()
    return next((t for t in sorted(special, key=len, reverse=True) if t and tail.startswith(t)), None)

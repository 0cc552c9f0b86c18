"""System and assistant messages that close the current turn, in a prompter's own text layout.

A current turn given as messages may end with system or assistant messages after the
user's text (``[{"role": "user", ...}, {"role": "system", ...}]``). They are turns of
their own, not part of the human turn the layout frames ``{input}`` in: like history
and like the messages before the human turn, they render where they stand, in their own
delimiters, after the human turn and before the assistant prompt (the layout's
``{soa}`` after ``{input}``).

>>> from prompter.conversation import Conversation
>>> from prompter.formats.model_format import GENERIC
>>> from prompter.messages import Message
>>> head_tail = split_at_assistant_prompt(InstructionTemplate("{soh}{input}{eoh}{soa}"))
>>> conv = Conversation(current=(Message("user", "q"), Message("system", "S")))
>>> render_trailing(head_tail, conv, GENERIC, trailing_count(conv.current))
'<|Human|>:q<|start_system|>S<|end_system|><|Assistant|>:'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompter.conversation import Conversation
from prompter.instruction import SLOT_PATTERN, InstructionTemplate
from prompter.messages import Message, text_of
from prompter.render.text import render_layout

if TYPE_CHECKING:
    from prompter.formats.model_format import ModelFormat

__all__ = ["render_trailing", "split_at_assistant_prompt", "trailing_count"]

_TOKENS = frozenset(("sos", "eos", "soh", "eoh", "soa", "eoa"))
_HISTORY = InstructionTemplate("{history}")


def split_at_assistant_prompt(layout: InstructionTemplate) -> tuple[InstructionTemplate, InstructionTemplate] | None:
    """The layout cut before the ``{soa}`` that follows its last ``{input}``: (human turn and all
    before it, assistant prompt and all after it). ``None`` when there is no such ``{soa}``, or when
    something other than delimiters follows it (the layout then keeps every message in ``{input}``)."""
    source = layout.source
    matches = list(SLOT_PATTERN.finditer(source))
    last_input = max((k for k, m in enumerate(matches) if m.group(1) == "input"), default=None)
    if last_input is None:
        return None
    for match in matches[last_input + 1 :]:
        if match.group(1) == "soa":
            tail = InstructionTemplate(source[match.start() :])
            if not set(tail.slots) <= _TOKENS:
                return None
            return InstructionTemplate(source[: match.start()]), tail
    return None


def trailing_count(current: tuple[Message, ...]) -> int:
    """How many system and assistant messages follow the current turn's last user message or tool
    result (0 when there is none: a turn of system and assistant messages only opens the turn)."""
    for k in range(len(current) - 1, -1, -1):
        if current[k].role in ("user", "tool"):
            return len(current) - 1 - k
    return 0


def render_trailing(
    head_tail: tuple[InstructionTemplate, InstructionTemplate], conv: Conversation, fmt: ModelFormat, count: int
) -> str:
    """The layout filled with ``conv``, its last ``count`` messages (system and assistant ones)
    rendered as history renders them, between the human turn and the assistant prompt."""
    head, tail = head_tail
    start = len(conv.current) - count
    trailing = conv.current[start:]
    for i, message in enumerate(trailing, start):  # an error names the message where the caller put it
        text_of(message.content, f"{conv.where(i)}.content")
    before = render_layout(head, conv._replace(current=conv.current[:start], label=None), fmt)
    between = render_layout(_HISTORY, Conversation(history=trailing), fmt)
    return before + between + render_layout(tail, conv, fmt)

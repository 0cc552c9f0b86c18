"""The delimited string for a local model.

Two ways to get there:

* with no model bound, the prompter's own *layout* (its declared string
  template, e.g. Chat's ``{sos}{system}{instruction}{tools}{eos}\\n\\n{history}...``)
  is filled with the generic format's delimiters;
* with a model bound, the model's own chat template renders the conversation's
  messages (:meth:`ModelFormat.render_messages`), so the bytes are exactly the
  model's; the messages are handed over as the neutral values they are, not turned
  back into dicts to be validated a second time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from prompter.conversation import Conversation
from prompter.errors import UnsupportedContentError
from prompter.instruction import InstructionTemplate
from prompter.messages import Message, a_part, text_of

if TYPE_CHECKING:
    from prompter.formats.model_format import ModelFormat

__all__ = ["LAYOUT_FIELDS", "LayoutPlan", "conversation_messages", "render_layout", "render_with_model", "tools_block"]

#: The fields a prompter's declared string template may use.
LAYOUT_FIELDS = frozenset(
    ("sos", "eos", "soh", "eoh", "soa", "eoa", "system", "instruction", "tools", "history", "user", "input")
)

TOOLS_HEADER = "### Function-call Tools. \n\n"


def tools_block(conv: Conversation) -> str:
    """``### Function-call Tools. \\n\\n<json>\\n\\n``, or "" without tools."""
    tools = conv.tools
    if tools is None or not len(tools):
        return ""
    return TOOLS_HEADER + tools.json + "\n\n"


def _tool_calls_text(message: Message, fmt: ModelFormat) -> str:
    calls = [
        fmt.tool_call_start
        + json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
        + fmt.tool_call_end
        for call in message.tool_calls
    ]
    return "\n".join(calls)


def _message_text(message: Message, fmt: ModelFormat, where: str, bare_user: bool = False) -> str:
    text = text_of(message.content, where)
    role = message.role
    if role == "user":
        return text if bare_user else fmt.soh + text + fmt.eoh
    if role == "assistant":
        if message.tool_calls:
            calls = _tool_calls_text(message, fmt)
            text = text + "\n" + calls if text else calls
        return fmt.soa + text + fmt.eoa
    if role == "system":
        return fmt.sos + text + fmt.eos
    # a tool result: its own frame where the format has one, else a user turn
    if fmt.soe or fmt.eoe:
        return fmt.soe + text + fmt.eoe
    return text if bare_user else fmt.soh + text + fmt.eoh


def _history_text(conv: Conversation, fmt: ModelFormat) -> str:
    history = conv.history
    if not history:
        return ""
    soh, eoh, soa, eoa = fmt.soh, fmt.eoh, fmt.soa, fmt.eoa
    parts: list[str] = []
    for i, turn in enumerate(history):
        if type(turn) is tuple:
            question, answer = turn  # type: ignore[misc]
            parts += (soh, question, eoh, soa, answer, eoa)
        else:
            parts.append(_message_text(turn, fmt, f"history[{i}].content"))  # type: ignore[arg-type]
    return "".join(parts)


def _input_text(conv: Conversation, fmt: ModelFormat, start: int = 0) -> str:
    if not conv.current:
        return conv.input
    return "\n".join(
        _message_text(m, fmt, f"{conv.where(i)}.content", bare_user=True)
        for i, m in enumerate(conv.current)
        if i >= start
    )


def _lead(conv: Conversation) -> int:
    """How many messages of the current turn come before its human turn, the last run of user messages
    and tool results: the system and assistant messages before it, and any user message or tool result
    one of them stands after, are turns of their own, rendered where they stand as history renders them,
    not part of the human turn the layout frames ``{input}`` in (all of them when there is no such run)."""
    current = conv.current
    end = len(current)
    while end and current[end - 1].role not in ("user", "tool"):
        end -= 1  # messages closing the turn stay after the human turn (see prompters/trailing.py)
    if not end:
        return len(current)
    start = end
    while start and current[start - 1].role in ("user", "tool"):
        start -= 1
    return start


def _history_and_lead_text(conv: Conversation, fmt: ModelFormat) -> str:
    """The history, then the current turn's messages before its human turn in their own
    delimiters, where they stand (a layout with a ``{history}`` field)."""
    lead = "".join(_message_text(m, fmt, f"{conv.where(i)}.content") for i, m in enumerate(conv.current[: _lead(conv)]))
    return _history_text(conv, fmt) + lead


def _input_after_lead_text(conv: Conversation, fmt: ModelFormat) -> str:
    """The current turn from its human turn on (the messages before it are in ``{history}``)."""
    return _input_text(conv, fmt, _lead(conv))


# named functions, not lambdas: a prompter caches LayoutPlans holding these, and
# multiprocessing pickles prompters (lambdas cannot be pickled by reference)
def _system_text(conv: Conversation, fmt: ModelFormat) -> str:
    return conv.system


def _instruction_text(conv: Conversation, fmt: ModelFormat) -> str:
    return conv.instruction


def _user_text(conv: Conversation, fmt: ModelFormat) -> str:
    return conv.user


def _tools_text(conv: Conversation, fmt: ModelFormat) -> str:
    return tools_block(conv)


_FIELD_VALUES: dict[str, Callable[[Conversation, ModelFormat], str]] = {
    "system": _system_text,
    "instruction": _instruction_text,
    "user": _user_text,
    "tools": _tools_text,
    "history": _history_text,
    "input": _input_text,
}


class LayoutPlan:
    """A prompter's layout with everything constant for one prompter and format folded in.

    ``constants`` fills fields that cannot change between calls (the system
    prompt, an instruction without slots, tools locked at construction), so a
    call only computes the fields that remain.
    """

    __slots__ = ("_fields", "_names", "_pieces", "fmt")

    def __init__(self, layout: InstructionTemplate, fmt: ModelFormat, constants: Mapping[str, str]) -> None:
        tokens = {
            "sos": fmt.sos,
            "eos": fmt.eos,
            "soh": fmt.soh,
            "eoh": fmt.eoh,
            "soa": fmt.soa,
            "eoa": fmt.eoa,
        }
        pieces, positions = layout.partial({**tokens, **constants}).pieces
        self._pieces = pieces
        self._names = positions
        values = _FIELD_VALUES
        if {name for _, name in positions} >= {"history", "input"}:
            # the current turn's messages before its human turn stand before it, as history renders them
            values = {**values, "history": _history_and_lead_text, "input": _input_after_lead_text}
        self._fields = tuple((index, values[name]) for index, name in positions)
        self.fmt = fmt

    @property
    def parts(self) -> tuple[list[str], tuple[tuple[int, str], ...]]:
        """The folded pieces (placeholders empty) and ``(index, field)`` for each open field."""
        return self._pieces, self._names

    def render(self, conv: Conversation) -> str:
        """The layout filled with ``conv``."""
        fmt = self.fmt
        pieces = self._pieces.copy()
        for index, value in self._fields:
            pieces[index] = value(conv, fmt)
        text = "".join(pieces)
        if conv.label is not None:
            text += conv.label
        return text


def render_layout(layout: InstructionTemplate, conv: Conversation, fmt: ModelFormat) -> str:
    """Fill a prompter's declared layout with ``conv`` and ``fmt``'s delimiters (no caching)."""
    return LayoutPlan(layout, fmt, {}).render(conv)


def conversation_messages(conv: Conversation) -> list[Message]:
    """The whole conversation as messages, in the order a chat template reads them:
    the system text, the history, the current turn, the label (as in the OpenAI body)."""
    system = conv.system_text
    messages = [Message("system", system)] if system else []
    for turn in conv.history:
        if type(turn) is tuple:
            messages += (Message("user", turn[0]), Message("assistant", turn[1]))
        else:
            messages.append(turn)  # type: ignore[arg-type]
    messages.extend(conv.turn())
    if conv.label is not None:
        messages.append(Message("assistant", conv.label))
    return messages


def render_with_model(conv: Conversation, fmt: ModelFormat) -> str:
    """Exactly what ``fmt``'s chat template renders for the conversation."""
    # the same list object on every call lets the format cache what it derived for these tools
    tools = conv.tools.shared if conv.tools is not None and len(conv.tools) else None
    try:
        return fmt.render_messages(conversation_messages(conv), tools=tools, add_generation_prompt=conv.label is None)
    except UnsupportedContentError:
        # a text-only template met a media part: the format names it by its place in the template's message
        # list (after the system prompt), as an image; the caller gave it at history[i] or input, of its kind
        from prompter.render.common import conversation_messages as located_messages
        from prompter.render.common import media_parts

        first = next(media_parts(located_messages(conv)), None)
        if first is None:
            raise
        where, part = first
        raise UnsupportedContentError(
            f"{where}: {a_part(part.type)} cannot be rendered by the text-only chat template of "
            f"{fmt.name[:60]!r}; send text only, or use a model format whose template takes it (or "
            "format='openai', or another API dialect)"
        ) from None

"""The common call, compiled: str or slot-filling dict input, ``[question, answer]`` history.

Most calls look the same: a str input, or a dict that fills exactly the
slots (plus, for chat, one key carrying the user's message), history as
pairs, nothing else. For those, building a
:class:`~prompter.conversation.Conversation` and walking the general renderers
costs more than the rendering itself. A :class:`FastPath` is compiled once per
prompter: the layout plan with the instruction templates spliced in, so the
whole prompt is one list of pieces filled in one pass. It validates as it goes
and returns ``None`` the moment anything is unusual, so the general path
(which raises the precise error) takes over. ``tests/test_fastpath.py`` checks
that both paths give identical results.
"""

from __future__ import annotations

import json
from typing import Any

from prompter.instruction import MAX_FILLED_CHARS, InstructionTemplate
from prompter.render.text import LayoutPlan
from prompter.strict_json import NotJSONError, strict_loads

__all__ = ["FastPath"]

_SPLICED = ("instruction", "user")
_FILLED = ("history", "input")


def _plain_keys(input: dict[Any, Any]) -> bool:
    """Whether every key is an exact str: only then can a lookup not reach a caller's ``__eq__``."""
    for key in input:
        if type(key) is not str:
            return False
    return True


def _joined(pieces: list[str], repeats: bool) -> str | None:
    """The pieces joined, or None (the general path names the slot at fault) for a text longer than
    :data:`~prompter.instruction.MAX_FILLED_CHARS` where a value fills several places (*repeats*): a slot
    named many times could ask for gigabytes (values that fill one place each make no more than they are)."""
    if repeats and sum(map(len, pieces)) > MAX_FILLED_CHARS:
        return None
    return "".join(pieces)


def _strict_json(text: str) -> bool:
    """Whether ``text`` is JSON as an API reads it (no NaN or Infinity)."""
    if "NaN" not in text and "Infinity" not in text:
        return True
    try:
        strict_loads(text)
    except NotJSONError:
        return False
    return True


class FastPath:
    """Renders ``(input, history)`` for one prompter, or returns ``None`` to decline."""

    __slots__ = (
        "_free_input",
        "_history_at",
        "_history_ok",
        "_input_at",
        "_instruction",
        "_openai_ok",
        "_pieces",
        "_repeats",
        "_slot_at",
        "_slots",
        "_system",
        "_system_text",
        "_tokens",
        "_tools",
        "_user",
    )

    def __init__(
        self,
        plan: LayoutPlan,
        instruction: InstructionTemplate,
        user: InstructionTemplate,
        system: str,
        tools: list[dict[str, Any]] | None,
        free_input: bool,
        history_ok: bool,
    ) -> None:
        layout_pieces, fields = plan.parts
        open_at = {index: name for index, name in fields}
        pieces: list[str] = []
        slot_at: list[tuple[int, str]] = []
        filled_at: dict[str, tuple[int, ...]] = {}
        for index, piece in enumerate(layout_pieces):
            name = open_at.get(index)
            if name in _SPLICED:
                inner, positions = (instruction if name == "instruction" else user).pieces
                slot_at += [(len(pieces) + at, slot) for at, slot in positions]
                pieces += inner
            else:
                if name is not None:  # a field the layout names twice is filled at every place, as the plan fills it
                    filled_at[name] = (*filled_at.get(name, ()), len(pieces))
                pieces.append(piece)
        self._pieces = pieces
        self._slot_at = tuple(slot_at)
        names = [name for _, name in slot_at]
        self._repeats = len(names) > len(set(names)) or any(len(at) > 1 for at in filled_at.values())
        self._slots = frozenset(instruction.slots + user.slots)
        self._history_at = filled_at.get("history", ())
        self._input_at = filled_at.get("input", ())
        fmt = plan.fmt
        self._tokens = (fmt.soh, fmt.eoh, fmt.soa, fmt.eoa)
        self._instruction = instruction
        self._user = user
        self._system = system
        # the system message of the OpenAI body, when nothing in it varies
        static = None if instruction.slots else "\n".join(part for part in (system, instruction.source) if part)
        self._system_text = static
        self._tools = tools
        # an API body is JSON: locked tools holding NaN or Infinity (which the text of a local model may
        # carry) leave the OpenAI body to the general path, which refuses them with a ToolsError
        self._openai_ok = not tools or _strict_json(json.dumps(tools, ensure_ascii=False))
        self._free_input = free_input
        self._history_ok = history_ok and bool(self._history_at)

    @staticmethod
    def usable(plan: LayoutPlan) -> bool:
        """Whether ``plan`` leaves only the instruction, the user turn, history and input to fill."""
        return {name for _, name in plan.parts[1]} <= {*_SPLICED, *_FILLED}

    def _values(self, input: Any, history: object) -> tuple[dict[str, str], str] | None:
        """(slot values, the user's message), or None to decline."""
        if history is not None and not self._history_ok:
            return None
        slots = self._slots
        if type(input) is str:
            if not slots:
                return ({}, input) if self._free_input else None
            if len(slots) == 1:
                return {name: input for name in slots}, ""
            return None
        if type(input) is not dict or not _plain_keys(input):
            return None
        extra = len(input) - len(slots)
        if extra == 0:
            text = ""
        elif extra == 1 and self._free_input and "role" not in input:
            free = [key for key in input if key not in slots]
            if len(free) != 1 or type(free[0]) is not str:
                return None
            text = input[free[0]]
            if type(text) is not str:
                return None
        else:
            return None
        values = {}
        for name in slots:
            value = input.get(name)
            if type(value) is not str:
                return None
            values[name] = value
        return values, text

    def text(self, input: Any, history: list[Any] | None) -> str | None:
        """The delimited string, or None to decline."""
        pieces = self._pieces.copy()
        if type(input) is dict and len(input) == len(self._slots) and history is None and _plain_keys(input):
            # the hottest case (a dict filling every slot) fills the pieces directly
            for index, name in self._slot_at:
                value = input.get(name)
                if type(value) is not str:
                    return None
                pieces[index] = value
            for index in self._input_at:
                pieces[index] = ""
            return _joined(pieces, self._repeats)
        found = self._values(input, history)
        if found is None:
            return None
        values, text = found
        for index, name in self._slot_at:
            pieces[index] = values[name]
        if history:
            soh, eoh, soa, eoa = self._tokens
            parts: list[str] = []
            for item in history:
                if type(item) is list and len(item) == 2:
                    question, answer = item
                    if type(question) is str and type(answer) is str:
                        parts += (soh, question, eoh, soa, answer, eoa)
                        continue
                return None
            earlier = "".join(parts)
            for index in self._history_at:
                pieces[index] = earlier
        if not self._input_at and text:
            return None
        for index in self._input_at:
            pieces[index] = text
        return _joined(pieces, self._repeats)

    def openai(self, input: Any, history: list[Any] | None) -> dict[str, Any] | None:
        """The OpenAI body, or None to decline."""
        if not self._openai_ok:
            return None
        found = self._values(input, history)
        if found is None:
            return None
        values, text = found
        instruction, user = self._instruction, self._user
        system = self._system_text
        if system is None:  # the instruction has slots: join the system prompt and its filled text now
            system = "\n".join(part for part in (self._system, instruction.fill(values)) if part)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if history:
            for item in history:
                if type(item) is list and len(item) == 2:
                    question, answer = item
                    if type(question) is str and type(answer) is str:
                        messages += ({"role": "user", "content": question}, {"role": "assistant", "content": answer})
                        continue
                return None
        messages.append({"role": "user", "content": (user.fill(values) if user.slots else user.source) + text})
        if self._tools:
            return {"messages": messages, "tools": list(self._tools)}
        return {"messages": messages}

"""The common call, compiled: a str input with ``[question, answer]`` history.

Most calls in a chat application look the same: a str input for a prompter
without slots, history as pairs, nothing else. For those, building a
:class:`~prompter.conversation.Conversation` and walking the general renderers
costs more than the rendering itself. A :class:`FastPath` is compiled once per
prompter from the same layout plan and the same OpenAI system text, validates
the pairs as it goes, and returns ``None`` the moment anything is unusual, so
the general path (which raises the precise error) takes over.
``tests/test_fastpath.py`` checks that both paths give identical results.
"""

from __future__ import annotations

from typing import Any

from prompter.render.text import LayoutPlan

__all__ = ["FastPath"]


class FastPath:
    """Renders ``(input, history)`` for one prompter, or returns ``None`` to decline."""

    __slots__ = ("_history_at", "_input_at", "_pieces", "_system", "_tokens", "_tools", "_user")

    def __init__(self, plan: LayoutPlan, system_text: str, user: str, tools: list[dict[str, Any]] | None) -> None:
        pieces, fields = plan.parts
        names = {name: index for index, name in fields}
        self._pieces = pieces
        self._history_at = names.get("history")
        self._input_at = names["input"]
        fmt = plan.fmt
        self._tokens = (fmt.soh, fmt.eoh, fmt.soa, fmt.eoa)
        self._system = system_text
        self._user = user
        self._tools = tools

    @staticmethod
    def usable(plan: LayoutPlan) -> bool:
        """Whether ``plan`` leaves only ``history`` and ``input`` to fill."""
        names = {name for _, name in plan.parts[1]}
        return "input" in names and names <= {"history", "input"}

    def text(self, input: str, history: list[Any] | None) -> str | None:
        """The delimited string, or None when ``history`` is not all ``[str, str]`` lists."""
        pieces = self._pieces.copy()
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
            if self._history_at is None:
                return None
            pieces[self._history_at] = "".join(parts)
        pieces[self._input_at] = input
        return "".join(pieces)

    def openai(self, input: str, history: list[Any] | None) -> dict[str, Any] | None:
        """The OpenAI body, or None when ``history`` is not all ``[str, str]`` lists."""
        system = self._system
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if history:
            for item in history:
                if type(item) is list and len(item) == 2:
                    question, answer = item
                    if type(question) is str and type(answer) is str:
                        messages += ({"role": "user", "content": question}, {"role": "assistant", "content": answer})
                        continue
                return None
        messages.append({"role": "user", "content": self._user + input})
        if self._tools:
            return {"messages": messages, "tools": list(self._tools)}
        return {"messages": messages}

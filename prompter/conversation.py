"""The neutral conversation a prompter builds and every renderer reads."""

from __future__ import annotations

from typing import NamedTuple

from prompter.messages import ContentPart, Message, Turn
from prompter.tools import ToolSet

__all__ = ["Conversation"]


class Conversation(NamedTuple):
    """One request, before any dialect: what the model should see, in order.

    >>> Conversation(system="Be brief.", input="hi").system_text
    'Be brief.'
    """

    system: str = ""
    """The system prompt ("" when disabled)."""
    instruction: str = ""
    """The system-level instruction, slots filled."""
    tools: ToolSet | None = None
    """The tools offered to the model."""
    history: tuple[Turn, ...] = ()
    """Earlier turns: ``(question, answer)`` pairs or messages."""
    user: str = ""
    """The user-level instruction, slots filled; it precedes the input in the user turn."""
    input: str = ""
    """The user's own text for this turn."""
    current: tuple[Message, ...] = ()
    """The current turn given as messages (a tool result, a multimodal message)."""
    label: str | None = None
    """The expected answer (for training data), appended after the prompt."""

    def where(self, i: int) -> str:
        """Where the caller put current message *i*: ``input[i]``, or ``input`` when it gave one message."""
        return f"input[{i}]" if len(self.current) > 1 else "input"

    @property
    def system_text(self) -> str:
        """The system message of chat APIs: system prompt and instruction, newline-joined."""
        if self.system and self.instruction:
            return self.system + "\n" + self.instruction
        return self.system or self.instruction

    def turn(self) -> tuple[Message, ...]:
        """The current turn as messages, with the user-level instruction in place.

        The instruction precedes the user's own text; when the turn has no user
        message first (a tool result fed back), it follows the turn, so tool
        results still come right after the call that asked for them.
        """
        if not self.current:
            return (Message("user", self.user + self.input),)
        if not self.user:
            return self.current
        first = self.current[0]
        if first.role == "user":
            if isinstance(first.content, str):
                content: str | tuple[ContentPart, ...] = self.user + first.content
            else:
                content = (ContentPart("text", self.user), *first.content)
            return (first._replace(content=content), *self.current[1:])
        return (*self.current, Message("user", self.user))

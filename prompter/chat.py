"""ChatPrompter: multi-turn chat with history, tools and a system prompt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prompter.base import PrompterBase

__all__ = ["ChatPrompter"]


class ChatPrompter(PrompterBase):
    """A chat prompt: system prompt + instruction, tools, history and the user's turn.

    With no slot in the instruction a str input is the user's message; with
    one slot, it fills that slot.

    >>> p = ChatPrompter("You answer questions about {topic}.", system="")
    >>> p.generate_prompt({"topic": "cats", "input": "Why purr?"}, return_dict=True)["messages"][1]
    {'role': 'user', 'content': 'Why purr?'}
    """

    template = "{sos}{system}{instruction}{tools}{eos}\n\n{history}\n{soh}\n{user}{input}\n{eoh}{soa}\n"
    instruction_template = "{instruction}\n{extra_keys}\n"

    def __init__(
        self,
        instruction: str | Mapping[str, str] | None = None,
        extra_keys: str | list[str] | None = None,
        show: bool = False,
        tools: list[dict[str, Any]] | None = None,
        history: list[Any] | None = None,
        *,
        system: str | None = None,
        enable_system: bool = True,
        extro_keys: str | list[str] | None = None,
    ) -> None:
        super().__init__(
            instruction,
            extra_keys,
            show,
            tools,
            history,
            system=system,
            enable_system=enable_system,
            extro_keys=extro_keys,
        )

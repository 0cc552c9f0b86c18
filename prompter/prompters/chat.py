"""ChatPrompter: multi-turn chat with history, tools and a system prompt."""

from __future__ import annotations

from prompter.prompters.base import PrompterBase

__all__ = ["ChatPrompter"]


class ChatPrompter(PrompterBase):
    """A chat prompt: system prompt + instruction, tools, history and the user's turn.

    With no slot in the instruction a str input is the user's message; with
    one slot, it fills that slot.

    >>> p = ChatPrompter("You answer questions about {topic}.", system="")
    >>> messages = p.generate_prompt({"topic": "cats", "input": "Why purr?"}, return_dict=True)["messages"]
    >>> messages[1]
    {'role': 'user', 'content': 'Why purr?'}
    """

    template = "{sos}{system}{instruction}{tools}{eos}\n\n{history}\n{soh}\n{user}{input}\n{eoh}{soa}\n"
    instruction_template = "{instruction}\n{extra_keys}\n"
    dict_instruction_template = "{instruction}"  # a dict instruction is laid out as LazyLLM 1.4.0 lays it out

"""AlpacaPrompter: the single-turn Alpaca instruction format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prompter.prompters.base import PrompterBase

__all__ = ["ALPACA_PREAMBLE", "AlpacaPrompter"]

ALPACA_PREAMBLE = (
    "Below is an instruction that describes a task, paired with extra messages such as input that provides "
    "further context if possible. Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n"
)


class AlpacaPrompter(PrompterBase):
    """An Alpaca-style prompt: no history, every input key is a slot or an extra key.

    With no slot and no extra key, the input goes into an ``input`` extra key.

    >>> AlpacaPrompter("Add the numbers {numbers}.", system="").generate_prompt("1 2")[-16:]
    '\\n\\n### Response:\\n'
    """

    template = "{system}\n{instruction}\n{tools}\n{user}### Response:\n"
    instruction_template = ALPACA_PREAMBLE + "{instruction}\n\n{extra_keys}"
    dict_instruction_template = ALPACA_PREAMBLE + "{instruction}"  # the preamble stays with a dict instruction
    dict_extra_keys_separator = "\n\n"
    allows_history = False
    allows_free_input = False
    implicit_input_key = "input"
    response_split = "### Response:\n"

    def __init__(
        self,
        instruction: str | Mapping[str, str] | None = None,
        extra_keys: str | list[str] | None = None,
        show: bool = False,
        tools: list[dict[str, Any]] | None = None,
        *,
        system: str | None = None,
        extro_keys: str | list[str] | None = None,
    ) -> None:
        super().__init__(instruction, extra_keys, show, tools, None, system=system, extro_keys=extro_keys)

"""prompter: exact, fast and safe prompts for local chat models and online LLM APIs.

>>> from prompter import ChatPrompter
>>> ChatPrompter("Be brief.", system="").generate_prompt("hi", return_dict=True)
{'messages': [{'role': 'system', 'content': 'Be brief.\\n\\n'}, {'role': 'user', 'content': 'hi'}]}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prompter.errors import PromptError
from prompter.formats.model_format import ModelFormat
from prompter.prompters.alpaca import AlpacaPrompter
from prompter.prompters.base import PrompterBase
from prompter.prompters.chat import ChatPrompter
from prompter.prompters.empty import EmptyPrompter

if TYPE_CHECKING:
    from prompter.prompters.join import join
    from prompter.templates import MetaTemplate, MMPromptTemplate, MultiTurnPromptTemplate, PromptList, PromptTemplate

__all__ = [
    "AlpacaPrompter",
    "ChatPrompter",
    "EmptyPrompter",
    "MMPromptTemplate",
    "MetaTemplate",
    "ModelFormat",
    "MultiTurnPromptTemplate",
    "PromptError",
    "PromptList",
    "PromptTemplate",
    "PrompterBase",
    "join",
]

__version__ = "0.1.0"

_EVALUATION = frozenset(("MMPromptTemplate", "MetaTemplate", "MultiTurnPromptTemplate", "PromptList", "PromptTemplate"))
# LazyLLM exports its modules beside its prompters; here they live in prompter.modules (the I/O side)
_IN_MODULES = frozenset(("OnlineChatModule", "TrainableModule"))


def __getattr__(name: str) -> Any:
    # the evaluation layer loads on first use, keeping `import prompter` small
    if name in _EVALUATION:
        from prompter import templates

        value = getattr(templates, name)
        globals()[name] = value
        return value
    if name == "join":
        from prompter.prompters.join import join

        globals()["join"] = join
        return join
    if name in _IN_MODULES:
        # ImportError, not AttributeError: for `from prompter import X` Python replaces an AttributeError
        # with its own "cannot import name" message, and this one would be lost
        raise ImportError(f"{name} is not in prompter itself: from prompter.modules import {name}", name="prompter")
    raise AttributeError(f"module 'prompter' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""prompter: exact, fast and safe prompts for local chat models and online LLM APIs.

>>> from prompter import ChatPrompter
>>> ChatPrompter("Be brief.", system="").generate_prompt("hi", return_dict=True)
{'messages': [{'role': 'system', 'content': 'Be brief.\\n\\n'}, {'role': 'user', 'content': 'hi'}]}
"""

from prompter.alpaca import AlpacaPrompter
from prompter.base import PrompterBase
from prompter.chat import ChatPrompter
from prompter.empty import EmptyPrompter
from prompter.errors import PromptError
from prompter.model_format import ModelFormat

__all__ = [
    "AlpacaPrompter",
    "ChatPrompter",
    "EmptyPrompter",
    "ModelFormat",
    "PromptError",
    "PrompterBase",
]

__version__ = "0.1.0"

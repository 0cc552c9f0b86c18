"""Prompters: input, history and tools in, one neutral ``Conversation`` out, rendered by a dialect.

``PrompterBase`` does the work; ``AlpacaPrompter``, ``ChatPrompter`` and
``EmptyPrompter`` declare their layouts; ``fastpath`` compiles the common call.
"""

from prompter.prompters.alpaca import AlpacaPrompter
from prompter.prompters.base import PrompterBase
from prompter.prompters.chat import ChatPrompter
from prompter.prompters.empty import EmptyPrompter

__all__ = ["AlpacaPrompter", "ChatPrompter", "EmptyPrompter", "PrompterBase"]

"""EmptyPrompter: the input passes through untouched."""

from __future__ import annotations

from typing import Any

from prompter.conversation import Conversation
from prompter.errors import PromptValueError
from prompter.prompters.base import PrompterBase

__all__ = ["EmptyPrompter"]


class EmptyPrompter(PrompterBase):
    """No system prompt, no instruction: the input is the prompt.

    As text with no model bound, a str input comes back as it is; with a model
    format or an API dialect it becomes the single user message.

    >>> EmptyPrompter().generate_prompt("hi")
    'hi'
    >>> EmptyPrompter().generate_prompt("hi", format="openai")
    {'messages': [{'role': 'user', 'content': 'hi'}]}
    """

    template = "{system}{instruction}{tools}{history}{user}{input}"  # unused: text is the input itself
    uses_system = False

    def __init__(self, *, show: bool = False, tools: list[dict[str, Any]] | None = None) -> None:
        super().__init__(None, None, show, tools)

    def _render_text(self, conv: Conversation, fmt: Any) -> str:
        if fmt is None or fmt.chat_template is None and fmt.name == "generic":
            if conv.history or conv.tools is not None or conv.current:
                raise PromptValueError(
                    "EmptyPrompter's text output is the input itself; history, tools and message input "
                    "need a model_format or an API format such as format='openai'"
                )
            return conv.input + (conv.label or "")
        return super()._render_text(conv, fmt)

"""A model's chat format: frozen data, plus the one renderer that speaks it.

>>> fmt = ModelFormat.get("Qwen/Qwen2.5-7B-Instruct")
>>> fmt.name
'qwen2.5'
>>> print(fmt.render([{"role": "user", "content": "hi"}]))
<|im_start|>system
You are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>
<|im_start|>user
hi<|im_end|>
<|im_start|>assistant
<BLANKLINE>

A format that carries its model's ``chat_template`` renders exactly what that
template renders (as ``transformers``' ``apply_chat_template(tokenize=False)``
would), through fixed strings when they were derived and verified for the
conversation's shape, through the sandboxed template otherwise.  A format without
a template renders its fixed strings::

    bos + sos + system + eos + (soh + user + eoh + soa + assistant + eoa)... + generation_prompt

Variants are made with :func:`dataclasses.replace`; to change the delimiters of a
format that has a template, also set ``chat_template=None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from prompter.template_derive import Layout

__all__ = ["GENERIC", "ModelFormat", "Rendered"]


class Rendered(NamedTuple):
    """A rendered prompt and where the message content is in it."""

    text: str
    """The prompt, equal to what :meth:`ModelFormat.render` returns."""
    spans: tuple[tuple[int, int], ...]
    """``(start, end)`` offsets of every piece of ``text`` that came from message content
    (system, user, assistant, tool results, tool-call names and arguments). Everything
    outside the spans is the template's markup."""


@dataclass(frozen=True)
class ModelFormat:
    """The strings a model's chat format is made of, and its chat template."""

    name: str = "custom"
    """The family name (``"qwen2.5"``, ``"llama-3"``) or ``"custom"``."""
    sos: str = ""
    """Start of a system message."""
    eos: str = ""
    """End of a system message."""
    soh: str = ""
    """Start of a user ("human") message."""
    eoh: str = ""
    """End of a user message."""
    soa: str = ""
    """Start of an assistant message in the history."""
    eoa: str = ""
    """End of an assistant message."""
    soe: str = ""
    """Start of a tool result ("environment") message; empty: framed as a user message."""
    eoe: str = ""
    """End of a tool result message."""
    generation_prompt: str = ""
    """What is appended to ask the model for its answer (not always ``soa``)."""
    bos: str = ""
    """Written once at the very start of the prompt (a BOS token, or empty)."""
    stop_words: tuple[str, ...] = ()
    """Strings at which generation stops."""
    tool_call_start: str = ""
    """Written before each tool call the assistant makes."""
    tool_call_end: str = ""
    """Written after each tool call the assistant makes."""
    default_system: str | None = None
    """The system prompt the model's template uses when the conversation has none."""
    special_tokens: tuple[str, ...] = ()
    """Delimiters that the model's tokenizer treats as special tokens."""
    chat_template: str | None = None
    """The model's jinja chat template; when set, it defines the rendered bytes."""
    bos_token: str | None = None
    """The tokenizer's BOS token, given to the template as ``bos_token``."""
    eos_token: str | None = None
    """The tokenizer's EOS token, given to the template as ``eos_token``."""
    time_budget: float = 1.0
    """Seconds a chat template may run per render before TemplateTimeoutError."""

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def generic(cls) -> ModelFormat:
        """The format prompter uses when no model is bound (see :data:`GENERIC`)."""
        return GENERIC

    @classmethod
    def get(cls, name: str) -> ModelFormat:
        """The registered format of a family (``"qwen2.5"``) or a Hugging Face model id.

        Raises :class:`~prompter.errors.UnknownModelFormatError` listing close matches.
        """
        from prompter.format_registry import format_for

        return format_for(name)

    @classmethod
    def families(cls) -> tuple[str, ...]:
        """The names of every registered family."""
        from prompter.format_registry import FAMILIES

        return tuple(sorted(FAMILIES))

    @classmethod
    def from_chat_template(
        cls,
        source: str,
        bos_token: str | None = None,
        eos_token: str | None = None,
        name: str | None = None,
    ) -> ModelFormat:
        """A format rendered by ``source``, with fixed strings derived where they reproduce it.

        Raises :class:`~prompter.errors.TemplateError` when ``source`` does not compile.
        """
        from prompter.chat_template import compile_template
        from prompter.template_derive import derive_layout

        compile_template(source)
        layout = derive_layout(source, bos_token, eos_token, None)
        special = _special_tokens(source, bos_token, eos_token)
        if layout is None:
            stops = tuple(dict.fromkeys(t for t in (eos_token,) if t))
            return cls(
                name=name or "custom",
                chat_template=source,
                bos_token=bos_token,
                eos_token=eos_token,
                special_tokens=special,
                stop_words=stops,
            )
        end = layout.eoa.strip()
        stops = tuple(dict.fromkeys(t for t in (end, eos_token) if t))
        return cls(
            name=name or "custom",
            sos=layout.sos,
            eos=layout.eos,
            soh=layout.soh,
            eoh=layout.eoh,
            soa=layout.soa,
            eoa=layout.eoa,
            generation_prompt=layout.generation_prompt,
            bos=layout.bos,
            stop_words=stops,
            default_system=layout.default_system,
            special_tokens=special,
            chat_template=source,
            bos_token=bos_token,
            eos_token=eos_token,
        )

    # -- rendering -------------------------------------------------------------------------------

    def render(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        add_generation_prompt: bool = True,
        **kwargs: Any,
    ) -> str:
        """The prompt for OpenAI-style ``messages`` (and ``tools``), exactly as the model's template has it.

        ``kwargs`` reach the template as variables (``enable_thinking``, ``date_string``).
        """
        if not kwargs and self.chat_template is not None:
            layout = (_FAST[0] if _FAST else _load_fast())(self, tools)
            if layout is not None:
                text = layout.render(messages, add_generation_prompt)
                if text is not None:
                    return text
        return self._render(messages, tools, add_generation_prompt, kwargs, spans=False).text

    def render_with_spans(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        add_generation_prompt: bool = True,
        **kwargs: Any,
    ) -> Rendered:
        """Like :meth:`render`, plus the offsets of message content in the text.

        Raises :class:`~prompter.errors.TemplateError` where the template transforms
        content so that its place in the output cannot be established.
        """
        return self._render(messages, tools, add_generation_prompt, kwargs, spans=True)

    def _render(
        self, messages: Any, tools: Any, add_generation_prompt: bool, kwargs: dict[str, Any], *, spans: bool
    ) -> Rendered:
        from prompter.format_fast import render_full

        return render_full(self, messages, tools, add_generation_prompt, kwargs, spans)


GENERIC = ModelFormat(
    name="generic",
    sos="<|start_system|>",
    eos="<|end_system|>",
    soh="<|Human|>:",
    soa="<|Assistant|>:",
)
"""The delimiters prompter's own layout uses when no model is bound."""

_FAST: list[Callable[[ModelFormat, Any], Layout | None]] = []


def _load_fast() -> Callable[[ModelFormat, Any], Layout | None]:
    """Import the rendering machinery on first use, so ``import prompter`` stays light."""
    from prompter.format_fast import fast_layout

    _FAST.append(fast_layout)
    return fast_layout


_TOKEN = re.compile(
    r"<\|[^|<>\s]{1,40}\|>|<｜[^｜<>]{1,40}｜>|\[/?[A-Z_]{3,30}\]|<</?SYS>>|<[a-z_]{3,20}>|</[a-z_]{3,20}>"
)


def _special_tokens(source: str, bos_token: str | None, eos_token: str | None) -> tuple[str, ...]:
    found = [t for t in (bos_token, eos_token) if t]
    found += _TOKEN.findall(source)
    return tuple(dict.fromkeys(found))

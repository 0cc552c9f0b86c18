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

A template that rejects a leading system message (Gemma 2 raises "System role
not supported", Mistral v0.1 "Conversation roles must alternate") or renders
without it (Mistral v0.3) gets the system text folded into the first user
message: ``system + "\\n\\n" + user`` (just the
user's text when the system text is empty; a user message of its own when no user
message follows the system message).  A conversation the template accepts is
rendered unchanged.

Variants are made with :func:`dataclasses.replace`; to change the delimiters of a
format that has a template, also set ``chat_template=None``.  Every field is
type-checked on construction (:class:`~prompter.errors.PromptTypeError` naming it);
a registered model's name with no template and no delimiters (``ModelFormat("qwen2.5")``,
which would write no chat markup at all) is a :class:`~prompter.errors.DeclarationError`
naming ``ModelFormat.get``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from prompter.errors import DeclarationError, PromptTypeError, UnknownModelFormatError
from prompter.formats.hot import HOT
from prompter.formats.registry import FAMILIES, family_fields, family_of
from prompter.formats.rendered import Rendered
from prompter.messages import Message

__all__ = ["GENERIC", "ModelFormat", "Rendered"]


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
    """Delimiters the model's tokenizer has as tokens of their own (its added tokens), not tags it reads as text."""
    chat_template: str | None = None
    """The model's jinja chat template; when set, it defines the rendered bytes."""
    bos_token: str | None = None
    """The tokenizer's BOS token, given to the template as ``bos_token``."""
    eos_token: str | None = None
    """The tokenizer's EOS token, given to the template as ``eos_token``."""
    time_budget: float = 1.0
    """Seconds a chat template may run per render before TemplateTimeoutError."""
    tool_chat_template: str | None = None
    """The template for conversations given ``tools`` (transformers' named ``tool_use`` template);
    ``chat_template`` renders the others. None: ``chat_template`` renders both."""

    def __post_init__(self) -> None:
        for field in _STR_FIELDS:
            value = getattr(self, field)
            if type(value) is not str:
                raise PromptTypeError(f"ModelFormat.{field}: expected str, got {type(value).__name__}")
        for field in _OPTIONAL_STR_FIELDS:
            value = getattr(self, field)
            if value is not None and type(value) is not str:
                raise PromptTypeError(f"ModelFormat.{field}: expected str or None, got {type(value).__name__}")
        for field in ("stop_words", "special_tokens"):
            value = getattr(self, field)
            if not isinstance(value, (tuple, list)):
                raise PromptTypeError(f"ModelFormat.{field}: expected a tuple of str, got {type(value).__name__}")
            for i, item in enumerate(value):
                if type(item) is not str:
                    raise PromptTypeError(f"ModelFormat.{field}[{i}]: expected str, got {type(item).__name__}")
            if type(value) is not tuple:
                object.__setattr__(self, field, tuple(value))
        budget = self.time_budget
        if isinstance(budget, bool) or not isinstance(budget, (int, float)):
            raise PromptTypeError(f"ModelFormat.time_budget: expected seconds as a number, got {type(budget).__name__}")
        if not budget > 0:
            raise DeclarationError(f"ModelFormat.time_budget: expected a positive number of seconds, got {budget!r}")
        if self.chat_template is None and self.tool_chat_template is None:
            _refuse_a_name_alone(self)

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
        return _registered(family_of(name))

    @classmethod
    def families(cls) -> tuple[str, ...]:
        """The names of every registered family."""
        return tuple(sorted(FAMILIES))

    @classmethod
    def from_chat_template(
        cls,
        source: str | Mapping[str, str] | Sequence[Mapping[str, str]],
        bos_token: str | None = None,
        eos_token: str | None = None,
        name: str | None = None,
    ) -> ModelFormat:
        """A format rendered by ``source``, with fixed strings derived where they reproduce it.

        ``source`` may also be a tokenizer's named templates (``{"default": ..., "tool_use": ...}``, as
        ``tokenizer.chat_template`` is for such models, or the list ``tokenizer_config.json`` stores them
        as): ``tool_use`` renders with tools, ``default`` without.

        Raises :class:`~prompter.errors.TemplateError` when ``source`` is not a str (or such a
        mapping of str) or does not compile, :class:`~prompter.errors.PromptTypeError` when a token
        or the name is not a str or None. A str subclass is read as its exact text.
        """
        from prompter.formats.budget import ProbeTimedOut
        from prompter.formats.derive import derive_layout
        from prompter.formats.sandbox import compile_template
        from prompter.formats.sources import listed_templates, named_templates, optional_text, template_text
        from prompter.formats.tokens import special_tokens, stop_words

        bos_token = optional_text(bos_token, "ModelFormat.from_chat_template: bos_token")
        eos_token = optional_text(eos_token, "ModelFormat.from_chat_template: eos_token")
        name = optional_text(name, "ModelFormat.from_chat_template: name")
        if isinstance(source, (list, tuple)):
            source = listed_templates(source)
        if isinstance(source, Mapping):
            templates = named_templates(source)
            tool_source = templates.get("tool_use")
            if tool_source is not None:
                compile_template(tool_source)
            fmt = cls.from_chat_template(templates["default"], bos_token, eos_token, name)
            if tool_source is None:
                return fmt
            special = tuple(dict.fromkeys((*fmt.special_tokens, *special_tokens(tool_source, None, None))))
            return dataclasses.replace(fmt, tool_chat_template=tool_source, special_tokens=special)
        source = template_text(source)
        compile_template(source)
        try:
            layout = derive_layout(source, bos_token, eos_token, None)
        except ProbeTimedOut:  # a busy moment: it renders with its template (its renders learn later)
            layout = None
        special = special_tokens(source, bos_token, eos_token)
        if layout is None:
            stops = stop_words(source, bos_token, eos_token, special)
            return cls(
                name=name or "custom",
                chat_template=source,
                bos_token=bos_token,
                eos_token=eos_token,
                special_tokens=special,
                stop_words=stops,
            )
        stops = stop_words(source, bos_token, eos_token, special, layout.eoa.strip() or None)
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
        *,
        documents: Sequence[Any] | None = None,
        continue_final_message: bool | str = False,
        **kwargs: Any,
    ) -> str:
        """The prompt for OpenAI-style ``messages`` (and ``tools``), exactly as the model's template has it.

        ``kwargs`` reach the template as variables (``enable_thinking``, ``date_string``).
        ``documents`` and ``continue_final_message`` mean what they mean to transformers'
        ``apply_chat_template``: documents reach a template that reads them (any other
        gets them as a text block where the tools block goes); ``continue_final_message``
        ends the prompt right after the final message's text, with no generation prompt
        (a field's name, such as ``"reasoning_content"``, continues that field instead).
        """
        empty = isinstance(messages, (list, tuple)) and not messages  # refused below, as transformers does
        if not kwargs and documents is None and not continue_final_message and not empty:
            if tools is None:
                hot = HOT.get(id(self))
                if hot is not None and hot[0] is self:  # the fast paths that rendered this format before
                    text = hot[1](messages, add_generation_prompt)
                    if text is not None:
                        return text
            if self.chat_template is not None or self.tool_chat_template is not None:
                text = (_FAST[0] if _FAST else _load_fast())(self, messages, tools, add_generation_prompt)
                if text is not None:
                    return text
        return self._render(
            messages, tools, add_generation_prompt, kwargs, False, documents, continue_final_message
        ).text

    def render_messages(
        self,
        messages: Sequence[Message],
        tools: Sequence[Any] | None = None,
        add_generation_prompt: bool = True,
    ) -> str:
        """Like :meth:`render`, for neutral :class:`~prompter.messages.Message` values.

        A prompter's conversation is validated once, when it is built; this reads its
        messages as they are, without turning them back into dicts to validate again.
        """
        return (_NEUTRAL[0] if _NEUTRAL else _load_neutral())(self, messages, tools, add_generation_prompt)

    def takes_string_arguments(self, tools: Sequence[Any] | None = None) -> bool:
        """Whether the template (the one that renders with ``tools``) takes tool-call ``arguments``
        only as JSON text (DeepSeek-R1 concatenates them); :meth:`render` then passes a caller's
        string through verbatim, so callers that pre-parse arguments should not, for this format."""
        from prompter.formats.fixed import template_source
        from prompter.formats.traits import traits_of

        source = template_source(self, tools)
        return source is not None and traits_of(source, self.bos_token, self.eos_token).string_arguments

    def render_with_spans(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        add_generation_prompt: bool = True,
        *,
        documents: Sequence[Any] | None = None,
        continue_final_message: bool | str = False,
        **kwargs: Any,
    ) -> Rendered:
        """Like :meth:`render`, plus the offsets of message content in the text.

        Raises :class:`~prompter.errors.TemplateError` where the template transforms
        content so that its place in the output cannot be established.
        """
        return self._render(messages, tools, add_generation_prompt, kwargs, True, documents, continue_final_message)

    def _render(
        self,
        messages: Any,
        tools: Any,
        add_generation_prompt: bool,
        kwargs: dict[str, Any],
        spans: bool,
        documents: Any,
        continue_final_message: bool | str,
    ) -> Rendered:
        from prompter.formats.fixed import render_full

        return render_full(
            self, messages, tools, add_generation_prompt, kwargs, spans, documents, continue_final_message
        )


_STR_FIELDS = (
    "name",
    "sos",
    "eos",
    "soh",
    "eoh",
    "soa",
    "eoa",
    "soe",
    "eoe",
    "generation_prompt",
    "bos",
    "tool_call_start",
    "tool_call_end",
)
_MARKUP = _STR_FIELDS[1:]
"""The fields that write markup: a format with none of them and no template writes bare text."""

_OPTIONAL_STR_FIELDS = ("default_system", "chat_template", "bos_token", "eos_token", "tool_chat_template")


def _refuse_a_name_alone(fmt: ModelFormat) -> None:
    """A format with no template and no markup, named after a registered model (``ModelFormat("qwen2.5")``)
    or given a template as its name, is a newcomer's mistake: it would render bare text, silently."""
    if any(getattr(fmt, field) for field in _MARKUP):
        return
    name = fmt.name
    try:
        family: str | None = family_of(name)
    except UnknownModelFormatError:
        family = None
    if family is not None:
        what, remedy = f"names the registered model format {family!r}", f"ModelFormat.get({family!r})"
    elif "{{" in name or "{%" in name:
        what, remedy = "was given a chat template as its name", "ModelFormat.from_chat_template(template)"
    else:
        return
    raise DeclarationError(
        f"ModelFormat(name={name[:60]!r}) {what} but has no chat template and no delimiters: it would write "
        f"the conversation with no chat markup at all; use {remedy} for that model's format, "
        "ModelFormat.from_chat_template(tokenizer.chat_template) for a model's own template, "
        'or give the delimiters (ModelFormat(name=..., soh="...", soa="...", ...))'
    )


GENERIC = ModelFormat(
    name="generic",
    sos="<|start_system|>",
    eos="<|end_system|>",
    soh="<|Human|>:",
    soa="<|Assistant|>:",
)
"""The delimiters prompter's own layout uses when no model is bound."""


@cache
def _registered(family: str) -> ModelFormat:
    """The registry's plain data for ``family`` as a format (built once per family)."""
    return ModelFormat(**family_fields(family))


_FAST: list[Callable[[ModelFormat, Any, Any, bool], str | None]] = []


def _load_fast() -> Callable[[ModelFormat, Any, Any, bool], str | None]:
    """Import the rendering machinery on first use, so ``import prompter`` stays light."""
    from prompter.formats.fixed import fast_render

    _FAST.append(fast_render)
    return fast_render


_NEUTRAL: list[Callable[[ModelFormat, Any, Any, bool], str]] = []


def _load_neutral() -> Callable[[ModelFormat, Any, Any, bool], str]:
    """Like :func:`_load_fast`: the renderer of neutral messages, imported on first use."""
    from prompter.formats.fixed import render_neutral

    _NEUTRAL.append(render_neutral)
    return render_neutral

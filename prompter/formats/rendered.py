"""What the model-format machinery shares, below every module that uses it.

``Rendered`` (a prompt and where message content lies in it) and ``FormatSpec``
(the fields of a :class:`~prompter.formats.model_format.ModelFormat` that rendering
reads) live here so that ``fixed`` and ``prepare`` can name them without importing
``model_format``: imports inside ``prompter/formats`` point one way, from
``model_format`` down.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

__all__ = ["FormatSpec", "Rendered"]


class Rendered(NamedTuple):
    """A rendered prompt and where the message content is in it."""

    text: str
    """The prompt, equal to what :meth:`ModelFormat.render` returns."""
    spans: tuple[tuple[int, int], ...]
    """``(start, end)`` offsets of every piece of ``text`` that came from the caller: message
    content (system, user, assistant, tool results, tool-call names and arguments), and the
    tools and documents a template prints. Everything outside the spans is the template's markup."""


class FormatSpec(Protocol):
    """The read-only fields of a model format that rendering reads (``ModelFormat`` has them all)."""

    @property
    def sos(self) -> str: ...
    @property
    def eos(self) -> str: ...
    @property
    def soh(self) -> str: ...
    @property
    def eoh(self) -> str: ...
    @property
    def soa(self) -> str: ...
    @property
    def eoa(self) -> str: ...
    @property
    def soe(self) -> str: ...
    @property
    def eoe(self) -> str: ...
    @property
    def generation_prompt(self) -> str: ...
    @property
    def bos(self) -> str: ...
    @property
    def tool_call_start(self) -> str: ...
    @property
    def tool_call_end(self) -> str: ...
    @property
    def default_system(self) -> str | None: ...
    @property
    def chat_template(self) -> str | None: ...
    @property
    def tool_chat_template(self) -> str | None: ...
    @property
    def bos_token(self) -> str | None: ...
    @property
    def eos_token(self) -> str | None: ...
    @property
    def time_budget(self) -> float: ...

"""Threat: a model folder's template so long that compiling it holds the process for many seconds.

The render budget starts when the template runs; compiling comes first and no deadline reaches
it. ``'{% if true %}a{% endif %}' * 100000`` (2.5 MB) took 32 s in ``from_chat_template`` (jinja
parses it twice: for its variables and to build it), 200,000 ``{{ 1 }}`` 14 s. The source is
measured first: over :data:`~prompter.formats.budget.MAX_SOURCE_CHARS` it is a TemplateError,
whichever way the template arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from prompter.errors import TemplateError, TemplateTimeoutError
from prompter.formats.budget import MAX_SOURCE_CHARS
from prompter.formats.model_format import ModelFormat
from prompter.formats.sandbox import compile_template

USER = [{"role": "user", "content": "hi"}]
LONG = {
    "if-blocks": "{% if true %}a{% endif %}" * 100_000,
    "expressions": "{{ 1 }}" * 200_000,
    "plain-text-then-content": "x" * 5_000_000 + "{{ messages[0]['content'] }}",
    "just-over-the-cap": "{{ messages[0]['content'] }}" + "x" * (MAX_SOURCE_CHARS - 27),
}

WAYS: dict[str, Callable[[str], Any]] = {
    "compile_template": compile_template,
    "from_chat_template": ModelFormat.from_chat_template,
    "named-tool_use": lambda s: ModelFormat.from_chat_template({"default": "{{ 1 }}", "tool_use": s}),
    "ModelFormat.render": lambda s: ModelFormat(chat_template=s).render(USER),
    "render_with_spans": lambda s: ModelFormat(chat_template=s).render_with_spans(USER),
    "tool_chat_template": lambda s: ModelFormat(chat_template="{{ 1 }}", tool_chat_template=s).render(USER, tools=[]),
}


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("name", sorted(LONG))
def test_a_template_too_long_to_compile_is_refused_before_compiling(name: str, way: str) -> None:
    source = LONG[name]
    assert len(source) > MAX_SOURCE_CHARS
    with pytest.raises(TemplateError, match="characters long, over the cap") as caught:
        WAYS[way](source)
    assert not isinstance(caught.value, TemplateTimeoutError)


def test_a_template_at_the_cap_still_renders() -> None:
    source = "{{ messages[0]['content'] }}" + "x" * (MAX_SOURCE_CHARS - 28)
    assert len(source) == MAX_SOURCE_CHARS
    assert ModelFormat.from_chat_template(source).render(USER) == "hi" + "x" * (MAX_SOURCE_CHARS - 28)


def test_every_shipped_template_is_far_under_the_cap() -> None:
    for family in ModelFormat.families():
        fmt = ModelFormat.get(family)
        for source in (fmt.chat_template, fmt.tool_chat_template):
            assert source is None or len(source) * 10 < MAX_SOURCE_CHARS, family

"""Threat: a template wraps one long word at a tiny width, and ``wordwrap`` runs past the budget.

textwrap (under jinja's ``wordwrap``) cuts a word longer than the width one line at a time,
copying the rest of the word each time, in Python code the deadline never reaches: a
199,999-character word at width 1 copies about 2e10 characters (5 to 30 s), at width 2 the render
even came back as text, seconds past its 1 s budget. Within the 200,000-character input cap of
the word-by-word filters, that is quadratic. The copies are counted before textwrap runs.
"""

from __future__ import annotations

import textwrap

import pytest

from prompter.errors import TemplateError, TemplateTimeoutError
from prompter.formats.model_format import ModelFormat
from prompter.formats.sandbox import compile_template, render_template

USER = [{"role": "user", "content": "hi"}]

BOMBS = {
    "one-word-width-1": "{{ ('a' * 199999)|wordwrap(1)|length }}",
    "one-word-width-2": "{{ ('a' * 199999)|wordwrap(2)|length }}",
    "no-hyphen-breaks": "{{ ('a' * 199999)|wordwrap(1, true, '', false)|length }}",
    "mid-size-word": "{{ ('a' * 40000)|wordwrap(1)|length }}",
    "many-long-words": "{{ (('a' * 30000 ~ ' ') * 6)|wordwrap(1)|length }}",
    "hyphenated-word": "{{ ('a-' * 99999)|wordwrap(1)|length }}",
}


@pytest.mark.parametrize("source", BOMBS.values(), ids=BOMBS.keys())
def test_wrapping_a_long_word_narrowly_is_refused_before_textwrap_runs(source: str) -> None:
    with pytest.raises(TemplateError) as caught:
        render_template(compile_template(source), {"messages": USER}, time_budget=20.0)
    assert not isinstance(caught.value, TemplateTimeoutError), caught.value
    assert "wordwrap" in str(caught.value) or "wraps long words" in str(caught.value)
    assert "break_long_words=false" in str(caught.value)  # the remedy


@pytest.mark.parametrize("source", BOMBS.values(), ids=BOMBS.keys())
def test_a_model_format_with_such_a_template_raises_a_typed_error(source: str) -> None:
    with pytest.raises(TemplateError):
        ModelFormat(chat_template=source).render(USER)


BENIGN = [
    ("the quick brown fox jumps over the lazy dog", 7, True),
    ("a" * 5000, 1, True),  # 12.5 million copies: well under the cap
    ("a" * 199999, 1, False),  # long words left whole copy nothing
    ("word " * 20000, 79, True),
    ("x" * 199999, 200, True),
    ("hyphen-ated-words and-more " * 100, 5, True),
]


@pytest.mark.parametrize(("text", "width", "breaks"), BENIGN, ids=[f"{len(t)}-{w}-{b}" for t, w, b in BENIGN])
def test_wrapping_within_the_bound_renders_as_jinja_does(text: str, width: int, breaks: bool) -> None:
    fmt = ModelFormat(chat_template=f"{{{{ messages[0]['content']|wordwrap({width}, {str(breaks).lower()}) }}}}")
    expected = "\n".join(
        "\n".join(textwrap.wrap(line, width=width, expand_tabs=False, replace_whitespace=False, break_long_words=breaks))
        for line in text.splitlines()
    )
    assert fmt.render([{"role": "user", "content": text}]) == expected

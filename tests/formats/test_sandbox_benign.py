"""The budget changes nothing for a template that stays within it.

Every builtin the budget wraps (operators, comparisons, str methods, format, filters,
tests) is rendered here next to jinja's own immutable sandbox, configured the same
way: the outputs must be equal, character for character.
"""

from __future__ import annotations

from typing import Any

import jinja2
import jinja2.ext
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

from prompter.formats.sandbox import compile_template, render_template

CONTEXT: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Why do cats purr?\nTell me."},
        {"role": "assistant", "content": "Contentment.", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
    ],
    "tools": [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "words": ["pear", "Apple", "fig", "apple", "Fig"],
    "nums": [3, 1, 2, 3, 10],
}

BENIGN = {
    "compare-chain": "{{ 1 < 2 < 3 }}{{ 3 > 2 > 5 }}{{ 1 == 1 != 2 }}",
    "compare-containers": "{{ [1, 2] == [1, 2] }}{{ (1, 2) != [1, 2] }}{{ {'a': 1} == {'a': 1} }}{{ [1] < [2] }}",
    "in-and-not-in": "{{ 'user' in ['user', 'system'] }}{{ 'x' not in 'abc' }}{{ 2 in nums }}{{ 'a' in {'a': 1} }}",
    "in-undefined": "{{ 'x' in nope }}{{ nope == none }}",
    "concat": "{{ 'a' ~ 1 ~ none ~ [1, 'b'] ~ {'k': 'v'} }}",
    "percent": "{{ '%s-%d-%5.2f|%-4s|%r' % ('a', 3, 2.5, 'x', 'q') }}{{ '%(a)s' % {'a': 1} }}{{ '%*d' % (5, 1) }}",
    "str-format": "{{ '{:>8}|{:^7.3f}|{!r}'.format('ab', 3.14159, 'q') }}{{ '{0}{1}{0}'.format('a', 'b') }}{{ '{x:{w}}'.format(x=1, w=4) }}",
    "format-map": "{{ '{a}-{b}'.format_map({'a': 1, 'b': 2}) }}",
    "str-methods": "{{ 'ab'.center(6, '*') }}{{ 'a'.ljust(3) }}|{{ '7'.zfill(3) }}{{ 'a\tb'.expandtabs(4) }}",
    "replace": "{{ 'banana'.replace('a', 'oo') }}{{ 'banana'.replace('a', 'o', 2) }}{{ 'x'|replace('', '-') }}",
    "split": "{{ 'a b  c'.split() }}{{ 'a,b,c'.split(',', 1) }}{{ 'a,b'.rsplit(',') }}{{ 'a\nb\r\nc'.splitlines() }}",
    "join": "{{ ', '.join(words) }}{{ words|join('|') }}{{ messages|join(',', attribute='role') }}{{ nums|join }}",
    "sort": "{{ words|sort }}{{ words|sort(case_sensitive=true) }}{{ nums|sort(reverse=true) }}"
    "{{ messages|sort(attribute='role')|map(attribute='role')|list }}",
    "unique-min-max": "{{ words|unique|list }}{{ words|min }}{{ words|max }}{{ nums|max }}{{ []|max }}",
    "groupby": "{% for g in messages|groupby('role') %}{{ g.grouper }}={{ g.list|length }};{% endfor %}",
    "dictsort": "{{ {'b': 1, 'a': 2, 'C': 3}|dictsort }}{{ {'b': 1, 'a': 2}|dictsort(by='value') }}",
    "sum": "{{ nums|sum }}{{ [[1], [2, 3]]|sum(start=[]) }}{{ [0.1, 0.2]|sum }}{{ messages|sum(attribute='x', start=0) if false }}",
    "sum-attribute": "{{ [{'n': 1}, {'n': 2.5}]|sum(attribute='n') }}{{ [{'l': [1]}, {'l': [2, 3]}]|sum(attribute='l', start=[]) }}"
    "{{ [{'a': {'b': 4}}]|sum(attribute='a.b', start=1) }}",
    "batch-slice": "{{ nums|batch(2)|list }}{{ nums|batch(2, 0)|list }}{{ nums|slice(2)|list }}{{ nums|slice(3, 0)|list }}",
    "list-reverse": "{{ 'abc'|list }}{{ 'abc'|reverse }}{{ nums|reverse|list }}{{ (nums|list)[1:3] }}{{ 'hello'[::-1] }}",
    "text-filters": "{{ 'hello world'|title }}{{ 'x'|center(5) }}|{{ 'a\nb'|indent(2, true) }}{{ 'a\nb'|indent('> ') }}"
    "{{ 'a <b>c</b>'|striptags }}{{ 'one two three'|wordcount }}{{ 'a b'|upper }}{{ '  x '|trim }}",
    "wordwrap-truncate": "{{ 'the quick brown fox'|wordwrap(7) }}{{ 'the quick brown fox'|truncate(9) }}",
    "format-filter": "{{ '%s=%d'|format('a', 1) }}{{ '%(k)s'|format(k='v') }}",
    "tojson": "{{ tools|tojson }}{{ tools|tojson(indent=2) }}{{ {'b': '<é>', 'a': 1}|tojson(sort_keys=true) }}",
    "pprint-string": "{{ nums|pprint }}{{ messages|string|length }}{{ nums|string }}",
    "select-tests": "{{ nums|select('equalto', 3)|list }}{{ nums|reject('lt', 3)|list }}{{ nums|select('in', [1, 2])|list }}"
    "{{ words|select('ne', 'fig')|list }}{{ 3 is eq 3 }}{{ 3 is gt 1 }}{{ 'a' is in 'cat' }}",
    "numbers": "{{ 2 ** 10 }}{{ 7 // 2 }}{{ 3 * 4 }}{{ 'ab' * 3 }}{{ [0] * 3 }}{{ 10 % 3 }}{{ 1 + 2 }}{{ (1, 2) + (3,) }}",
    "namespace-loop": "{% set ns = namespace(s='', n=0) %}{% for m in messages %}{% set ns.s = ns.s + m.role[0] %}"
    "{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.s }}{{ ns.n }}{{ ns }}",
    "dict-global": "{{ dict(a=1, b=2) }}{{ dict([['x', 1]]) }}",
    "loop-helpers": "{% for m in messages %}{{ loop.index }}{{ loop.cycle('a', 'b') }}{{ loop.changed(m.role) }}"
    "{% endfor %}",
    "macro-caller": "{% macro w(x) %}[{{ x }}{{ caller() if caller }}]{% endmacro %}{{ w(1) }}{% call w(2) %}c{% endcall %}",
    "print-none-undefined": "{{ none }}|{{ nope }}|{{ messages[0].nope }}|{{ true }}",
    "int-float": "{{ '42'|int + 1 }}{{ '2.5'|float }}{{ 'x'|int(7) }}{{ -3|abs }}{{ 2.567|round(1) }}",
}


def _reference() -> ImmutableSandboxedEnvironment:
    """jinja's own immutable sandbox with the transformers settings, and no budget."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, indent=None, sort_keys=False: __import__("json").dumps(
        x, ensure_ascii=False, indent=indent, sort_keys=sort_keys
    )
    env.globals["dict"] = dict
    return env


REFERENCE = _reference()


@pytest.mark.parametrize("source", BENIGN.values(), ids=BENIGN.keys())
def test_benign_template_renders_exactly_as_jinja_renders_it(source: str) -> None:
    assert render_template(compile_template(source), CONTEXT) == REFERENCE.from_string(source).render(CONTEXT)


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@settings(max_examples=150, deadline=None)
@given(
    a=_TEXT,
    b=_TEXT,
    n=st.integers(-3, 40),
    items=st.lists(st.one_of(_TEXT, st.integers(-5, 5)), max_size=6),
)
def test_small_values_render_through_the_budget_exactly_as_without_it(a: str, b: str, n: int, items: list[Any]) -> None:
    source = (
        "{{ a ~ b }}|{{ a.center(n) }}|{{ a.replace('a', b) }}|{{ a * n }}|{{ '%s:%r' % (a, b) }}|{{ '{!r:>{}}'.format(a, n|abs) }}"
        "|{{ a in b }}|{{ items == items }}|{{ b in items }}|{{ items|join(a) }}|{{ items|tojson }}|{{ a|indent(n % 9) }}"
        "|{{ items|string }}|{{ items|select('ne', a)|list }}|{{ a.split(b or none) }}|{{ a|wordwrap(n % 9 + 1) }}"
    )
    context = {"a": a, "b": b, "n": n, "items": items}
    assert render_template(compile_template(source), context) == REFERENCE.from_string(source).render(context)

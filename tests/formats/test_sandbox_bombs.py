"""The jinja bombs a chat template can hide, one row per amplifying builtin.

Shared by ``test_sandbox_bombs.py`` (each must end in a typed ``PromptError``, stopped
by a size check) and ``benchmarks/bench_sandbox_bombs.py`` (wall time and peak memory
of each, in a fresh process).  Every row is what an attacker who has read the jinja
and CPython sources would try: grow something faster than the per-statement checks
can see, inside one builtin call.
"""

from __future__ import annotations

import tracemalloc

import pytest

from prompter.errors import PromptError, TemplateError, TemplateTimeoutError
from prompter.formats.model_format import ModelFormat
from prompter.formats.sandbox import compile_template, render_template

# The big distinct-but-equal strings the comparison rows lean on: two 1M-char strings
# that differ only in their last character, so every comparison walks them whole.
_TWIN = "{% set a = 'x' * 999999 ~ 'a' %}{% set b = 'x' * 999999 ~ 'b' %}"

SIZE_BOMBS: dict[str, str] = {
    # -- sequences grown by repetition, then walked by a C builtin ---------------------------
    "sort-of-repeated-range": "{{ ((range(99999)|list)*200)|sort|length }}",
    "unique-of-repeated-range": "{{ ((range(99999)|list)*200)|unique|list|length }}",
    "list-repeat-by-arithmetic": "{{ ([0] * (99999 * 999))|length }}",
    "tuple-repeat": "{{ ((1,) * 99999999)|length }}",
    "str-repeat-from-range": "{{ ('a' * (range(99999)|sum))|length }}",
    "str-repeat-reversed-operands": "{{ (999999999 * 'ab')|length }}",
    "big-int-power-tower": "{{ 10 ** (10 ** 8) }}",
    "big-int-doubling-then-str": (
        "{% set ns = namespace(n=3) %}{% for i in range(99999) %}{% set ns.n = ns.n + ns.n %}{% endfor %}{{ ns.n }}"
    ),
    # -- string builders -------------------------------------------------------------------------
    "replace-amplification": "{{ ('a' * 1000000)|replace('a', 'b' * 1000) }}",
    "replace-method-amplification": "{{ ('a' * 1000000).replace('a', 'aaaaaaaaaa' * 100)|length }}",
    "replace-chain": "{{ ('ab' * 1000)|replace('a', 'aaaa' * 25)|replace('a', 'aaaa' * 25)|replace('a', 'aa' * 50) }}",
    "join-of-repeated-big-string": "{{ (['x' * 1000000] * 1000)|join|length }}",
    "join-method-of-repeated": "{{ ''.join(['x' * 1000000] * 1000)|length }}",
    "join-separator-amplification": "{{ ('a' * 1000000)|list|join('b' * 1000) }}",
    "sum-of-lists": "{{ ([[1] * 10000] * 10000)|sum(start=[])|length }}",
    "translate-amplification": "{{ ('a' * 1000000).translate({97: 'b' * 10000})|length }}",
    "maketrans-table": "{{ ''.maketrans('a' * 19000000, 'b' * 19000000)|length }}",
    "int-to-bytes": "{{ (1).to_bytes(1999999999, 'big')|length }}",
    "bytes-repeat": "{{ ('x'.encode() * 1999999999)|length }}",
    "filter-block-center": "{% filter center(1999999999) %}x{% endfilter %}",
    "attr-filter-center": "{{ 'x'|attr('center')(1999999999) }}",
    "expandtabs": "{{ ('\\t' * 1000000).expandtabs(10000)|length }}",
    "strftime-amplification": "{{ strftime_now('%c' * 9000000)|length }}",
    "upper-of-many": "{{ (['x' * 1000000] * 1000)|map('upper')|list|length }}",
    # -- widths and precisions -------------------------------------------------------------------
    "format-keyword-width": "{{ '{:>{w}}'.format('x', w=2000000000) }}",
    "format-keyword-width-as-str": "{{ '{:>{w}}'.format('x', w='1999999999') }}",
    "format-width-from-two-fields": "{{ '{:{}{}}'.format('x', 99999, 9999) }}",
    "format-nested-width-precision": "{{ '{:{w}.{p}f}'.format(1.5, w=999, p=999999999) }}",
    "format-float-precision": "{{ '{:.999999999f}'.format(1.5) }}",
    "format-map-width": "{{ '{x:>{w}}'.format_map({'x': 1, 'w': 1999999999}) }}",
    "format-str-of-repeated-list": "{{ '{}'.format(['x' * 1000000] * 1000)|length }}",
    "percent-zero-pad": "{{ '%0999999999d' % 1 }}",
    "percent-star-width": "{{ '%*d' % (1999999999, 1) }}",
    "percent-star-precision": "{{ '%.*f' % (999999999, 1.5) }}",
    "percent-many-fields": "{{ (('%s' * 1000) % (('x' * 1000000,) * 1000))|length }}",
    "percent-dict-width": "{{ '%(a)999999999s' % {'a': 1} }}",
    "format-filter-star-width": "{{ '%*s'|format(1999999999, 'x') }}",
    "center-method": "{{ 'x'.center(1999999999) }}",
    "center-filter": "{{ 'x'|center(1999999999) }}",
    "ljust-width-from-sum": "{{ 'x'.ljust((range(99999)|sum) * 1000) }}",
    "rjust-fill": "{{ 'x'.rjust(1999999999, '-') }}",
    "zfill": "{{ '1'.zfill(1999999999) }}",
    "indent-many-lines": "{{ ('\\n' * 1000000)|indent(1000) }}",
    "indent-str-width": "{{ ('\\n' * 1000000)|indent('x' * 1000) }}",
    "wordwrap-separator": "{{ ('a ' * 500000)|wordwrap(1, true, 'x' * 10000) }}",
    "wordwrap-long-word-width-1": "{{ ('a' * 199999)|wordwrap(1)|length }}",
    "wordwrap-long-word-width-2": "{{ ('a' * 199999)|wordwrap(2)|length }}",
    "wordwrap-long-word-no-hyphens": "{{ ('a' * 199999)|wordwrap(1, true, '', false)|length }}",
    "truncate-end": "{{ 'abc'|truncate(1, end='x' * 1999999999) }}",
    "tojson-indent": "{{ messages|tojson(indent=999999999) }}",
    "tojson-of-repeated": "{{ (['x' * 1000000] * 1000)|tojson|length }}",
    "tojson-deep-indent": (
        "{% set ns = namespace(x=[1]) %}{% for i in range(50) %}{% set ns.x = [ns.x] %}{% endfor %}"
        "{{ ([ns.x] * 9999)|tojson(indent=1000)|length }}"
    ),
    "pprint-of-repeated": "{{ (['x' * 1000000] * 1000)|pprint|length }}",
    # -- counts ----------------------------------------------------------------------------------
    "batch-fill": "{{ [1]|batch(1999999999, 0)|list|length }}",
    "slice-count": "{{ [1]|slice(1999999999)|list|length }}",
    "slice-fill": "{{ (range(9)|list)|slice(2, 0)|list|length }}{{ [1, 2]|slice(1999999999, 0)|list|length }}",
    "range-huge": "{{ range(10 ** 18)|length }}",
    "lipsum-huge": "{{ lipsum(100000000)|length }}",
    "lipsum-words": "{{ lipsum(1000, min=99999999, max=100000000)|length }}",
    "split-into-millions": "{{ ('a ' * 9000000).split()|length }}",
    "split-sep-into-millions": "{{ ('a,' * 9000000).split(',')|length }}",
    "list-of-long-string": "{{ ('a' * 19000000)|list|length }}",
    "wordcount-of-millions": "{{ ('a ' * 9000000)|wordcount }}",
    "title-of-millions": "{{ ('a ' * 9000000)|title|length }}",
    "striptags-of-millions": "{{ ('a ' * 9000000)|striptags|length }}",
    "urlize-of-millions": "{{ ('a ' * 9000000)|urlize|length }}",
    "dict-fromkeys": "{{ dict.fromkeys((range(99999)|list) * 999)|length }}",
    "dict-of-pairs": "{{ dict([[1, 2]] * 99999999)|length }}",
    # -- stringifying a structure made of shared references --------------------------------------
    "str-of-repeated-list": "{{ ['x' * 1000000] * 1000 }}",
    "concat-of-repeated-list": "{{ ('' ~ (['x' * 1000000] * 1000))|length }}",
    "string-filter-of-repeated-list": "{{ (['x' * 1000000] * 1000)|string|length }}",
    "upper-filter-of-repeated-list": "{{ (['x' * 1000000] * 1000)|upper|length }}",
    "exponential-nesting": (
        "{% set ns = namespace(x=['x' * 1000]) %}{% for i in range(40) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}"
        "{{ ns.x|length }}{{ ns.x }}"
    ),
    "escape-amplification": "{{ ('\"' * 19000000)|e|length }}",
    "urlencode-of-dict-with-big-value": "{{ {'a': 'x' * 19000000}|urlencode|length }}",
    "set-block-of-repeated-output": (
        "{% set s = 'x' * 19000000 %}{% set x %}{% for i in range(1000) %}{{ s }}{% endfor %}{% endset %}{{ x|length }}"
    ),
    "macro-of-repeated-output": (
        "{% set s = 'x' * 19000000 %}{% macro m() %}{% for i in range(1000) %}{{ s }}{% endfor %}{% endmacro %}"
        "{{ m()|length }}"
    ),
    "filter-block-of-repeated-output": (
        "{% set s = 'x' * 19000000 %}{% filter length %}{% for i in range(1000) %}{{ s }}{% endfor %}{% endfilter %}"
    ),
    "raise-exception-huge-message": "{{ raise_exception(['x' * 1000000] * 1000) }}",
    "xmlattr-of-repeated": "{{ {'a': ['x' * 1000000] * 1000}|xmlattr|length }}",
    # -- live memory kept across iterations ------------------------------------------------------
    "namespace-hoarding": (
        "{% set ns = namespace(l=[]) %}{% for i in range(99999) %}{% set ns.l = ns.l + ['x' * 100000 ~ i] %}"
        "{% endfor %}{{ ns.l|length }}"
    ),
    "macro-frame-hoarding": (
        "{% macro f(n, s) %}{% if n %}{{ f(n - 1, s ~ 'x') }}{% endif %}{% endmacro %}{{ f(500, 'x' * 19000000) }}"
    ),
}
"""Bombs a size check must stop before the allocation happens."""

TIME_BOMBS: dict[str, str] = {
    "sort-of-twins": _TWIN + "{{ ([a, b] * 99999)|sort|length }}",
    "in-over-twins": _TWIN + "{{ a in [b] * 999999 }}",
    "equal-lists-of-twins": _TWIN + "{{ [a] * 999999 == [b] * 999999 }}",
    "max-of-twins": _TWIN + "{{ ([a, b] * 99999)|max|length }}",
    "unique-of-twins": _TWIN + "{{ ([a, b] * 99999)|unique|list|length }}",
    "list-count-of-twins": _TWIN + "{{ ([b] * 999999).count(a) }}",
    "loop-changed-twins": _TWIN + "{% for x in [[a] * 999999, [b] * 999999] %}{{ loop.changed(x) }}{% endfor %}",
    "select-equalto-twins": _TWIN + "{{ ([b] * 999999)|select('equalto', a)|list|length }}",
    "nested-loops": "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    "recursive-macro": "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
    "branching-macro": "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
    "cycler-spin": "{% set c = cycler(1, 2) %}{% for i in range(99999) %}{% for j in range(99999) %}{{ c.next() }}"
    "{% endfor %}{% endfor %}",
    "joiner-spin": "{% set j = joiner('x') %}{% for i in range(99999) %}{% for k in range(99999) %}{{ j() }}"
    "{% endfor %}{% endfor %}",
    "map-select-chain": "{{ ((range(99999)|list) * 10)|map('string')|select('ne', 'x')|map('upper')|list|length }}"
    "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    "groupby-of-repeated": "{{ ((range(99999)|list) * 10)|map('string')|groupby('0')|list|length }}"
    "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
}
"""Bombs only the clock can stop (each step is small; there are many)."""

ALL_BOMBS: dict[str, str] = {**SIZE_BOMBS, **TIME_BOMBS}


# -- the tests -----------------------------------------------------------------------------------

USER = [{"role": "user", "content": "hi"}]

_GENEROUS = 20.0
"""A budget no size bomb gets near: what stops these must be a size check, not the clock."""


@pytest.mark.parametrize("source", SIZE_BOMBS.values(), ids=SIZE_BOMBS.keys())
def test_amplifying_builtin_is_refused_by_its_size_check_before_the_clock(source: str) -> None:
    with pytest.raises(TemplateError) as caught:
        render_template(compile_template(source), {"messages": USER}, time_budget=_GENEROUS)
    assert not isinstance(caught.value, TemplateTimeoutError), caught.value
    assert "out of memory" not in str(caught.value)  # refused before allocating, not after failing to


@pytest.mark.parametrize("source", TIME_BOMBS.values(), ids=TIME_BOMBS.keys())
def test_long_running_builtin_is_stopped_within_a_tiny_budget(source: str) -> None:
    fmt = ModelFormat(chat_template=source, time_budget=0.05)
    with pytest.raises(PromptError):
        fmt.render(USER)


_MEMORY_HOGS = [
    "format-keyword-width",
    "format-map-width",
    "replace-amplification",
    "replace-method-amplification",
    "replace-chain",
    "join-of-repeated-big-string",
    "join-method-of-repeated",
    "join-separator-amplification",
    "percent-many-fields",
    "set-block-of-repeated-output",
    "str-of-repeated-list",
    "namespace-hoarding",
    "macro-frame-hoarding",
    "upper-of-many",
]


@pytest.mark.parametrize("name", _MEMORY_HOGS)
def test_bomb_never_holds_more_than_512_mb(name: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(PromptError):
            render_template(compile_template(ALL_BOMBS[name]), {"messages": USER}, time_budget=_GENEROUS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 512 << 20, f"{name}: {peak / 2**20:.0f} MB"


NESTING = {
    "parentheses": "{{" + "(" * 3000 + "1" + ")" * 3000 + "}}",
    "if-blocks": "{% if 1 %}" * 2000 + "{% endif %}" * 2000,
    "filter-chain": "{{ x" + "|e" * 5000 + " }}",
}


@pytest.mark.parametrize("source", NESTING.values(), ids=NESTING.keys())
def test_template_nested_too_deeply_to_compile_is_a_template_error_not_a_recursion_error(source: str) -> None:
    with pytest.raises(TemplateError, match="nested"):
        compile_template(source)


UNTYPED = {
    "security-error": "{{ ''.__class__ }}{{ cycler.__init__.__globals__ }}{{ (1).__class__.__subclasses__() }}",
    "overflow-error": "{{ range(10 ** 18)|length }}",
    "recursion-error": "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
    "value-error-int-digits": "{{ (10 ** 4000) ~ '' }}{{ '9' * 5000|int }}",
    "deep-structure-printed": (
        "{% set ns = namespace(x=1) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}"
    ),
    "deep-structure-json": (
        "{% set ns = namespace(x=1) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}"
        "{{ ns.x|tojson }}"
    ),
    "deep-structure-compared": (
        "{% set ns = namespace(x=1, y=1) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% set ns.y = [ns.y] %}"
        "{% endfor %}{{ ns.x == ns.y }}"
    ),
}


@pytest.mark.parametrize("source", UNTYPED.values(), ids=UNTYPED.keys())
def test_python_error_inside_a_template_comes_out_as_a_template_error(source: str) -> None:
    with pytest.raises(TemplateError):
        render_template(compile_template(source), {"messages": USER}, time_budget=_GENEROUS)

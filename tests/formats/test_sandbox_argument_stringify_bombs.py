"""A chat template cannot hang a render through a filter, test or global that stringifies or hashes an *argument*.

The value a filter is applied to is sized before it is printed; these rows hide the huge value in another
place: ``attr``'s name, ``join``'s separator, ``wordwrap``'s wrapstring, ``urlize``'s target, the ``lower`` /
``upper`` tests (``str(value)``), and ``namespace(pairs)`` (each key hashed).  The value is a tuple of shared
halves a hundred deep: a few hundred bytes in memory, 2**100 items to ``str()`` or ``hash()``, which run in C
where no deadline reaches.  Each must end in a typed error, not a hang.
"""

from __future__ import annotations

import pytest

from prompter.errors import TemplateError
from prompter.formats.sandbox import compile_template, render_template

_SHARED_HALVES = (
    "{% set ns = namespace(l=()) %}{% for i in range(100) %}{% set ns.l = (ns.l, ns.l) %}{% endfor %}"
)

ARGUMENT_BOMBS = {
    "attr-name": "{{ {'a': 1}|attr(ns.l) }}",
    "attr-name-through-map": "{{ [1]|map('attr', ns.l)|list }}",
    "join-separator": "{{ [1, 2]|join(ns.l) }}",
    "wordwrap-wrapstring": "{{ 'x y'|wordwrap(1, wrapstring=ns.l) }}",
    "urlize-target": "{{ 'http://a.b'|urlize(target=ns.l) }}",
    "lower-test": "{{ ns.l is lower }}",
    "upper-test": "{{ ns.l is upper }}",
    "lower-test-through-select": "{{ [ns.l]|select('lower')|list }}",
    "namespace-from-pairs": "{{ namespace(ns.l) }}",
}


@pytest.mark.parametrize("bomb", list(ARGUMENT_BOMBS.values()), ids=list(ARGUMENT_BOMBS))
def test_a_huge_argument_is_refused_before_it_is_stringified(bomb: str) -> None:
    with pytest.raises(TemplateError):
        render_template(compile_template(_SHARED_HALVES + bomb), {"messages": []})


ORDINARY = {
    "attr": "{{ {'a': 1}|attr('items')|string|length > 0 }}",
    "join": "{{ [1, 2]|join(', ') }}",
    "wordwrap": "{{ 'ab cd'|wordwrap(2, wrapstring='|') }}",
    "lower-upper": "{{ 'abc' is lower }}{{ 'ABC' is upper }}{{ 1 is lower }}{{ ['abc']|select('lower')|list }}",
    "namespace": "{% set ns = namespace([('a', 1)], b=2) %}{{ ns.a }}{{ ns.b }}",
    "urlize": "{{ 'see http://a.b now'|urlize(target='_blank') }}",
}


@pytest.mark.parametrize("source", list(ORDINARY.values()), ids=list(ORDINARY))
def test_ordinary_arguments_render_as_jinja_renders_them(source: str) -> None:
    import jinja2.sandbox

    plain = jinja2.sandbox.ImmutableSandboxedEnvironment().from_string(source).render()
    assert render_template(compile_template(source), {}) == plain

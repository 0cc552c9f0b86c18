"""A template cannot hang the process by searching or hashing a structure of shared halves.

``{% set ns.a = [ns.a, ns.a] %}`` sixty times builds, in a few hundred bytes, a list that C
walks as 2**60 items when it compares or hashes it: ``ns.a in [ns.b]``, ``[ns.b].count(ns.a)``,
``{ns.t: 1}``. No deadline can interrupt one C call, so each of these must be sized before it
runs (shared parts counted as often as they occur) and refused by the work cap: a
``TemplateError`` saying so, never a ``TemplateTimeoutError`` after the call finally returns.
"""

from __future__ import annotations

import pytest

from prompter.errors import TemplateError
from prompter.formats.budget import MAX_WORK
from prompter.formats.model_format import ModelFormat
from prompter.formats.sandbox import compile_template, render_template


def _shared_halves(depth: int) -> str:
    """``ns.a``, ``ns.b`` (lists) and ``ns.t``, ``ns.u`` (tuples): equal, distinct, 2**depth leaves each."""
    grow = "{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% set ns.t = (ns.t, ns.t) %}"
    grow += "{% set ns.u = (ns.u, ns.u) %}"
    return (
        "{% set ns = namespace(a=[1], b=[1], t=(1,), u=(1,)) %}"
        f"{{% for i in range({depth}) %}}{grow}{{% endfor %}}"
    )


SEARCHES = {
    "in": "ns.a in [ns.b]",
    "not-in": "ns.a not in [ns.b]",
    "in-test": "ns.a is in [ns.b]",
    "in-test-in-select": "[ns.a]|select('in', [[ns.b]])|list",
    "in-a-tuple-of-one": "(ns.a, 1) in [(ns.b, 1)]",
    "in-dict-values": "ns.a in {'z': ns.b}.values()",
    "in-dict-values-as-list": "ns.a in {'z': ns.b}.values()|list",
    "in-a-lazy-filter": "ns.a in [ns.b]|map('list')",
    "list-count": "[ns.b].count(ns.a)",
    "list-index": "[ns.b, ns.a].index(ns.a)",
    "tuple-count": "(ns.b,).count(ns.a)",
    "tuple-in-dict-by-hash": "ns.t in {'z': 1}",
    "tuple-as-dict-literal-key": "{ns.t: 1}|length",
    "tuple-as-item-key": "{'z': 1}[ns.t]",
    "tuple-in-dict-get": "{'z': 1}.get(ns.t)",
    "tuple-in-dict-fromkeys": "dict.fromkeys([ns.t])|length",
    "tuple-in-dict-from-pairs": "dict([(ns.t, 1)])|length",
    "tuple-as-attribute-key": "[ns.t]|map(attribute=ns.t)|list",
    "unique-of-one-tuple": "[ns.t]|unique|list|length",
}


@pytest.mark.parametrize("depth", [22, 60], ids=["depth-22", "depth-60"])
@pytest.mark.parametrize("expression", list(SEARCHES.values()), ids=list(SEARCHES))
def test_a_search_or_hash_of_shared_halves_is_refused_by_the_work_cap(expression: str, depth: int) -> None:
    compiled = compile_template(_shared_halves(depth) + "{{ " + expression + " }}")
    with pytest.raises(TemplateError, match=f"over the cap of {MAX_WORK:,}"):
        render_template(compiled, {})


def test_the_reported_template_is_refused_when_it_is_read() -> None:
    source = (
        "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}"
        "{% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a in [ns.b] }}"
        "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    )
    with pytest.raises(TemplateError, match="searches a sequence"):
        ModelFormat.from_chat_template(source).render([{"role": "user", "content": "hi"}])


BENIGN = {
    "list-in-list": ("{{ [1, 2] in [[0], [1, 2]] }}", "True"),
    "list-not-in-list": ("{{ [3] not in [[0], [1, 2]] }}", "True"),
    "list-in-dict-values": ("{{ [1] in {'a': [1]}.values() }}", "True"),
    "list-in-a-lazy-filter": ("{{ [1] in [[1]]|map('list') }}", "True"),
    "list-in-undefined": ("{{ [1] in nothing }}", "False"),
    "tuple-in-dict": ("{{ (1, 2) in {(1, 2): 3} }}", "True"),
    "tuple-key": ("{{ {(1, 2): 3}[(1, 2)] }}", "3"),
    "tuple-get": ("{{ {(1, 2): 3}.get((1, 2)) }}", "3"),
    "tuple-pairs-to-dict": ("{{ dict([((1, 2), 3)])|length }}", "1"),
    "count-of-a-list": ("{{ [[1], [2], [1]].count([1]) }}", "2"),
    "index-of-a-list": ("{{ [[1], [2]].index([2]) }}", "1"),
    "unique-of-one-tuple": ("{{ [(1, 2)]|unique|list }}", "[(1, 2)]"),
    "str-in-list": ("{{ 'user' in ['system', 'user'] }}", "True"),
}


@pytest.mark.parametrize(("source", "expected"), list(BENIGN.values()), ids=list(BENIGN))
def test_searches_of_ordinary_structures_give_pythons_answer(source: str, expected: str) -> None:
    assert render_template(compile_template(source), {}) == expected

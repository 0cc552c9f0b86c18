"""Property: any composition of amplifying builtins, at any size, stays inside the budget.

A template is drawn as a random expression built from the operations that grow values
(repetition, padding, ``format`` widths, ``replace``, ``join``, ``sort``, ``tojson``,
``str()`` of shared references, ...) applied to one another with sizes from 0 to 10**18.
Whatever comes out, the render either returns at most ``max_chars`` characters or
raises a ``PromptError`` subclass, and never holds more than the memory bar.
"""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from prompter.errors import PromptError
from prompter.formats.sandbox import compile_template, render_template

MAX_CHARS = 200_000
PEAK_BYTES = 384 << 20
"""Well under the 512 MB bar, which the benchmark measures as RSS."""

SIZES = st.sampled_from([0, 1, 3, 7, 64, 999, 4096, 99_999, 1_000_000, 2**31 - 1, 10**9, 10**18])
SMALL = st.integers(0, 64)

ATOMS = st.one_of(
    st.builds("('x' * {})".format, SIZES),
    st.builds("('a b\\n\\t' * {})".format, SIZES),
    st.builds("(range({})|list)".format, SIZES),
    st.builds("(['x' * {}] * {})".format, SIZES, SIZES),
    st.builds("lipsum({})".format, SIZES),
    st.just("messages"),
)

_UNARY = [
    "({e}) * {n}",
    "{n} * ({e})",
    "({e})|join('-' * {k})",
    "({e})|replace('x', 'yy' * {n})",
    "({e}).replace('a', 'b' * {k})",
    "({e})|string",
    "({e})|sort",
    "({e})|unique|list",
    "({e})|map('upper')|list",
    "({e})|map('string')|list",
    "({e})|list",
    "({e})|tojson",
    "({e})|tojson(indent={k})",
    "({e})|indent({k})",
    "({e})|center({n})",
    "'{{:>{{w}}}}'.format({e}, w={n})",
    "'{{:{{}}{{}}}}'.format({e}, {k}, {k})",
    "'{{!r}}'.format({e})",
    "'%*s' % ({n}, {e})",
    "'%s%s' % ({e}, {e})",
    "({e}) ~ ({e})",
    "[{e}] * {n}",
    "[{e}, {e}]",
    "({e}).split()",
    "({e})|batch({n}, 0)|list",
    "({e})|slice({n})|list",
    "dict.fromkeys({e})",
    "({e}) == ({e})",
    "({e}) in [{e}] * {n}",
    "({e})|wordwrap(1, true, 'z' * {k})",
    "({e}).expandtabs({n})",
    "({e})|truncate({n})",
    "({e})|sum(start=[])",
    "({e})|max",
    "({e})|first",
    "({e})|length",
]


@st.composite
def expressions(draw: st.DrawFn, depth: int = 3) -> str:
    expr = draw(ATOMS)
    for _ in range(draw(st.integers(1, depth))):
        op = draw(st.sampled_from(_UNARY))
        expr = op.format(e=expr, n=draw(SIZES), k=draw(SMALL))
    return expr


@settings(max_examples=100, deadline=None)
@given(expr=expressions())
def test_any_composition_of_amplifying_builtins_renders_within_the_cap_or_raises_a_prompt_error(expr: str) -> None:
    source = "{{ " + expr + " }}"
    tracemalloc.start()
    try:
        try:
            out = render_template(
                compile_template(source), {"messages": [{"role": "user", "content": "hi"}]},
                time_budget=0.3, max_chars=MAX_CHARS,
            )
        except PromptError:
            out = ""
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(out) <= MAX_CHARS
    assert peak < PEAK_BYTES, f"{peak / 2**20:.0f} MB for {source}"

"""A filter that looks up an attribute of every item runs past the deadline inside one C call.

``join(attribute=...)``, ``sort(attribute=...)``, ``sum(attribute=...)`` and friends call the
sandbox's attribute lookup once per item from inside ``str.join`` or ``sorted``, where no loop
step or output chunk lets the clock be read: ``(['a'] * 999999)|join(attribute='x')`` held a
render with a 1 s budget for over 5 s (and ``from_chat_template`` for 4 s more), and
``sort(attribute='x,y,z,w')`` on 250,000 items for 7 s. Every lookup now counts toward the
deadline.

The clock here is a fake one that each lookup moves on by 10 ms, so the test sees how many
lookups a render makes after its 1 s budget is spent, without timing anything.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.errors import TemplateTimeoutError
from prompter.formats import budget, sandbox, sandbox_filters
from prompter.formats.sandbox import compile_template, render_template


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class _Item(dict[str, Any]):
    """An item whose every lookup is counted and moves the fake clock on by 10 ms."""

    clock = _Clock()
    lookups = 0

    def __getitem__(self, key: str) -> Any:
        type(self).lookups += 1
        self.clock.now += 0.01
        return 1


FILTERS = {
    "join": "{{ items|join(attribute='x')|length }}",
    "sum": "{{ items|sum(attribute='x') }}",
    "sort": "{{ items|sort(attribute='x,y,z,w')|length }}",
    "unique": "{{ items|unique(attribute='x')|list|length }}",
    "max": "{{ items|max(attribute='x') }}",
    "groupby": "{{ items|groupby('x')|length }}",
}


@pytest.mark.parametrize("source", FILTERS.values(), ids=FILTERS.keys())
def test_a_filter_looking_up_an_attribute_of_every_item_is_stopped_at_the_deadline(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    for module in (budget, sandbox, sandbox_filters):
        monkeypatch.setattr(module, "time", clock)
    monkeypatch.setattr(_Item, "clock", clock)
    monkeypatch.setattr(_Item, "lookups", 0)
    items = [_Item(x=1)] * 50_000
    with pytest.raises(TemplateTimeoutError):
        render_template(compile_template(source), {"items": items}, time_budget=1.0)
    # 1 s of budget is 100 lookups; the old code made one (or four) for each of the 50,000 items
    assert _Item.lookups < 1_000

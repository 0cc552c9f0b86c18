"""``ModelFormat.render`` and ``render_with_spans`` end in a result or a ``PromptError``, whatever the input.

Found by a probe: a tool schema, a message's extra key, a document or a template variable nested a
couple of thousand levels deep raised a bare ``RecursionError`` from the copy every render makes,
and an int past Python's 4,300-digit limit in a document (or a tool, for a template that ignores
``tools`` and gets them as JSON lines) a bare ``ValueError`` from ``json.dumps``. The prompters
and ``TrainableModule`` already refused them; the formats' own entry points did not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from prompter import ModelFormat
from prompter.errors import MessageError, PromptError, ToolsError

HI = [{"role": "user", "content": "hi"}]


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"a": [value]}
    return value


def tool(parameter: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {"x": parameter}}},
    }


DEEP = nested(2000)
HUGE = 10**5000

CASES: dict[str, tuple[Callable[[ModelFormat], Any], type[PromptError]]] = {
    "a tool schema nested deep": (lambda f: f.render(HI, tools=[tool(DEEP)]), ToolsError),
    "a tool schema nested deep, with spans": (lambda f: f.render_with_spans(HI, tools=[tool(DEEP)]), ToolsError),
    "a message's extra key nested deep": (
        lambda f: f.render([{"role": "user", "content": "hi", "meta": DEEP}]), MessageError
    ),
    "a document nested deep": (lambda f: f.render(HI, documents=[{"title": "t", "text": DEEP}]), MessageError),
    "a document holding a huge int": (lambda f: f.render(HI, documents=[{"title": "t", "text": HUGE}]), MessageError),
}


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "chatml"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_deep_or_huge_values_end_in_a_typed_error(family: str, case: str) -> None:
    call, error = CASES[case]
    with pytest.raises(error) as info:
        call(ModelFormat.get(family))
    assert "flatten it" in str(info.value) or "cannot be written as JSON" in str(info.value)


def test_a_huge_int_in_a_tool_for_a_template_that_ignores_tools_is_a_typed_error() -> None:
    fmt = ModelFormat.get("chatml")  # no tools in its template: they go in as JSON lines
    with pytest.raises(ToolsError, match=r"tools\[0\]: cannot be written as JSON"):
        fmt.render(HI, tools=[tool({"type": "integer", "default": HUGE})])


def test_a_nesting_well_within_the_stack_still_renders() -> None:
    fmt = ModelFormat.get("qwen2.5")
    assert "leaf" in fmt.render(HI, tools=[tool(nested(60))])


class _RaisingEq(str):
    """A str whose comparisons raise: user text of a caller's own type."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")

    __hash__ = str.__hash__


def test_user_strings_reads_a_str_subclass_as_its_exact_text_without_comparing_it() -> None:
    from prompter.formats.spans import user_strings

    found = set(user_strings({"k": _RaisingEq("value"), _RaisingEq("key"): [_RaisingEq("item")]}))
    assert found == {"k", "value", "key", "item"}
    assert all(type(s) is str for s in found)

"""Threat: a constructor's ``tools=`` is an object whose every dunder raises (a lazy proxy, a hostile value).

The prompter asked ``if tools`` before validating, which ran the caller's ``__bool__``; and
``ToolSet.from_user`` iterated the value before checking its type. Either let the caller's
exception out instead of a ``ToolsError``. A falsy non-list (``""``, ``{}``, ``0``) silently
meant "no tools"; it is now named as the wrong type, like any other non-list.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import AlpacaPrompter, ChatPrompter
from prompter.errors import ToolsError
from prompter.tools import ToolSet


class Boom(Exception):
    pass


def _boom(*args: object, **kwargs: object) -> Any:
    raise Boom("hostile")


class Hostile:
    __bool__ = __len__ = __iter__ = __str__ = __repr__ = __eq__ = _boom

    def __hash__(self) -> int:
        return 1


@pytest.mark.parametrize("prompter", [AlpacaPrompter, ChatPrompter])
@pytest.mark.parametrize("tools", [Hostile(), "", {}, 0, "get_weather"], ids=["hostile", "empty-str", "empty-dict", "zero", "str"])
def test_a_non_list_tools_is_a_tools_error_naming_its_type(prompter: Any, tools: Any) -> None:
    with pytest.raises(ToolsError, match="tools: expected a list of tool dicts, got"):
        prompter("Answer {input}.", tools=tools)


@pytest.mark.parametrize("prompter", [AlpacaPrompter, ChatPrompter])
@pytest.mark.parametrize("tools", [[], ()])
def test_an_empty_list_still_offers_no_tools(prompter: Any, tools: Any) -> None:
    assert "tools" not in prompter("Answer {input}.", tools=tools).generate_prompt("hi", format="openai")


def test_the_tool_set_checks_the_type_before_iterating() -> None:
    with pytest.raises(ToolsError, match="got Hostile"):
        ToolSet.from_user(Hostile())

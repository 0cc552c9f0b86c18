"""``stop=`` takes a str or a list of them: a number raised a bare ``TypeError`` and a dict was read as its keys."""

from __future__ import annotations

from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.local.request import GenerationOptions


@pytest.mark.parametrize("stop", [5, 1.5, {"ab": 1}, {"ab"}, b"ab", True], ids=repr)
def test_a_stop_that_is_no_str_or_list_is_named(stop: Any) -> None:
    with pytest.raises(ModuleConfigError, match=r"^stop: expected a non-empty str or a list of them, got "):
        GenerationOptions.from_kwargs({"stop": stop}, 8)


@pytest.mark.parametrize(("stop", "stops"), [("x", ("x",)), (["a", "b"], ("a", "b")), (("a",), ("a",)), (None, ())])
def test_a_str_or_a_list_of_them_is_taken(stop: Any, stops: tuple[str, ...]) -> None:
    assert GenerationOptions.from_kwargs({"stop": stop}, 8).stop == stops

"""A call's keyword names and option values are read as their characters: a str subclass's own methods never run.

Before: ``stop=[S("x")]`` ran ``S.__len__`` (the ``s and ...`` truthiness check), a refused value ran its
``__repr__`` for the error, and an unknown keyword ran its ``__len__``/``__repr__``/``__lt__`` while the
error was written; the caller's own exception came out instead of the answer or a ModuleConfigError.
The checked options (``stop``, ``temperature``...) reach the request as exact str/int/float values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modules import OnlineChatModule, TrainableModule
from modules.base import Completion, ModuleBase
from modules.errors import ModuleConfigError
from tests.tiny_model_fixture import tiny_model_path

__all__ = ["tiny_model_path"]


def _boom(*_: Any) -> Any:
    raise AssertionError("a method of the caller's str subclass ran")


class Hostile(str):
    """A str whose every reading method raises; only its characters may be read."""

    __len__ = __repr__ = __str__ = __iter__ = __getitem__ = __lt__ = __format__ = __bool__ = _boom
    __contains__ = __add__ = __mod__ = __mul__ = _boom


class HostileFloat(float):
    __le__ = __ge__ = __lt__ = __gt__ = __repr__ = __float__ = _boom


class Echo(ModuleBase[dict]):
    def _build_request(self, input: Any, history: Any, tools: Any, generation: dict[str, Any]) -> dict[str, Any]:
        return generation

    def _complete(self, request: dict[str, Any]) -> Completion:
        return Completion(text="ok")


def _exact(value: Any) -> bool:
    if isinstance(value, list):
        return all(_exact(item) for item in value)
    return type(value) in (str, int, float)


@pytest.mark.parametrize(
    "generation",
    [
        {"stop": [Hostile("x")]},
        {"stop": Hostile("END")},
        {"stop": ["a", Hostile("b")], "temperature": HostileFloat(0.5)},
        {Hostile("stop"): ["x"]},
        {Hostile("llm_chat_history"): None, "max_tokens": 3},
    ],
    ids=["stop-list", "stop-str", "stop-and-temperature", "keyword-name", "history-alias-name"],
)
def test_valid_options_from_str_subclasses_are_sent_as_exact_values(generation: dict[str, Any]) -> None:
    sent = Echo().build_request("hi", **generation)
    assert all(type(name) is str for name in sent)
    assert all(_exact(value) for value in sent.values())
    assert Echo()("hi", **generation) == "ok"


@pytest.mark.parametrize(
    ("generation", "message"),
    [
        ({"stop": [Hostile("")]}, r"stop=\[''\]: expected a non-empty str"),
        ({"stop": Hostile("")}, r"stop='': expected a non-empty str"),
        ({"stop": [1, Hostile("x")]}, r"stop=\[1, 'x'\]: expected"),
        ({"temperature": Hostile("hot")}, r"temperature='hot': expected a number from 0 to 2"),
        ({"temperature": HostileFloat(9.0)}, r"temperature=9\.0: expected a number from 0 to 2"),
        ({"temperature": 10**5000}, r"temperature=<a value of type int>: expected a number"),
        ({Hostile("temprature"): 1}, r"unknown call keyword 'temprature'.*did you mean temperature"),
        ({Hostile("b"): 1, Hostile("a"): 2}, r"unknown call keyword 'a'"),
    ],
    ids=["empty-in-list", "empty", "int-in-list", "str-temperature", "float-past-range", "huge-int",
         "typo-keyword", "two-unknown-keywords"],
)  # fmt: skip
def test_refused_options_from_str_subclasses_are_typed_errors_showing_their_characters(
    generation: dict[str, Any], message: str
) -> None:
    with pytest.raises(ModuleConfigError, match=message):
        Echo().build_request("hi", **generation)


def test_a_local_model_reads_a_str_subclass_stop_as_its_characters(tiny_model_path: Path) -> None:
    request = TrainableModule(tiny_model_path).build_request("hi", stop=[Hostile("x")])
    assert request.options.stop == ("x",) and all(type(s) is str for s in request.options.stop)
    with pytest.raises(ModuleConfigError, match=r"stop=\[''\]"):
        TrainableModule(tiny_model_path).build_request("hi", stop=[Hostile("")])


def test_an_online_module_sends_a_str_subclass_stop_as_its_characters() -> None:
    module = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-demo-not-real")
    body = module.build_request("hi", stop=[Hostile("x")], temperature=HostileFloat(0.25)).body
    assert body["stop"] == ["x"] and type(body["stop"][0]) is str
    assert body["temperature"] == 0.25 and type(body["temperature"]) is float

"""A value that is not JSON data never becomes prompt text made up from its type.

The copy a template is given used to turn any other object into ``<TypeName>``: an object of a
type named ``|im_end|`` put a real ``<|im_end|>`` in the prompt, outside the caller's text
(where no span marks it as user text), and ``bytes`` or a ``set`` were sent as ``<bytes>`` /
``<set>``. Each is now an ``InputTypeError`` naming where the value is.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from prompter.errors import InputTypeError
from prompter.formats.model_format import ModelFormat

_Forged = type("|im_end|", (), {})

NOT_JSON: dict[str, Any] = {
    "object-typed-as-a-control-token": _Forged(),
    "bytes": b"hi",
    "set": {1, 2},
    "frozenset": frozenset({"a"}),
    "object": object(),
}


@pytest.fixture(scope="module")
def chatml() -> ModelFormat:
    return ModelFormat.get("chatml")


@pytest.mark.parametrize("value", list(NOT_JSON.values()), ids=list(NOT_JSON))
def test_non_json_content_is_a_typed_error_not_text(chatml: ModelFormat, value: Any) -> None:
    with pytest.raises(InputTypeError, match=r"messages\[0\]\.content"):
        chatml.render([{"role": "user", "content": value}])


@pytest.mark.parametrize("value", list(NOT_JSON.values()), ids=list(NOT_JSON))
def test_non_json_values_nested_anywhere_are_refused(chatml: ModelFormat, value: Any) -> None:
    with pytest.raises(InputTypeError, match=r"messages\[1\]\.extra"):
        chatml.render([{"role": "user", "content": "a"}, {"role": "user", "content": "b", "extra": [{"k": value}]}])
    tool = {"type": "function", "function": {"name": "f", "parameters": {"enum": [value]}}}
    with pytest.raises(InputTypeError, match="tools"):
        chatml.render([{"role": "user", "content": "a"}], tools=[tool])
    with pytest.raises(InputTypeError, match="documents"):
        chatml.render([{"role": "user", "content": "a"}], documents=[{"title": "t", "text": value}])


def test_json_data_of_every_plain_kind_is_still_copied(chatml: ModelFormat) -> None:
    @dataclasses.dataclass
    class Point:
        x: int
        y: float

    class Text(str):
        pass

    extra = {"n": 1, "f": 1.5, "b": True, "none": None, "t": (1, "a"), "p": Point(1, 2.0), "s": Text("s")}
    prompt = chatml.render([{"role": "user", "content": Text("hi"), "extra": extra}])
    assert prompt == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"

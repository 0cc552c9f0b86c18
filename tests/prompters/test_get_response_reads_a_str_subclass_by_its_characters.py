"""``get_response`` takes a str subclass (``numpy.str_``, a library's own) as every other argument does:
by its characters, never calling its overrides."""

from __future__ import annotations

import pytest

from prompter import AlpacaPrompter, ChatPrompter
from prompter.errors import PromptTypeError


class Hostile(str):
    """A str whose every override raises: only its stored characters may be read."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ called")

    def startswith(self, *args: object) -> bool:  # type: ignore[override]
        raise RuntimeError("startswith called")

    def __contains__(self, other: object) -> bool:
        raise RuntimeError("__contains__ called")

    def __len__(self) -> int:
        raise RuntimeError("__len__ called")

    def __bool__(self) -> bool:
        raise RuntimeError("__bool__ called")

    def rsplit(self, *args: object, **kwargs: object) -> list[str]:  # type: ignore[override]
        raise RuntimeError("rsplit called")

    def __getitem__(self, index: object) -> str:  # type: ignore[override]
        raise RuntimeError("__getitem__ called")


def test_get_response_takes_str_subclasses_as_their_characters() -> None:
    chat = ChatPrompter("Translate.")
    prompt = chat.generate_prompt("cat")
    answer = chat.get_response(Hostile(prompt + "le chat"), input=Hostile(prompt))
    assert answer == "le chat" and type(answer) is str
    alpaca = AlpacaPrompter("Add.")
    assert alpaca.get_response(Hostile("echo ### Response:\n3")) == "3"
    assert alpaca.get_response("x ### Response:\n3", input=Hostile("x ")) == "3"


@pytest.mark.parametrize("output, input", [(b"x", None), ("x", b"x"), (3, None)], ids=["bytes", "bytes-input", "int"])
def test_get_response_still_refuses_what_is_not_text(output: object, input: object) -> None:
    with pytest.raises(PromptTypeError, match="get_response"):
        ChatPrompter().get_response(output, input=input)  # type: ignore[arg-type]

"""Threat: a caller's ``str`` subclass ran its own code (``__len__``, ``__getitem__``...) inside the module.

A text is read as the characters it holds, as the prompter reads every value: ``prepare_text``,
``score`` (both modes), ``text_logprobs`` and the ``stop`` of ``prepare_text`` answer a subclass as the
plain str with the same characters, and never call its methods (which may raise, or lie). And
``text_logprobs("abc")`` scored each character as a text of its own: a bare str is a typed error.
"""

from __future__ import annotations

from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModuleConfigError


class Hostile(str):
    """A str whose methods all refuse to run: only its stored characters may be read."""

    def __len__(self) -> int:
        raise RuntimeError("__len__ ran")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__ ran")

    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("__getitem__ ran")

    def __str__(self) -> str:
        raise RuntimeError("__str__ ran")

    def __bool__(self) -> bool:
        raise RuntimeError("__bool__ ran")

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("encode ran")


def test_prepare_text_reads_a_str_subclass_as_its_characters(started_module: Any) -> None:  # noqa: F811
    plain = started_module.prepare_text("hello there", stop=["x y"])
    hostile = started_module.prepare_text(Hostile("hello there"), stop=[Hostile("x y")])
    assert hostile.input_ids == plain.input_ids and hostile.options == plain.options
    assert type(hostile.text) is str and all(type(s) is str for s in hostile.options.stop)


@pytest.mark.parametrize("compat", [None, "opencompass"], ids=repr)
def test_score_reads_a_str_subclass_as_its_characters(started_module: Any, compat: Any) -> None:  # noqa: F811
    plain = started_module.score([("Q: Is it?", " yes"), ("", "no")], compat=compat)
    hostile = started_module.score([(Hostile("Q: Is it?"), Hostile(" yes")), (Hostile(""), Hostile("no"))], compat=compat)
    assert hostile == plain


def test_text_logprobs_reads_a_str_subclass_as_its_characters(started_module: Any) -> None:  # noqa: F811
    assert started_module.text_logprobs([Hostile("hello there")], top=1) == started_module.text_logprobs(
        ["hello there"], top=1
    )


@pytest.mark.parametrize("texts", ["abc", b"abc", 3, None], ids=repr)
def test_text_logprobs_of_a_bare_text_is_a_typed_error_naming_the_remedy(started_module: Any, texts: Any) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match=r"texts: expected a list of texts.*pass \[text\] for one"):
        started_module.text_logprobs(texts)

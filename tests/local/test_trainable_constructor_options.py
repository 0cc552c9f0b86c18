"""TrainableModule's options are checked when the module is built: a wrong value is a ModuleConfigError
naming the option and what it takes, never an error at the first call (or, served, a 400 that blames the
client). LazyLLM's constructor forms are refused naming prompter's form."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from modules import ModuleConfigError
from modules.local.trainable import TrainableModule
from prompter.errors import UnknownModelFormatError
from prompter.formats.model_format import ModelFormat


class Text(str):
    pass


BAD: list[tuple[str, Any]] = [
    ("max_new_tokens", 0),
    ("max_new_tokens", -5),
    ("max_new_tokens", True),
    ("max_new_tokens", 1.5),
    ("max_new_tokens", "8"),
    ("max_new_tokens", None),
    ("max_batch_size", True),
    ("max_batch_size", 2.0),
    ("name", 5),
    ("name", ""),
    ("name", "   "),
    ("name", ["tiny"]),
    ("on_trim", 5),
    ("on_trim", "print"),
    ("model_format", 5),
    ("model_format", ["qwen2.5"]),
]


@pytest.mark.parametrize(("option", "value"), BAD, ids=[f"{o}={v!r}" for o, v in BAD])
def test_a_wrong_option_is_refused_at_construction_naming_it(tmp_path: Path, option: str, value: Any) -> None:
    with pytest.raises(ModuleConfigError, match=rf"^{option}: expected "):
        TrainableModule(tmp_path / "m", **{option: value})


def test_the_error_for_a_wrong_answer_length_says_what_it_takes(tmp_path: Path) -> None:
    with pytest.raises(ModuleConfigError) as info:
        TrainableModule(tmp_path / "m", max_new_tokens=0)
    assert str(info.value) == "max_new_tokens: expected an int >= 1 (the default answer length in tokens), got 0"


def test_an_unknown_model_format_name_is_refused_at_construction_with_close_matches(tmp_path: Path) -> None:
    with pytest.raises(UnknownModelFormatError, match="close matches: qwen2.5"):
        TrainableModule(tmp_path / "m", model_format="qwen2.6")


@pytest.mark.parametrize(
    ("option", "value"),
    [("max_new_tokens", 1), ("max_batch_size", 1), ("name", Text("tiny")), ("on_trim", print), ("model_format", None)],
    ids=repr,
)
def test_good_values_are_accepted(tmp_path: Path, option: str, value: Any) -> None:
    TrainableModule(tmp_path / "m", **{option: value})


def test_a_model_format_given_by_name_or_as_a_format_binds_the_same_format(tmp_path: Path) -> None:
    fmt = ModelFormat.get("qwen2.5")
    assert TrainableModule(tmp_path / "m", model_format="qwen2.5")._format_arg == fmt
    assert TrainableModule(tmp_path / "m", model_format=fmt)._format_arg is fmt


@pytest.mark.parametrize("target", ["./out", Path("out")], ids=repr)
def test_lazyllms_second_positional_target_path_names_finetune(tmp_path: Path, target: Any) -> None:
    with pytest.raises(ModuleConfigError, match=r"target_path .*finetune\(data, output_dir=\.\.\.\)"):
        TrainableModule(tmp_path / "m", target)


@pytest.mark.parametrize(
    ("keyword", "value", "remedy"),
    [("stream", True, r"m\.stream\(input\)"), ("return_trace", True, r"build_request\(input\)")],
)
def test_lazyllms_constructor_keywords_name_their_replacement(
    tmp_path: Path, keyword: str, value: Any, remedy: str
) -> None:
    with pytest.raises(ModuleConfigError, match=remedy):
        TrainableModule(tmp_path / "m", **{keyword: value})


@pytest.mark.parametrize("keyword", ["format", "stream", "history"])
def test_lazyllms_share_keywords_name_their_replacement(tmp_path: Path, keyword: str) -> None:
    with pytest.raises(ModuleConfigError, match=rf"share\({keyword}=\.\.\.\)"):
        TrainableModule(tmp_path / "m").share(**{keyword: True})


def test_training_example_is_annotated_to_take_an_assistant_message_as_its_label() -> None:
    label = inspect.signature(TrainableModule.training_example).parameters["label"]
    assert label.annotation == "str | Mapping[str, Any]"
    assert "assistant message" in (TrainableModule.training_example.__doc__ or "")

"""A dataset with splits (``"hf:NAME"``, a ``datasets.DatasetDict``) is read as OpenCompass's reader reads it.

OpenCompass's ``DatasetReader`` takes the test samples from ``reader_cfg``'s ``test_split``
(``"test"``) and the in-context examples from ``train_split`` (``"train"``). Both keys were
accepted and ignored: the tests were always the ``"test"`` split and the retriever chose its
examples from those same tests, so a few-shot prompt could show a test question with its
answer. A split the dataset lacks is a typed error naming the splits it has. Everything
runs on a local folder in the layout ``datasets.load_dataset`` reads; nothing leaves the machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.eval.cli import view
from modules.eval.pipeline import plan

datasets = pytest.importorskip("datasets")

SPLITS = {"train": 3, "validation": 2, "test": 4}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "toy"
    root.mkdir()
    for split, n in SPLITS.items():
        rows = [json.dumps({"q": f"{split}-q{i}", "a": f"{split}-a{i}"}) for i in range(n)]
        (root / f"{split}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _dataset(path: Any, reader: dict[str, Any] | None = None, retriever: Any = None) -> dict[str, Any]:
    return {
        "path": path,
        "reader_cfg": {"input_columns": ["q"], "output_column": "a", **(reader or {})},
        "infer_cfg": {
            "ice_template": {"type": "PromptTemplate", "template": "{q} {a}"},
            "prompt_template": {"type": "PromptTemplate", "template": "</E>{q} {a}", "ice_token": "</E>"},
            "retriever": retriever or {"type": "FixKRetriever", "fix_id_list": [0, 1]},
        },
    }


def _prompts(dataset: dict[str, Any], **kwargs: Any) -> list[str]:
    return [job["origin_prompt"] for job in plan(dataset, {}, **kwargs).jobs()]


def test_examples_come_from_the_train_split_and_never_from_the_test_samples(folder: Path) -> None:
    prompts = _prompts(_dataset(f"hf:{folder}"))
    assert prompts == [f"train-q0 train-a0\ntrain-q1 train-a1\ntest-q{i} " for i in range(4)]


def test_test_split_and_train_split_choose_the_splits(folder: Path) -> None:
    prompts = _prompts(_dataset(f"hf:{folder}", {"test_split": "validation", "train_split": "test"}))
    assert prompts == [f"test-q0 test-a0\ntest-q1 test-a1\nvalidation-q{i} " for i in range(2)]


def test_ranges_apply_within_their_splits(folder: Path) -> None:
    reader = {"test_range": "[1:3]", "train_range": "[1:]"}
    prompts = _prompts(_dataset(f"hf:{folder}", reader))
    assert prompts == [f"train-q1 train-a1\ntrain-q2 train-a2\ntest-q{i} " for i in (1, 2)]


def test_a_dataset_dict_object_is_read_by_the_same_rules(folder: Path) -> None:
    splits = datasets.load_dataset(str(folder))
    prompts = _prompts(_dataset(splits, {"test_split": "validation"}))
    assert prompts == [f"train-q0 train-a0\ntrain-q1 train-a1\nvalidation-q{i} " for i in range(2)]


@pytest.mark.parametrize("key", ["test_split", "train_split"])
def test_a_split_the_dataset_lacks_is_a_typed_error_naming_its_splits(folder: Path, key: str) -> None:
    with pytest.raises(ModuleConfigError, match=rf"reader_cfg\['{key}'\]: .* no split 'dev'.*'train', 'validation', 'test'"):
        plan(_dataset(f"hf:{folder}", {key: "dev"}), {})


def test_a_zero_shot_run_needs_no_train_split_unless_the_config_names_one(folder: Path) -> None:
    (folder / "train.jsonl").unlink()
    (folder / "validation.jsonl").unlink()
    zero = {
        "path": f"hf:{folder}",
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {"prompt_template": {"type": "PromptTemplate", "template": "{q} {a}"}},
    }
    assert _prompts(zero) == [f"test-q{i} " for i in range(4)]
    with pytest.raises(ModuleConfigError, match=r"reader_cfg\['train_split'\]: .* no split 'train'.*\['test'\]"):
        plan({**zero, "reader_cfg": {**zero["reader_cfg"], "train_split": "train"}}, {})
    with pytest.raises(ModuleConfigError, match=r"no split 'train'.*or give index_path"):
        plan(_dataset(f"hf:{folder}"), {})  # few-shot: the examples need a split


def test_index_path_gives_the_examples_of_a_dataset_with_splits(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "shots.jsonl").write_text(json.dumps({"q": "shot", "a": "A"}) + "\n", encoding="utf-8")
    dataset = {**_dataset(f"hf:{folder}", retriever={"type": "FixKRetriever", "fix_id_list": [0]})}
    dataset["index_path"] = "shots.jsonl"
    assert _prompts(dataset, base_dir=tmp_path)[0] == "shot A\ntest-q0 "


def test_a_folder_that_cannot_be_loaded_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(ModuleConfigError, match=r"'hf:.*nothing-here': cannot be loaded"):
        plan(_dataset(f"hf:{tmp_path / 'nothing-here'}"), {})


def test_a_relative_hf_folder_is_read_beside_the_config_as_files_are(folder: Path, tmp_path: Path) -> None:
    lines: list[str] = []

    class Out:
        def write(self, text: str) -> None:
            lines.append(text)

    config = {"dataset": _dataset("hf:toy", {"test_split": "validation"}), "model": {}}
    view(config, None, base_dir=tmp_path, stream=Out())
    text = "".join(lines)
    assert "train-q0 train-a0\ntrain-q1 train-a1\nvalidation-q1 \n" in text
    assert plan(config["dataset"], {}, base_dir=tmp_path).name == "toy"


def test_an_hf_index_path_gives_its_train_split_for_the_examples(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "tests.jsonl").write_text(json.dumps({"q": "file-q", "a": "file-a"}) + "\n", encoding="utf-8")
    dataset = {**_dataset("tests.jsonl"), "index_path": "hf:toy"}
    assert _prompts(dataset, base_dir=tmp_path) == ["train-q0 train-a0\ntrain-q1 train-a1\nfile-q "]
    dataset["reader_cfg"] = {**dataset["reader_cfg"], "train_split": "validation"}
    assert _prompts(dataset, base_dir=tmp_path) == ["validation-q0 validation-a0\nvalidation-q1 validation-a1\nfile-q "]

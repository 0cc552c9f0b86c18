"""``finetune`` never saves over a model: a folder holding one, the source model's own folder, a file.

Before the fix the weights were saved into whatever ``output_dir`` named, after the whole
run: a folder holding another model got our files mixed with its own (a stale shard or
adapter left beside them makes the folder load as something else); ``output_dir`` equal to the source
folder overwrote the source weights (the docs promise it is never written) and then died
on a bare ``shutil.SameFileError``; a file died on a bare ``FileExistsError`` after
training; ``"~/tuned"`` made a folder literally named ``~`` in the current folder; a
relative path gave a module whose weights could not be found after a ``chdir``.
Now each is a ``ModuleConfigError`` before any work, and the saved folder is absolute.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from prompter import ChatPrompter

PAIRS = [{"input": "What is 2+2?", "output": "4"}]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the tiny model: a regression must not corrupt the shared cache."""
    from modules.local.tiny_model import cached_tiny_model

    folder = tmp_path_factory.mktemp("src") / "tiny"
    shutil.copytree(cached_tiny_model("qwen2.5"), folder)
    return folder


def module(folder: Path) -> Any:
    from modules.local.trainable import TrainableModule

    return TrainableModule(folder, max_new_tokens=4).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("held", ["config.json", "model.safetensors", "adapter_config.json", "pytorch_model.bin"])
def test_a_folder_holding_a_model_is_refused_and_left_as_it_was(source: Path, tmp_path: Path, held: str) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / held).write_text("another model's", encoding="utf-8")
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ModuleConfigError, match="already holds a model"):
        module(source).finetune(PAIRS, out, epochs=1, progress=False)
    assert sorted(os.listdir(out)) == sorted([held, "notes.txt"])


def test_a_folder_holding_other_files_takes_the_weights_beside_them(source: Path, tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text('{"input": "What is 2+2?", "output": "4"}\n', encoding="utf-8")
    tuned = module(source).finetune(str(tmp_path / "train.jsonl"), tmp_path, epochs=1, progress=False)
    tuned.stop()
    assert (tmp_path / "model.safetensors").is_file() and (tmp_path / "train.jsonl").is_file()


def test_the_source_model_folder_is_never_written(source: Path) -> None:
    before = digest(source)
    with pytest.raises(ModuleConfigError, match="inside the model being trained"):
        module(source).finetune(PAIRS, source, epochs=1, progress=False)
    with pytest.raises(ModuleConfigError, match="inside the model being trained"):
        module(source).finetune(PAIRS, source / "tuned", epochs=1, progress=False)
    assert digest(source) == before
    assert not (source / "tuned").exists()


def test_a_file_as_output_dir_is_refused_before_training(source: Path, tmp_path: Path) -> None:
    target = tmp_path / "model.bin"
    target.write_bytes(b"x")
    with pytest.raises(ModuleConfigError, match="is a file"):
        module(source).finetune(PAIRS, target, epochs=1, progress=False)
    assert target.read_bytes() == b"x"


def test_a_tilde_path_is_refused_rather_than_made_into_a_folder_named_tilde(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModuleConfigError, match="not expanded"):
        module(source).finetune(PAIRS, "~/tuned-by-prompter-test", epochs=1, progress=False)
    assert not (tmp_path / "~").exists()


@pytest.mark.parametrize("bad", [None, 5, "", "   "], ids=["none", "int", "empty", "blank"])
def test_output_dir_that_is_not_a_path_is_a_typed_error(source: Path, bad: Any) -> None:
    with pytest.raises(ModuleConfigError, match="output_dir"):
        module(source).finetune(PAIRS, bad, epochs=1, progress=False)


def test_a_relative_output_dir_is_saved_and_served_from_its_absolute_path(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    tuned = module(source).finetune(PAIRS, "tuned", epochs=1, progress=False)
    try:
        assert Path(tuned._backend.path) == work / "tuned"
        assert (work / "tuned" / "model.safetensors").is_file()
        monkeypatch.chdir(tmp_path)  # elsewhere: the module still finds its own weights
        tuned.stop()
        tuned.start()
        assert isinstance(tuned("What is 2+2?"), str)
    finally:
        tuned.stop()


def test_an_existing_empty_folder_is_fine(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    tuned = module(source).finetune(PAIRS, out, epochs=1, progress=False)
    tuned.stop()
    assert (out / "model.safetensors").is_file()

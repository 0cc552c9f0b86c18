"""The tiny model is a real Hugging Face model folder, built offline, the same bytes every time."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from modules.local.tiny_model import build_tiny_model, family_spec, list_families

pytest.importorskip("transformers")


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module", autouse=True)
def _quiet() -> None:
    """No progress bars in test output."""
    from transformers.utils import logging

    logging.disable_progress_bar()


def test_same_arguments_give_the_same_bytes(tmp_path: Path) -> None:
    a = build_tiny_model(tmp_path / "a", family="qwen2.5", seed=0)
    b = build_tiny_model(tmp_path / "b", family="qwen2.5", seed=0)
    assert _digest(a) == _digest(b)
    assert {"config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"} <= set(_digest(a))
    size = sum(p.stat().st_size for p in a.iterdir())
    assert size < 5_000_000, f"the tiny model is {size} bytes"


def test_another_seed_gives_other_weights(tmp_path: Path) -> None:
    a = build_tiny_model(tmp_path / "a", seed=0)
    b = build_tiny_model(tmp_path / "b", seed=1)
    assert _digest(a)["model.safetensors"] != _digest(b)["model.safetensors"]
    assert _digest(a)["tokenizer.json"] == _digest(b)["tokenizer.json"]


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "mistral-v0.3-tools", "gemma-2"])
def test_loads_offline_with_the_familys_tokens_and_template(tmp_path: Path, family: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = build_tiny_model(tmp_path / family, family=family)
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    spec = family_spec(family)

    assert tok.chat_template == spec.chat_template
    assert tok.eos_token == spec.eos_token
    assert len(tok) <= model.config.vocab_size  # every id has an embedding row
    for token in spec.control_tokens:  # each control token is one special id
        ids = tok(token, add_special_tokens=False)["input_ids"]
        assert len(ids) == 1 and ids[0] in tok.all_special_ids, token

    ids = tok("Why do cats purr?", add_special_tokens=False)["input_ids"]
    out = model.generate(torch.tensor([ids]), max_new_tokens=4, do_sample=False)
    assert out.shape[1] == len(ids) + 4 or int(out[0, -1]) == tok.eos_token_id


def test_every_family_in_the_index_is_buildable_as_a_tokenizer() -> None:
    from modules.local.tiny_model import build_tiny_tokenizer

    families = list_families()
    assert len(families) == 40
    tok = build_tiny_tokenizer(families[0], vocab_size=400)
    assert tok.chat_template


def test_unknown_family_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="qwen2.5"):
        family_spec("no-such-family")


def test_cli_builds_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from modules.cli import main

    assert main(["tiny-model", str(tmp_path / "m"), "--family", "llama-3"]) == 0
    assert (tmp_path / "m" / "config.json").is_file()
    assert str(tmp_path / "m") in capsys.readouterr().out


def _occupied(tmp_path: Path) -> Path:
    folder = tmp_path / "real-model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "real"}', encoding="utf-8")
    return folder


def _a_file(tmp_path: Path) -> Path:
    file = tmp_path / "notes.txt"
    file.write_text("keep me", encoding="utf-8")
    return file


CLI_REFUSALS = [
    ("non-empty folder", _occupied, [], "not empty"),
    ("a file", _a_file, [], "is a file"),
    ("unknown family", lambda tmp: tmp / "new", ["--family", "nonsense"], "known families: .*qwen2.5"),
]


@pytest.mark.parametrize(("case", "make", "extra", "message"), CLI_REFUSALS, ids=[c[0] for c in CLI_REFUSALS])
def test_cli_refuses_with_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, make: Any, extra: list[str], message: str
) -> None:
    import re

    from modules.cli import main

    target = make(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as exited:
        main(["tiny-model", str(target), *extra])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("prompter tiny-model: error: "), err
    assert re.search(message, err), err
    assert str(target) in err or case == "unknown family"
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # nothing written
    assert not (tmp_path / "new").exists()


def test_unknown_family_is_a_typed_error_before_the_folder_is_made(tmp_path: Path) -> None:
    from modules.errors import ModuleConfigError

    with pytest.raises(ModuleConfigError, match="known families"):
        build_tiny_model(tmp_path / "new", family="nonsense")
    assert not (tmp_path / "new").exists()


def test_force_overwrites_and_a_tiny_model_can_be_rebuilt_in_place(tmp_path: Path) -> None:
    from modules.errors import ModuleConfigError

    folder = _occupied(tmp_path)
    with pytest.raises(ModuleConfigError, match="--force"):
        build_tiny_model(folder)
    assert (folder / "config.json").read_text(encoding="utf-8") == '{"model_type": "real"}'
    build_tiny_model(folder, force=True)
    first = _digest(folder)
    build_tiny_model(folder)  # ours now: no force needed
    assert _digest(folder) == first

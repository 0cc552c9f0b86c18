"""``prompter tiny-model --family Qwen2.5`` builds the qwen2.5 model, as ``ModelFormat.get("Qwen2.5")``
finds the qwen2.5 format: a family is named in any case and spelled as the index spells it everywhere
(the marker file, the cache folder, what the command prints). A name that is no family is one line
listing the families, with the closest ones first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modules.errors import ModuleConfigError
from modules.local.tiny_model import MARKER, build_tiny_model, cached_tiny_model, family_spec

pytest.importorskip("transformers")


@pytest.fixture(scope="module", autouse=True)
def _quiet() -> None:
    from transformers.utils import logging

    logging.disable_progress_bar()


@pytest.mark.parametrize("name", ["Qwen2.5", "QWEN2.5", " qwen2.5 ", "Llama-3.1"])
def test_family_spec_reads_a_family_in_any_case(name: str) -> None:
    assert family_spec(name) == family_spec(name.strip().lower())


def test_cli_builds_the_family_named_in_another_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from modules.cli import main

    assert main(["tiny-model", str(tmp_path / "m"), "--family", "Qwen2.5"]) == 0
    assert capsys.readouterr().out == f"built a tiny qwen2.5 model in {tmp_path / 'm'}\n"
    assert json.loads((tmp_path / "m" / MARKER).read_text(encoding="utf-8"))["family"] == "qwen2.5"
    config = json.loads((tmp_path / "m" / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "qwen2"  # the Qwen architecture, as for "qwen2.5"


def test_the_same_family_in_another_case_is_the_same_model(tmp_path: Path) -> None:
    a = build_tiny_model(tmp_path / "a", family="qwen2.5")
    b = build_tiny_model(tmp_path / "b", family="QWEN2.5")
    assert {p.name: p.read_bytes() for p in a.iterdir()} == {p.name: p.read_bytes() for p in b.iterdir()}
    cache = str(tmp_path / "cache")
    assert cached_tiny_model("Qwen2.5", cache_dir=cache) == cached_tiny_model("qwen2.5", cache_dir=cache)


@pytest.mark.parametrize("name", ["qwen25", "lama-3.1"])
def test_a_near_miss_is_one_line_naming_the_closest_family(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from modules.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["tiny-model", str(tmp_path / "new"), "--family", name])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean" in err and "known families: " in err, err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("name", [None, 2.5, ["qwen2.5"]], ids=["none", "float", "list"])
def test_a_family_that_is_not_text_is_a_typed_error(name: object) -> None:
    with pytest.raises(ModuleConfigError, match="unknown model family"):
        family_spec(name)  # type: ignore[arg-type]

"""``cached_tiny_model`` never hands back a folder an earlier build of prompter wrote (other weights)."""

from __future__ import annotations

import json
from pathlib import Path

from modules.local.tiny_model import BUILD, MARKER, cached_tiny_model


def test_a_cache_folder_from_an_earlier_build_is_rebuilt(tmp_path: Path) -> None:
    stale = tmp_path / "prompter-tiny" / "qwen2.5-0"
    stale.mkdir(parents=True)
    (stale / ".complete").write_text("ok\n", encoding="utf-8")  # what build 1 wrote
    (stale / MARKER).write_text(json.dumps({"family": "qwen2.5", "seed": 0}) + "\n", encoding="utf-8")
    (stale / "model.safetensors").write_bytes(b"old weights")

    path = cached_tiny_model("qwen2.5", cache_dir=str(tmp_path))

    assert path == stale
    assert json.loads((path / MARKER).read_text(encoding="utf-8"))["build"] == BUILD
    assert (path / "model.safetensors").read_bytes() != b"old weights"
    assert cached_tiny_model("qwen2.5", cache_dir=str(tmp_path)) == path  # and kept afterwards


def test_the_model_is_drawn_with_a_spread_that_fine_tuning_can_move() -> None:
    from modules.local.tiny_model import _model_config, build_tiny_tokenizer

    config = _model_config("qwen2.5", build_tiny_tokenizer("qwen2.5"))
    assert config.initializer_range <= 0.2

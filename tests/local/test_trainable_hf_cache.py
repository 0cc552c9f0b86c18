"""``TrainableModule(name)``: a Hugging Face model id resolves from the local cache, as in LazyLLM,
and never reaches for the network."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules import ModuleConfigError
from modules.local.trainable import TrainableModule


@pytest.fixture
def hub_cache(tmp_path: Path, tiny_model_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """A Hugging Face hub cache holding the tiny model as ``acme/tiny-chat`` (the cache's own layout)."""
    import huggingface_hub.constants

    repo = tmp_path / "hub" / "models--acme--tiny-chat"
    shutil.copytree(tiny_model_path, repo / "snapshots" / "0123abcd")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return repo / "snapshots" / "0123abcd"


def test_a_model_id_in_the_local_cache_loads_from_its_snapshot(hub_cache: Path) -> None:
    module = TrainableModule("acme/tiny-chat")
    request = module.build_request("hi")
    assert len(request.input_ids) > 0
    assert Path(module._backend.path).resolve() == hub_cache.resolve()


@pytest.mark.parametrize("name", ["acme/not-cached", "./no-such-folder", "a/b/c", ""])
def test_a_model_neither_a_folder_nor_cached_is_a_typed_error_naming_the_remedy(hub_cache: Path, name: str) -> None:
    with pytest.raises(ModuleConfigError) as info:
        TrainableModule(name).build_request("hi")
    message = str(info.value)
    assert "never downloads" in message and "prompter tiny-model" in message

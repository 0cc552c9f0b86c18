"""TrainableModule's path: a wrong type is refused when the module is built; a missing model's message
fits what was given (a path that does not exist, or a Hugging Face id to download)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trainable_hf_cache import hub_cache  # noqa: F401 - fixture (the tiny model as acme/tiny-chat)
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules import ModuleConfigError
from modules.local.trainable import TrainableModule


@pytest.mark.parametrize("path", [["x"], 123, None, b"models/x", 1.5], ids=repr)
def test_a_path_that_is_not_a_str_or_path_is_refused_at_construction(path: object) -> None:
    with pytest.raises(ModuleConfigError, match=r"path: expected a model folder or a Hugging Face model id"):
        TrainableModule(path)  # type: ignore[arg-type]


def test_a_path_object_and_a_str_subclass_are_accepted(tmp_path: Path) -> None:
    class Text(str):
        pass

    assert TrainableModule(tmp_path / "m").name == "m"
    assert TrainableModule(Text(tmp_path / "n")).name == "n"


@pytest.fixture
def empty_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "weights.bin").write_bytes(b"")
    return tmp_path


@pytest.mark.parametrize(
    ("path", "what"),
    [
        ("./nope", "it does not exist"),
        ("/no/such/model", "it does not exist"),
        ("~/no-such-model-folder", "it does not exist"),
        ("a/b/c", "it does not exist"),
        ("models/qwen", "it does not exist"),  # its parent folder exists: a path, not an ORG/NAME id
        ("weights.bin", "a file"),
    ],
)
def test_a_missing_local_path_says_the_folder_does_not_exist_without_a_download_hint(
    empty_hub: Path, path: str, what: str
) -> None:
    with pytest.raises(ModuleConfigError) as info:
        TrainableModule(path).build_request("hi")
    message = str(info.value)
    assert f"{path!r} is not a folder ({what})" in message
    assert "download it" not in message and "hf download" not in message and "huggingface-cli" not in message


def test_a_hugging_face_id_not_in_the_cache_names_hf_download(empty_hub: Path) -> None:
    with pytest.raises(ModuleConfigError) as info:
        TrainableModule("acme/not-cached").build_request("hi")
    message = str(info.value)
    assert "nor in the local Hugging Face cache" in message and "`hf download acme/not-cached`" in message


def test_a_cached_model_id_still_loads_when_a_folder_named_like_its_org_is_in_the_working_directory(
    hub_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    (tmp_path / "work" / "acme").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert len(TrainableModule("acme/tiny-chat").build_request("hi").input_ids) > 0

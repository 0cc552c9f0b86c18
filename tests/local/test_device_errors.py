"""A wrong or missing device is a typed error naming the device and the remedy, before any loading."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleConfigError
from modules.local.engines import EngineUnavailableError
from modules.local.trainable import TrainableModule


@pytest.mark.parametrize("device", ["nonsense", "gpu", "cuda:", "cuda:x", "", 0, None])
def test_a_device_torch_would_not_take_is_refused_at_once(tiny_model_path: Path, device: object) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match="device"):
        TrainableModule(tiny_model_path, device=device)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine_process", [False, True])
def test_cuda_without_a_gpu_is_an_engine_unavailable_error_not_a_bad_model_folder(
    tiny_model_path: Path,  # noqa: F811
    engine_process: bool,
) -> None:
    import torch

    if torch.cuda.is_available():  # pragma: no cover - a GPU machine
        pytest.skip("a CUDA GPU is visible here")
    module = TrainableModule(tiny_model_path, device="cuda", max_batch_size=2, engine_process=engine_process)
    with pytest.raises(EngineUnavailableError) as info:
        module.start()
    message = str(info.value)
    assert "device='cuda'" in message and "device='cpu'" in message and "model folder" not in message
    assert module._backend.model is None  # nothing was loaded


def test_prompter_serve_with_device_cuda_and_no_gpu_says_so(
    tiny_model_path: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    import torch

    if torch.cuda.is_available():  # pragma: no cover - a GPU machine
        pytest.skip("a CUDA GPU is visible here")
    from modules.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", "--model", str(tiny_model_path), "--port", "0", "--device", "cuda"])
    assert info.value.code != 0
    err = capsys.readouterr().err
    assert "no CUDA GPU is visible" in err and "not a model folder" not in err and "Traceback" not in err

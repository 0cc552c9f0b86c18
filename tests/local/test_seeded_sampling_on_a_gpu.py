"""A seeded request on a CUDA model draws from its seed's CPU generator (the GPU's logits moved to it): it
answers, and the same seed answers alike. Runs only where torch sees a CUDA GPU (CI has none; the device
machine's check, scripts/gpu_check.sh, runs it)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_a_seeded_request_on_cuda_answers_and_repeats(tmp_path) -> None:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    path = cached_tiny_model(cache_dir=str(tmp_path))
    on_gpu = TrainableModule(path, device="cuda", max_new_tokens=8).start()
    try:
        for seed in (0, 7, 2**40):
            assert on_gpu("hi", temperature=1.0, seed=seed) == on_gpu("hi", temperature=1.0, seed=seed)
    finally:
        on_gpu.stop()

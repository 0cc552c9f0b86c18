"""The KV cache goes to the model under the keyword its ``forward`` takes.

transformers 5.2x renamed ``past_key_values`` to ``cache`` (the old name warns, and goes in 5.40):
passing the old name printed a FutureWarning in the README's demo and would break on the release
that drops it; older releases only know ``past_key_values``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.kv_rows import cache_keyword
from modules.local.trainable import TrainableModule


@pytest.mark.parametrize("batch", [1, 4])
def test_generating_passes_the_cache_without_a_deprecation_warning(batch: int, tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_batch_size=batch, engine_process=False, max_new_tokens=4)
    try:
        module.start()
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*past_key_values.*")
            assert module.generate(module.prepare([{"role": "user", "content": "hi"}])).text is not None
    finally:
        module.stop()


def test_the_keyword_follows_the_forward_signature() -> None:
    class New:
        def forward(self, input_ids: Any = None, cache: Any = None, use_cache: bool = True) -> None: ...

    class Old:
        def forward(self, input_ids: Any = None, past_key_values: Any = None, use_cache: bool = True) -> None: ...

    class Opaque:
        forward = len  # a builtin: no signature to read

    assert cache_keyword(New()) == "cache"
    assert cache_keyword(Old()) == "past_key_values"
    assert cache_keyword(Opaque()) == "past_key_values"


def test_the_installed_transformers_models_take_the_keyword_we_pass(tiny_model_path: Path) -> None:  # noqa: F811
    import inspect

    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model_path)
    assert cache_keyword(model) in inspect.signature(model.forward).parameters

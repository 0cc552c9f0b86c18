"""``lora_target_modules`` naming no layer of the model is a typed error that lists the layers.

Before the fix, peft's own ``NoMatchingPeftModuleError`` (a bare ``ValueError`` in older peft)
escaped ``finetune``: an untyped error, with no word of which names the model has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from modules.errors import ModuleConfigError
from prompter import ChatPrompter


@pytest.mark.parametrize("targets", [["nonexistent"], "nonsense", ["q_projj", "v_projj"]], ids=str)
def test_lora_targets_matching_no_layer_are_a_typed_error_naming_the_layers(tmp_path: Path, targets: Any) -> None:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    threads = torch.get_num_threads()
    base = TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer.", enable_system=False))
    with pytest.raises(ModuleConfigError, match=r"lora_target_modules=.*its linear layers are .*q_proj.*'all-linear'"):
        base.finetune([{"input": "q", "output": "a"}], tmp_path / "never", lora=True, lora_target_modules=targets,
                      epochs=1, progress=False)  # fmt: skip
    assert not (tmp_path / "never").exists()
    assert torch.get_num_threads() == threads  # restored, as after a run

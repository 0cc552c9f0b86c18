"""``stop()`` unloads the model, as it says: after it, nothing of the module holds the weights.

The decode loop's rows (their key/value buffers and cached prefixes) kept a reference to the model after
the loop ended, so the weights stayed in memory (on a GPU, resident) until the next ``start()`` or until
the module itself was deleted. The loop now lets its rows go when it stops.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule


def test_the_model_is_freed_by_stop_and_loaded_again_by_start(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=4, engine_process=False).start()
    first = module("hi")
    model = weakref.ref(module._backend.model)
    module.stop()
    gc.collect()
    assert model() is None, gc.get_referrers(model())
    module.start()
    try:
        assert module("hi") == first  # greedy: the reloaded model answers alike
    finally:
        module.stop()

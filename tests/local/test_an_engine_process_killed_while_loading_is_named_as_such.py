"""An engine process that dies while it loads the model says so, not that the model folder is bad.

The engine process (``max_batch_size`` > 1) loads the weights in its own
interpreter. Killed meanwhile (the out-of-memory killer, a SIGKILL), its end of
the socket closed before it said ready; ``start()`` then reported the folder as
"not a model folder transformers can load", sending the user to check a folder
that is fine. The error now names the exit code and the remedy, and a second
``start()`` loads the same folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleConfigError
from modules.local.engines.process import ProcessEngine
from modules.local.trainable import TrainableModule


def test_an_engine_process_killed_while_loading_names_its_exit_not_the_folder(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spawn = ProcessEngine.spawn

    def spawn_then_kill(self: ProcessEngine) -> None:
        spawn(self)
        self.process.kill()

    module = TrainableModule(tiny_model_path, max_new_tokens=3, max_batch_size=2)
    monkeypatch.setattr(ProcessEngine, "spawn", spawn_then_kill)
    with pytest.raises(ModuleConfigError) as caught:
        module.start()
    message = str(caught.value)
    assert "exited with code" in message and "start()" in message
    assert "not a model folder" not in message
    monkeypatch.undo()
    with module.start():
        assert isinstance(module("hi"), str)  # the same folder loads and answers

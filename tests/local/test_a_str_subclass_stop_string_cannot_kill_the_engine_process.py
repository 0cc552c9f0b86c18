"""Threat: one caller's ``str`` subclass in ``stop`` ended the engine process, and every request in it.

A call takes ``stop=`` as any str, subclasses included. With the engine process
(``max_batch_size`` > 1) the stop strings were pickled to it as they were, and
a class defined in the caller's script does not unpickle there: the process
died, the requests decoding in it failed with ``ServerStoppedError`` and a new
process had to load the model. Only builtins cross now: the call answers as
with plain strs, in the same engine process.
"""

from __future__ import annotations

from pathlib import Path

from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.engines.process import ProcessEngine
from modules.local.trainable import TrainableModule


class Stop(str):
    """A caller's own str type (this test module is not importable in the engine process)."""


def test_a_stop_string_of_a_str_subclass_answers_as_a_plain_one_in_the_same_engine_process(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    with TrainableModule(tiny_model_path, max_new_tokens=24, max_batch_size=2).start() as module:
        engine = module._backend.batcher
        assert isinstance(engine, ProcessEngine)
        process = engine.process
        full = module("hello there")
        stop = full[3:6]
        assert stop and stop in full
        plain = module("hello there", stop=[stop])
        assert module("hello there", stop=[Stop(stop)]) == plain
        assert module("hello there", stop=Stop(stop)) == plain
        assert engine.process is process and engine.gone is None  # never restarted

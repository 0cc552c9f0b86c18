"""A request the model cannot run gets its own typed error; the requests sharing its batch answer as alone.

Threat: ``TrainableModule.generate`` takes any ``LocalRequest``, and one built
by hand (``dataclasses.replace`` of a prepared one) can hold a token id past
the vocabulary, no ids, or options of the wrong type. Inside the decode loop
such a request failed the whole step: every request decoding beside it got its
``IndexError`` or ``TypeError`` (and in the engine process a seed of the wrong
type ended the process). Checked at submission, the caller gets a
``ModuleConfigError`` naming the field and the remedy, and the neighbour's
answer is the one it gives alone. In process and in the engine process alike.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleConfigError
from modules.local.batching import Job
from modules.local.request import GenerationOptions, LocalRequest
from modules.local.trainable import TrainableModule


class _FirstToken:
    """A streamer (prompter's kind: ``put_ids``) that says when its row has produced a token."""

    def __init__(self) -> None:
        self.started = threading.Event()

    def put_ids(self, ids: list[int]) -> None:
        self.started.set()

    def end(self) -> None:
        self.started.set()


@pytest.fixture(scope="module", params=["in process", "engine process"])
def module(request: pytest.FixtureRequest, tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    batched = TrainableModule(tiny_model_path, max_batch_size=4, engine_process=request.param == "engine process")
    yield batched.start()
    batched.stop()


def _bad_requests(good: LocalRequest) -> dict[str, LocalRequest]:
    ids, options = good.input_ids, good.options
    return {
        "id past the vocabulary": dataclasses.replace(good, input_ids=(*ids, 10**6)),
        "negative id": dataclasses.replace(good, input_ids=(*ids, -5)),
        "no ids": dataclasses.replace(good, input_ids=()),
        "float id": dataclasses.replace(good, input_ids=(*ids, 3.0)),
        "max_new_tokens 0": dataclasses.replace(good, options=dataclasses.replace(options, max_new_tokens=0)),
        "max_new_tokens str": dataclasses.replace(good, options=dataclasses.replace(options, max_new_tokens="5")),
        "temperature str": dataclasses.replace(good, options=dataclasses.replace(options, temperature="1")),
        "top_k negative": dataclasses.replace(good, options=dataclasses.replace(options, temperature=1.0, top_k=-3)),
        "seed str": dataclasses.replace(good, options=dataclasses.replace(options, temperature=1.0, seed="x")),
    }


FIELDS = {
    "id past the vocabulary": "input_ids[",
    "negative id": "input_ids[",
    "no ids": "input_ids",
    "float id": "input_ids[",
    "max_new_tokens 0": "max_new_tokens",
    "max_new_tokens str": "max_new_tokens",
    "temperature str": "temperature",
    "top_k negative": "top_k",
    "seed str": "seed",
}
CASES = list(_bad_requests(LocalRequest((), None, "", (), (1,), GenerationOptions())))


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_a_bad_request_is_a_typed_error_and_its_neighbour_answers_as_alone(module: TrainableModule, case: str) -> None:
    neighbour = module.prepare([{"role": "user", "content": "a neighbour decoding meanwhile"}], max_new_tokens=48)
    alone = module.generate(neighbour)
    bad = _bad_requests(module.prepare([{"role": "user", "content": "hi"}], max_new_tokens=4))[case]
    signal = _FirstToken()
    job = Job(neighbour, None, signal)
    module._backend.batcher.submit(job)
    assert signal.started.wait(60)  # it is decoding: the bad request would join its batch
    with pytest.raises(ModuleConfigError) as caught:
        module.generate(bad)
    message = str(caught.value)
    assert "prepare()" in message  # the remedy
    assert FIELDS[case] in message  # what is wrong
    assert job.done.wait(60)
    assert job.error is None
    assert job.outcome is not None and module._answer(*job.outcome, neighbour).text == alone.text
    assert module.generate(neighbour).text == alone.text  # and the engine still serves


def test_token_ids_of_numpy_or_int_subclasses_run_as_plain_ints(module: TrainableModule) -> None:
    import numpy as np

    class Id(int):
        pass

    good = module.prepare([{"role": "user", "content": "hi"}], max_new_tokens=6)
    plain = module.generate(good).text
    assert module.generate(dataclasses.replace(good, input_ids=tuple(np.int64(i) for i in good.input_ids))).text == plain
    assert module.generate(dataclasses.replace(good, input_ids=tuple(Id(i) for i in good.input_ids))).text == plain



def test_the_engine_process_refuses_a_bad_job_it_is_sent_and_keeps_serving(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its own check, behind the caller's: a job that fails to build there is that job's error, not its exit."""
    import modules.local.engines.process as process_engine

    with TrainableModule(tiny_model_path, max_new_tokens=4, max_batch_size=2).start() as module:
        engine = module._backend.batcher
        process = engine.process
        good = module.prepare([{"role": "user", "content": "hi"}])
        plain = module.generate(good).text
        monkeypatch.setattr(process_engine, "checked_request", lambda request, vocabulary: request)
        bad = dataclasses.replace(good, options=dataclasses.replace(good.options, temperature=1.0, seed="x"))
        with pytest.raises(ModuleConfigError, match="seed"):
            module.generate(bad)
        assert engine.process is process and engine.gone is None
        assert module.generate(good).text == plain

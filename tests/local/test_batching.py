"""Continuous batching (modules.local.batching): exact greedy answers, joins while running, turns, cancels.

The oracle for greedy answers is transformers' own ``model.generate`` on one
prompt alone. The loop runs in this process here (``engine_process=False``), so
its jobs and steps can be watched; ``test_engine_process.py`` runs the same
loop in its own process. Observables instead of clocks: each Job records the loop's step
when it joined and when it ended, so "a request admitted while another is
decoding finishes before it" is asserted on those counts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.batching import QUANTUM, Job
from modules.local.request import LocalRequest
from modules.local.trainable import TrainableModule


@pytest.fixture(scope="module")
def oracle(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    """A started module whose model answers prompts alone through transformers' generate."""
    module = TrainableModule(tiny_model_path).start()
    yield module
    module.stop()


def _alone(module: TrainableModule, request: LocalRequest) -> list[int]:
    """The greedy answer of transformers' generate for *request* alone (stop token removed)."""
    import torch

    b = module._backend
    stops = module._stop_ids()
    with torch.inference_mode():
        out = b.model.generate(
            torch.tensor([list(request.input_ids)]),
            attention_mask=torch.ones((1, len(request.input_ids)), dtype=torch.long),
            max_new_tokens=request.options.max_new_tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            eos_token_id=stops,
            pad_token_id=stops[0],
        )
    new = [int(t) for t in out[0, len(request.input_ids) :]]
    return new[:-1] if new and new[-1] in stops else new


class _Signal:
    """A streamer that sets ``started`` once a generated token arrives (its first put is the prompt)."""

    def __init__(self) -> None:
        self.puts = 0
        self.started = threading.Event()

    def put(self, value: Any) -> None:
        self.puts += 1
        if self.puts >= 2:
            self.started.set()

    def end(self) -> None:
        self.started.set()


@pytest.fixture(scope="module")
def mixed(oracle: TrainableModule) -> tuple[list[LocalRequest], list[list[int]]]:
    """40 requests of different prompt and answer lengths, and their answers alone."""
    requests = [
        oracle.prepare(
            [{"role": "user", "content": f"Item {i}: " + "more words " * (i % 7)}],
            max_new_tokens=2 + (i * 5) % 37,
        )
        for i in range(40)
    ]
    return requests, [_alone(oracle, r) for r in requests]


@pytest.mark.parametrize("max_batch", [1, 3, 8, 64])
def test_greedy_answers_batched_are_bit_identical_to_generate_alone(
    mixed: tuple[list[LocalRequest], list[list[int]]],
    tiny_model_path: Path,  # noqa: F811
    max_batch: int,
) -> None:
    """40 concurrent requests of different prompt and answer lengths: joins, leaves and turns all happen."""
    module = TrainableModule(tiny_model_path, max_batch_size=max_batch, engine_process=False).start()
    try:
        requests, alone = mixed
        assert len({tuple(a) for a in alone}) > 20  # distinct answers: a mix-up would show
        jobs = [Job(r, None, None) for r in requests]
        with ThreadPoolExecutor(len(jobs)) as pool:
            outcomes = list(pool.map(module._backend.batcher.run, jobs))
        assert [ids for ids, _ in outcomes] == alone
        # More requests than rows: some joined after the loop had already stepped others.
        assert any(job.admitted > 0 for job in jobs)
    finally:
        module.stop()


@pytest.mark.parametrize("max_batch", [1, 4])
def test_a_request_admitted_while_another_decodes_finishes_before_it(
    oracle: TrainableModule,
    tiny_model_path: Path,  # noqa: F811
    max_batch: int,
) -> None:
    """A short request that arrives during a long answer does not wait for it (at 1 row: the long one steps aside)."""
    module = TrainableModule(tiny_model_path, max_batch_size=max_batch, engine_process=False).start()
    try:
        msgs = [{"role": "user", "content": "Tell me a long story"}]
        long_request = module.prepare(msgs, max_new_tokens=8 * QUANTUM)
        short_request = module.prepare([{"role": "user", "content": "hi"}], max_new_tokens=3)
        signal = _Signal()
        long_job, short_job = Job(long_request, None, signal), Job(short_request, None, None)
        long_result: list[tuple[list[int], str]] = []
        worker = threading.Thread(target=lambda: long_result.append(module._backend.batcher.run(long_job)))
        worker.start()
        signal.started.wait()
        short_ids, _ = module._backend.batcher.run(short_job)
        still_running = not long_job.done.is_set()
        worker.join()
        long_ids = long_result[0][0]
        if len(long_ids) < 8 * QUANTUM:
            pytest.skip("the tiny model ended the long answer early")  # pragma: no cover - fixed weights
        assert still_running
        assert long_job.admitted < short_job.admitted and short_job.ended_at < long_job.ended_at
        assert short_ids == _alone(oracle, short_request)
        assert long_ids == _alone(oracle, long_request)  # stepping aside and back changed nothing
    finally:
        module.stop()


def test_cancelling_one_row_mid_batch_leaves_the_others_exact(
    oracle: TrainableModule,
    tiny_model_path: Path,  # noqa: F811
) -> None:
    module = TrainableModule(tiny_model_path, max_batch_size=8, engine_process=False).start()
    try:
        requests = [module.prepare([{"role": "user", "content": f"Story {i}"}], max_new_tokens=40) for i in range(6)]
        alone = [_alone(oracle, r) for r in requests]
        cancel = threading.Event()

        class _CancelAfterTwo(_Signal):
            def put(self, value: Any) -> None:
                super().put(value)
                if self.puts == 3:  # the prompt, then two tokens
                    cancel.set()

        jobs = [
            Job(r, cancel if i == 0 else None, _CancelAfterTwo() if i == 0 else None) for i, r in enumerate(requests)
        ]
        with ThreadPoolExecutor(6) as pool:
            outcomes = list(pool.map(module._backend.batcher.run, jobs))
        ids, finish = outcomes[0]
        assert finish == "cancelled" and ids == alone[0][: len(ids)] and len(ids) < len(alone[0])
        assert [o[0] for o in outcomes[1:]] == alone[1:]
    finally:
        module.stop()


def test_seeded_sampling_rows_batch_and_draw_what_they_draw_alone(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_batch_size=16, engine_process=False).start()
    try:
        requests = [
            module.prepare(
                [{"role": "user", "content": f"Poem {i}"}],
                max_new_tokens=12,
                temperature=0.9,
                top_p=0.9,
                top_k=50,
                seed=i,
            )
            for i in range(8)
        ]
        greedy = [module.prepare([{"role": "user", "content": f"Fact {i}"}], max_new_tokens=12) for i in range(8)]
        alone = [module._backend.batcher.run(Job(r, None, None))[0] for r in requests]
        jobs = [Job(r, None, None) for r in [*requests, *greedy]]
        with ThreadPoolExecutor(16) as pool:
            outcomes = list(pool.map(module._backend.batcher.run, jobs))
        assert [o[0] for o in outcomes[:8]] == alone
        # Sampling rows shared steps with others: some of them ran in the same loop steps as a greedy row.
        spans = [range(j.admitted, j.ended_at + 1) for j in jobs]
        assert any(set(spans[i]) & set(spans[k]) for i in range(8) for k in range(8, 16))
    finally:
        module.stop()


def test_a_request_cancelled_while_queued_returns_without_running(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_batch_size=1).start()
    try:
        cancel = threading.Event()
        cancel.set()
        request = module.prepare([{"role": "user", "content": "hi"}], max_new_tokens=5)
        assert module._backend.batcher.run(Job(request, cancel, None)) == ([], "cancelled")
    finally:
        module.stop()

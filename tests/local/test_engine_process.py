"""The decode loop in its own process (modules.local.engines.process): same answers, same endings, no hangs.

With ``max_batch_size`` > 1 a TrainableModule decodes in an engine process by
default. These tests drive it through the module's public calls and check
what a caller sees: greedy answers equal to transformers' ``generate`` alone,
streams equal to plain answers, stop strings, seeded sampling, cancelling,
``stop()`` and a dead engine process ending every waiting caller with a typed
error instead of a hang, and a script without a ``__main__`` guard.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleConfigError, ServerStoppedError
from modules.local.batching import Job
from modules.local.engines.process import ProcessEngine
from modules.local.trainable import TrainableModule

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def alone(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    """One request at a time, in this process: the reference answers."""
    module = TrainableModule(tiny_model_path).start()
    yield module
    module.stop()


@pytest.fixture(scope="module")
def batched(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_batch_size=8).start()
    assert isinstance(module._backend.batcher, ProcessEngine)
    yield module
    module.stop()


def _messages(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Item {i}: " + "more words " * (i % 7)}]


def test_greedy_answers_from_the_engine_process_are_those_of_generate_alone(
    alone: TrainableModule, batched: TrainableModule
) -> None:
    """40 concurrent callers, 8 rows: joins, leaves and turns all happen in the engine process."""
    requests = [batched.prepare(_messages(i), max_new_tokens=2 + (i * 5) % 37) for i in range(40)]
    expected = [alone.generate(r) for r in requests]
    assert len({c.text for c in expected}) > 20
    with ThreadPoolExecutor(40) as pool:
        got = list(pool.map(batched.generate, requests))
    assert [(c.text, c.finish_reason, c.usage) for c in got] == [(c.text, c.finish_reason, c.usage) for c in expected]


def test_a_stream_from_the_engine_process_adds_up_to_the_plain_answer(
    alone: TrainableModule, batched: TrainableModule
) -> None:
    for i in range(3):
        request = batched.prepare(_messages(i), max_new_tokens=30)
        usage: dict[str, int] = {}
        streamed = "".join(d.text for d in batched.generate_stream(request, usage=usage))
        plain = alone.generate(request)
        assert streamed == plain.text
        assert usage["completion_tokens"] == plain.usage["completion_tokens"]


def test_stop_strings_end_answers_in_the_engine_process(alone: TrainableModule, batched: TrainableModule) -> None:
    full = alone.generate(alone.prepare(_messages(5), max_new_tokens=40)).text
    assert len(full) > 8
    stop = full[4:7]
    request = batched.prepare(_messages(5), max_new_tokens=40, stop=[stop])
    cut = full[: full.index(stop)]
    assert batched.generate(request).text == cut
    assert "".join(d.text for d in batched.generate_stream(request)) == cut
    # The engine ended the plain one at the stop string: it generated fewer tokens than the whole answer.
    assert batched.generate(request).usage["completion_tokens"] < len(alone._backend.tokenizer(full)["input_ids"])


def test_seeded_sampling_draws_the_same_tokens_in_the_engine_process(
    tiny_model_path: Path,  # noqa: F811
    batched: TrainableModule,
) -> None:
    here = TrainableModule(tiny_model_path, max_batch_size=8, engine_process=False).start()
    try:
        options = {"max_new_tokens": 12, "temperature": 0.9, "top_p": 0.9, "top_k": 50}
        requests = [batched.prepare(_messages(i), seed=i, **options) for i in range(6)]
        with ThreadPoolExecutor(6) as pool:
            there = [c.text for c in pool.map(batched.generate, requests)]
        assert there == [here.generate(r).text for r in requests]
    finally:
        here.stop()


class _CancelAfter:
    """A streamer that sets *flag* once *n* generated tokens arrived (its first put is the prompt)."""

    def __init__(self, flag: threading.Event, n: int) -> None:
        self.flag, self.n, self.puts = flag, n, 0

    def put(self, value: Any) -> None:
        self.puts += 1
        if self.puts > self.n:
            self.flag.set()

    def end(self) -> None:
        pass


def test_a_cancelled_request_stops_generating_in_the_engine_process(
    alone: TrainableModule, batched: TrainableModule
) -> None:
    request = batched.prepare(_messages(1), max_new_tokens=400)
    full = alone.generate(request)
    assert full.usage["completion_tokens"] > 100
    flag = threading.Event()
    ids, finish = batched._run(request, flag, _CancelAfter(flag, 2))
    assert finish == "cancelled"
    assert 2 <= len(ids) < 100  # forwarded within a few steps, not after the whole answer
    assert batched._decode(ids) == full.text[: len(batched._decode(ids))]


def _endless(module: TrainableModule) -> TrainableModule:
    """*module*, started with an engine process that stops at no token id: answers run to max_new_tokens."""
    make = module._engine_config
    module._engine_config = lambda: dataclasses.replace(make(), stop_ids=())  # type: ignore[method-assign]
    return module.start()


class _Started:
    """A streamer that sets :attr:`going` at the first generated token."""

    def __init__(self) -> None:
        self.going, self.puts = threading.Event(), 0

    def put(self, value: Any) -> None:
        self.puts += 1
        if self.puts > 1:
            self.going.set()

    def end(self) -> None:
        self.going.set()


def _call_in_thread(module: TrainableModule, errors: list[BaseException]) -> tuple[threading.Thread, _Started]:
    request = module.prepare(_messages(2), max_new_tokens=1900)  # about a second of decoding at least
    streamer = _Started()

    def call() -> None:
        try:
            module._run(request, None, streamer)
        except BaseException as exc:  # noqa: BLE001 - inspected by the test
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert streamer.going.wait(30)
    return caller, streamer


def test_stop_ends_callers_waiting_on_the_engine_process_with_a_typed_error(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    module = _endless(TrainableModule(tiny_model_path, max_batch_size=4))
    engine = module._backend.batcher
    process = engine.process
    errors: list[BaseException] = []
    caller, _ = _call_in_thread(module, errors)
    module.stop()
    caller.join(10)
    assert not caller.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], ServerStoppedError)
    assert process.poll() is not None  # the engine process is gone too
    request = module.prepare(_messages(2), max_new_tokens=3)
    with pytest.raises(ServerStoppedError):
        engine.run(Job(request, None, None))  # nothing is accepted once stopped


def test_a_dead_engine_process_fails_its_callers_with_a_typed_error_and_is_replaced(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    """Threat: a request that crashes the engine (or the OOM killer) must not take the server down for good."""
    module = _endless(TrainableModule(tiny_model_path, max_batch_size=4))
    try:
        engine = module._backend.batcher
        dead = engine.process
        errors: list[BaseException] = []
        caller, _ = _call_in_thread(module, errors)
        dead.kill()  # mid-answer: its tokens were arriving
        caller.join(10)
        assert not caller.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], ServerStoppedError)
        assert "ended unexpectedly" in str(errors[0]) and "retry" in str(errors[0])
        # A new engine process starts by itself; requests run again without stop() and start().
        deadline = time.monotonic() + 120
        while not (engine.ready and engine.gone is None) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert engine.process is not dead and engine.process.poll() is None
        answer = module.generate(module.prepare(_messages(3), max_new_tokens=3))
        assert answer.usage["completion_tokens"] == 3
    finally:
        module.stop()
    assert engine.process is None


def _error_of(call: Any, *args: Any) -> BaseException | None:
    try:
        call(*args)
    except BaseException as exc:  # noqa: BLE001 - returned to the test
        return exc
    return None


def _run_script(script: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """*script* in a fresh interpreter (this checkout importable after *cwd*); it must succeed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_a_script_without_a_main_guard_can_start_a_batched_module(tiny_model_path: Path) -> None:  # noqa: F811
    """The engine process is a fresh interpreter: the caller's script is not imported again."""
    script = (
        "from modules.local.trainable import TrainableModule\n"
        f"m = TrainableModule({str(tiny_model_path)!r}, max_new_tokens=3, max_batch_size=4).start()\n"
        "print(type(m._backend.batcher).__name__, m.generate(m.prepare([{'role': 'user', 'content': 'hi'}])).usage)\n"
        "m.stop()\n"
    )
    done = _run_script(script)
    assert done.stdout.startswith("ProcessEngine {'prompt_tokens'")


def test_engine_process_takes_a_bool_and_only_the_transformers_engine(tiny_model_path: Path) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match="engine_process"):
        TrainableModule(tiny_model_path, engine_process="yes")  # type: ignore[arg-type]
    with pytest.raises(ModuleConfigError, match="engine_process"):
        TrainableModule(tiny_model_path, engine="vllm", engine_process=True)
    assert TrainableModule(tiny_model_path, max_batch_size=4).engine_process
    assert not TrainableModule(tiny_model_path, max_batch_size=4, engine_process=False).engine_process
    assert not TrainableModule(tiny_model_path).engine_process
    assert TrainableModule(tiny_model_path, engine_process=True).engine_process


def test_a_model_the_engine_process_cannot_load_is_a_typed_error(tmp_path: Path, tiny_model_path: Path) -> None:  # noqa: F811
    """The weights load only in the engine process: broken weights are named from there, nothing keeps running."""
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_path, folder)
    for weights in folder.glob("*.safetensors"):
        weights.write_bytes(b"not weights")
    module = TrainableModule(folder, max_batch_size=4)
    with pytest.raises(ModuleConfigError, match="is not a model folder transformers can load.*in the engine process"):
        module.start()
    assert module._backend.batcher.process is None  # nothing left running
    assert repr(module).endswith("not started)")


def test_the_weights_live_in_the_engine_process_and_load_here_only_to_score(
    alone: TrainableModule, batched: TrainableModule
) -> None:
    """The caller's process holds the generation config, not the model, until scoring needs the weights."""
    from modules.local.engines.process import WeightsElsewhere

    held = batched._backend.model
    assert isinstance(held, WeightsElsewhere) and held.loaded is None
    assert batched._stop_ids() == alone._stop_ids()  # the eos ids come from the same generation config
    assert held.generation_config.eos_token_id == alone._backend.model.generation_config.eos_token_id
    pairs = [("Question: is it raining?", " yes"), ("Question: is it raining?", " no")]
    assert batched.score(pairs) == alone.score(pairs)  # loaded here for that, once
    assert held.loaded is not None


def test_without_posix_the_default_stays_in_process_and_asking_for_it_is_a_typed_error(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import modules.local.trainable as trainable

    monkeypatch.setattr(trainable, "ENGINE_PROCESS_SUPPORTED", False)
    assert not TrainableModule(tiny_model_path, max_batch_size=4).engine_process
    with pytest.raises(ModuleConfigError, match="POSIX"):
        TrainableModule(tiny_model_path, max_batch_size=4, engine_process=True)


def test_an_application_with_its_own_modules_package_still_gets_our_engine_process(
    tmp_path: Path,
    tiny_model_path: Path,  # noqa: F811
) -> None:
    """The engine process must import our ``modules``, not the application's (first on its path)."""
    app = tmp_path / "app"
    (app / "modules").mkdir(parents=True)
    (app / "modules" / "__init__.py").write_text('MINE = "app"\n', encoding="utf-8")
    script = (
        "from prompter.modules import TrainableModule\n"
        "import modules\n"
        "assert modules.MINE == 'app'\n"
        f"m = TrainableModule({str(tiny_model_path)!r}, max_new_tokens=3, max_batch_size=4).start()\n"
        "done = m.generate(m.prepare([{'role': 'user', 'content': 'hi'}]))\n"
        "print(type(m._backend.batcher).__name__, done.usage['completion_tokens'])\n"
        "m.stop()\n"
    )
    done = _run_script(script, cwd=app)
    assert done.stdout.split() == ["ProcessEngine", "3"]


def test_what_the_engine_process_prints_goes_to_stderr_not_the_callers_stdout(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    """``prompter serve``'s stdout is a protocol (its ``serving ... at URL`` line); the engine must not write there."""
    script = (
        "import modules.local.engines.process as process\n"
        "process._BOOTSTRAP = \"print('engine says hi', flush=True); \" + process._BOOTSTRAP\n"
        "from modules.local.trainable import TrainableModule\n"
        f"m = TrainableModule({str(tiny_model_path)!r}, max_new_tokens=2, max_batch_size=4).start()\n"
        "m.stop()\n"
        "print('parent done')\n"
    )
    done = _run_script(script)
    assert done.stdout == "parent done\n"
    assert "engine says hi" in done.stderr

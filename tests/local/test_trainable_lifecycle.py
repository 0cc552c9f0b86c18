"""TrainableModule's lifecycle: cancelling unread streams, start/stop errors, threads after stop()."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModelNotStartedError, ModuleConfigError
from modules.local.trainable import TrainableModule


def _new_threads_end(before: set[threading.Thread], timeout: float = 2.0) -> list[str]:
    """Join the threads started since *before*; return the names of those still alive."""
    deadline = time.monotonic() + timeout
    for thread in set(threading.enumerate()) - before:
        if thread.name.startswith("prompter-"):
            thread.join(max(0.0, deadline - time.monotonic()))
    return [t.name for t in set(threading.enumerate()) - before if t.name.startswith("prompter-") and t.is_alive()]


def _close(stream: Any) -> None:
    stream.close()


def _exit_context(stream: Any) -> None:
    with stream:
        pass


def _drop(stream: Any) -> None:
    del stream
    gc.collect()


ENDINGS: list[tuple[str, Callable[[Any], None]]] = [("close", _close), ("with", _exit_context), ("dropped", _drop)]


@pytest.mark.parametrize(("how", "end"), ENDINGS, ids=[h for h, _ in ENDINGS])
def test_ending_an_unread_stream_cancels_its_generation(
    started_module: TrainableModule,  # noqa: F811
    how: str,
    end: Callable[[Any], None],
) -> None:
    before = set(threading.enumerate())
    end(started_module.stream("Tell me a long story", max_new_tokens=1900))
    assert _new_threads_end(before) == [], f"{how}: the generation kept running"
    assert started_module._backend.lock.acquire(timeout=1.0)
    started_module._backend.lock.release()


@pytest.mark.parametrize(("how", "end"), ENDINGS, ids=[h for h, _ in ENDINGS])
def test_ending_an_unread_delta_iterator_sets_the_cancel_flag(
    started_module: TrainableModule,  # noqa: F811
    how: str,
    end: Callable[[Any], None],
) -> None:
    cancel = threading.Event()
    request = started_module.prepare([{"role": "user", "content": "Tell me a long story"}], max_new_tokens=1900)
    deltas = started_module.generate_stream(request, cancel)
    if how == "with":
        deltas.close()  # a delta iterator has no context manager; close() is what ChatStream calls
    else:
        end(deltas)
    del deltas
    assert cancel.wait(1.0), how


def test_stream_before_start_raises_at_the_call(tiny_model_path: Path) -> None:  # noqa: F811
    with pytest.raises(ModelNotStartedError, match=r"start\(\)"):
        TrainableModule(tiny_model_path).stream("hi")


def test_calling_after_stop_says_call_start(tiny_model_path: Path) -> None:  # noqa: F811
    m = TrainableModule(tiny_model_path, max_new_tokens=2).start()
    m.stop()
    with pytest.raises(ModelNotStartedError, match=r"start\(\)"):
        m("hi")
    with pytest.raises(ModelNotStartedError, match=r"start\(\)"):
        m.stream("hi")
    assert isinstance(m.start()("hi"), str)  # and it can be started again
    m.stop()


def test_an_empty_folder_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ModuleConfigError, match="model folder") as info:
        TrainableModule(tmp_path).start()
    assert str(tmp_path) in str(info.value)


BAD_SERVER_OPTIONS: list[dict[str, Any]] = [
    {"bogus": 1},
    {"max_concurrency": 0},
    {"max_concurrency": -3},
    {"max_body_bytes": 0},
    {"model_name": ""},
]


@pytest.mark.parametrize("options", BAD_SERVER_OPTIONS, ids=[repr(o) for o in BAD_SERVER_OPTIONS])
def test_bad_server_options_fail_before_loading_and_leave_the_module_stopped(
    tiny_model_path: Path,  # noqa: F811
    options: dict[str, Any],
) -> None:
    m = TrainableModule(tiny_model_path)
    with pytest.raises(ModuleConfigError, match=next(iter(options))):
        m.start(serve=True, **options)
    assert m._backend.model is None and m._backend.server is None
    with pytest.raises(ModelNotStartedError):
        m("hi")


def test_serving_twice_is_a_typed_error(tiny_model_path: Path) -> None:  # noqa: F811
    m = TrainableModule(tiny_model_path, max_new_tokens=2).start(serve=True)
    try:
        url = m.url
        with pytest.raises(ModuleConfigError, match="already serving"):
            m.start(serve=True, port=1234)
        assert m.url == url
        m.start()  # starting without serve while serving is a no-op
    finally:
        m.stop()


@pytest.mark.parametrize("max_batch_size", [1, 4])
def test_no_prompter_threads_outlive_stop(tiny_model_path: Path, max_batch_size: int) -> None:  # noqa: F811
    before = set(threading.enumerate())
    m = TrainableModule(tiny_model_path, max_new_tokens=3, max_batch_size=max_batch_size).start(serve=True)
    m("hi")
    "".join(m.stream("hi"))
    body = {"model": m.name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    assert httpx.post(m.url + "/chat/completions", json=body, timeout=30).status_code == 200
    assert httpx.post(m.url + "/chat/completions", json={**body, "stream": True}, timeout=30).status_code == 200
    m.stop()
    assert _new_threads_end(before, timeout=3.0) == []

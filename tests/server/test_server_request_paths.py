"""Where the server renders a request: a small body on the event loop, a large one in a worker thread.

Both paths must give the same answer, refuse what the other refuses, and keep
a large request's rendering (which can take a while) off the event loop that
serves every client.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

import modules.server.app as server_app
from modules.local.trainable import TrainableModule
from modules.server.body_limit import INLINE_BYTES


@pytest.fixture(scope="module")
def served(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=6).start(serve=True)
    yield module
    module.stop()


def _post(module: TrainableModule, body: dict[str, Any], pad: int = 0) -> httpx.Response:
    raw = json.dumps(body).encode() + b" " * pad  # JSON allows trailing whitespace: same request, bigger body
    return httpx.post(
        module.url + "/chat/completions", content=raw, headers={"content-type": "application/json"}, timeout=60
    )


def test_small_and_large_bodies_render_where_they_should_and_answer_alike(
    served: TrainableModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    original = server_app._without_local_files

    def spy(prepare: Any, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(prepare, *args, **kwargs)

    monkeypatch.setattr(server_app, "_without_local_files", spy)
    body = {"model": "tiny", "messages": [{"role": "user", "content": "Tell me about the sea"}]}
    small = _post(served, body)
    large = _post(served, body, pad=INLINE_BYTES + 10)
    assert small.status_code == large.status_code == 200
    assert small.json()["choices"][0]["message"] == large.json()["choices"][0]["message"]
    assert small.json()["usage"] == large.json()["usage"]
    assert len(threads) == 2
    loop_thread, worker = threads
    assert worker != loop_thread  # the large one left the event loop's thread


def test_both_paths_refuse_the_same_bad_request(served: TrainableModule) -> None:
    bad = {"model": "tiny", "messages": [{"role": "assistant", "content": "no question first"}, {"role": "bogus"}]}
    small, large = _post(served, bad), _post(served, bad, pad=INLINE_BYTES + 10)
    assert small.status_code == large.status_code == 400
    assert small.json() == large.json()

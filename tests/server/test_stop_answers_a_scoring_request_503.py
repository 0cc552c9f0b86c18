"""``stop()`` while a prompt is being scored (``echo`` + ``logprobs`` + ``max_tokens: 0``) answers it
503 ``server_shutting_down`` at once, as it answers every other plain request in flight.

It used to wait for the scoring to end, past uvicorn's graceful timeout, and the client then got a
bare 500 "internal server error".
"""

from __future__ import annotations

import threading
from typing import Any

import httpx

from modules.local.trainable import TrainableModule
from tests.tiny_model_fixture import tiny_model_path

__all__ = ["tiny_model_path"]  # the fixture, by its name


def test_stop_answers_a_scoring_request_in_flight_503(tiny_model_path: Any) -> None:
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=4)
    started = threading.Event()
    release = threading.Event()
    score = module.text_logprobs

    def slow_score(texts: Any, *, top: int = 0) -> Any:  # a scoring that is still running when stop() comes
        started.set()
        release.wait(30)
        return score(texts, top=top)

    module.text_logprobs = slow_score  # type: ignore[method-assign]
    module.start(serve=True)
    answer: dict[str, Any] = {}

    def call() -> None:
        body = {"model": "tiny", "prompt": "Once upon a time", "echo": True, "logprobs": 1, "max_tokens": 0}
        response = httpx.post(module.url + "/completions", json=body, timeout=60)
        answer.update(status=response.status_code, body=response.json())

    client = threading.Thread(target=call)
    client.start()
    try:
        assert started.wait(30)
        module.stop()
    finally:
        release.set()
        client.join(60)
    assert answer["status"] == 503
    assert answer["body"]["error"]["code"] == "server_shutting_down"
    assert answer["body"]["error"]["type"] == "server_error"

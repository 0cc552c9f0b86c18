"""A ``seed`` outside OpenAI's range (a signed 64-bit int) is a 400 naming ``seed``, never folded onto another seed.

The server took any int and sampling folded it modulo 2**63, so ``seed: 2**63``
drew the very tokens of ``seed: 0``. Every seed of the range is still served, as before.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
BODIES: dict[str, dict[str, Any]] = {
    "/chat/completions": {"model": "tiny", "messages": [{"role": "user", "content": "Tell me about cats"}]},
    "/completions": {"model": "tiny", "prompt": "Tell me about cats"},
}
OUTSIDE = [INT64_MAX + 1, INT64_MIN - 1, 2**64, -(2**64), 10**30]


def _sample(module: TrainableModule, path: str, seed: int, stream: bool = False) -> httpx.Response:
    body = {**BODIES[path], "max_tokens": 12, "temperature": 1.5, "seed": seed, "stream": stream}
    return httpx.post(module.url + path, json=body, timeout=60)


def _text(reply: httpx.Response) -> str:
    assert reply.status_code == 200, reply.text
    choice = reply.json()["choices"][0]
    return str(choice["text"] if "text" in choice else choice["message"]["content"])


@pytest.mark.parametrize("path", sorted(BODIES))
@pytest.mark.parametrize("seed", OUTSIDE, ids=["2**63", "-2**63-1", "2**64", "-2**64", "10**30"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_seed_outside_int64_is_refused_naming_seed(
    served_module: TrainableModule,  # noqa: F811
    path: str,
    seed: int,
    stream: bool,
) -> None:
    reply = _sample(served_module, path, seed, stream)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "seed", error
    assert error["message"].startswith("seed: "), error


@pytest.mark.parametrize("path", sorted(BODIES))
def test_every_seed_of_the_range_is_served(served_module: TrainableModule, path: str) -> None:  # noqa: F811
    for seed in (INT64_MIN, -1, 0, INT64_MAX):
        assert _text(_sample(served_module, path, seed)) == _text(_sample(served_module, path, seed)), seed


def test_the_schema_says_the_range(served_module: TrainableModule) -> None:  # noqa: F811
    schema = httpx.get(served_module.url.removesuffix("/v1") + "/openapi.json", timeout=30).json()
    sampling = schema["components"]["schemas"]["ChatCompletionRequest"]["properties"]["seed"]
    bounded = next(s for s in sampling["anyOf"] if s.get("type") == "integer")
    assert (bounded["minimum"], bounded["exclusiveMaximum"]) == (INT64_MIN, INT64_MAX + 1)  # exact as floats too

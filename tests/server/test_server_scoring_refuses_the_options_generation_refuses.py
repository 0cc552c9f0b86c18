"""A scoring request (``/v1/completions`` with ``echo``, ``logprobs``, ``max_tokens: 0``) gets the 400s generation
answers for the same options, and a refusal by name for an option scoring cannot honour.

Scoring left the generation path before its option checks: ``stream_options`` without ``stream``
(a 400 on generation), an empty ``stop`` string (a 400 on generation), and a ``temperature`` or
``top_p`` that would reshape the distribution the logprobs come from were all answered 200 with the
model's plain logprobs, the option ignored. What scoring means for each option:

* ``temperature`` 0 or 1 and ``top_p`` 1 leave the model's own distribution as it is (0 asks for no
  sampling; scoring samples none): served. Any other value asks for logprobs of a scaled or cut
  distribution, which the server does not compute: a 400 naming the option;
* ``seed`` (repeatable sampling) and ``stop`` (ends new text) hold as given with nothing generated;
  ``stop`` is still checked as generation checks it;
* ``stream_options`` without ``stream``: the 400 generation answers.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule
from modules.server.limits import MAX_STOP_CHARS, MAX_STOP_STRINGS

SCORE: dict[str, Any] = {"model": "tiny", "prompt": "the cat sat", "echo": True, "logprobs": 1, "max_tokens": 0}
GENERATE: dict[str, Any] = {"model": "tiny", "prompt": "the cat sat", "max_tokens": 1}

SAME_AS_GENERATION = [
    pytest.param({"stream_options": {"include_usage": True}}, "stream_options", "only allowed with stream=true",
                 id="stream_options-without-stream"),
    pytest.param({"stream": False, "stream_options": {"include_usage": False}}, "stream_options",
                 "only allowed with stream=true", id="stream_options-with-stream-false"),
    pytest.param({"stop": ""}, "stop", "must not be empty", id="empty-stop"),
    pytest.param({"stop": ["x", ""]}, "stop", "must not be empty", id="empty-stop-in-a-list"),
    pytest.param({"stop": ["s"] * (MAX_STOP_STRINGS + 1)}, "stop", f"at most {MAX_STOP_STRINGS}", id="too-many-stops"),
    pytest.param({"stop": "s" * (MAX_STOP_CHARS + 1)}, "stop", f"at most {MAX_STOP_CHARS}", id="too-long-a-stop"),
]


def _post(module: TrainableModule, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(module.url + "/completions", json=body, timeout=60)


@pytest.mark.parametrize(("options", "param", "said"), SAME_AS_GENERATION)
def test_scoring_answers_the_400_generation_answers(
    served_module: TrainableModule,  # noqa: F811
    options: dict[str, Any],
    param: str,
    said: str,
) -> None:
    errors = []
    for body in (GENERATE, SCORE):
        reply = _post(served_module, {**body, **options})
        assert reply.status_code == 400, reply.text
        errors.append(reply.json()["error"])
    assert errors[0] == errors[1], errors
    assert errors[1]["param"] == param and said in errors[1]["message"], errors[1]


@pytest.mark.parametrize(
    ("options", "param"),
    [
        ({"temperature": 0.5}, "temperature"),
        ({"temperature": 2}, "temperature"),
        ({"temperature": 0.0001}, "temperature"),
        ({"top_p": 0.9}, "top_p"),
        ({"temperature": 1, "top_p": 0.5}, "top_p"),
    ],
    ids=["temperature-0.5", "temperature-2", "temperature-near-0", "top_p-0.9", "top_p-with-temperature-1"],
)
def test_an_option_that_reshapes_the_scored_distribution_is_refused_by_name(
    served_module: TrainableModule,  # noqa: F811
    options: dict[str, Any],
    param: str,
) -> None:
    reply = _post(served_module, {**SCORE, **options})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param, error
    assert error["message"].startswith(f"{param}=") and "when scoring" in error["message"], error
    assert "leave it out" in error["message"], error


@pytest.mark.parametrize(
    "options",
    [
        {"temperature": 0},  # what modules.online.scoring sends
        {"temperature": 1.0},
        {"top_p": 1},
        {"seed": 7},
        {"stop": ["cat"]},  # nothing is generated: a stop inside the echoed prompt cuts nothing
        {"stream_options": None},
        {"temperature": None, "top_p": None, "stop": None, "seed": None},
    ],
    ids=["temperature-0", "temperature-1", "top_p-1", "seed", "stop", "null-stream_options", "all-null"],
)
def test_an_option_scoring_honours_as_given_is_served(
    served_module: TrainableModule,  # noqa: F811
    options: dict[str, Any],
) -> None:
    reply = _post(served_module, {**SCORE, **options})
    assert reply.status_code == 200, reply.text
    choice = reply.json()["choices"][0]
    assert choice["text"] == SCORE["prompt"] and len(choice["logprobs"]["tokens"]) >= 3, choice

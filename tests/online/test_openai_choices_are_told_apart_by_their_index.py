"""An OpenAI-compatible answer with several choices (``n=2``, or a server that lists them out of order)
is read by each choice's ``index``: the whole answer takes the choice with index 0, as the stream does, so
``m(...)`` and ``m.stream(...)`` answer the same whatever the order. A choice without an index counts by
its position; an answer with no choice 0 is a typed error naming ``choices``.

Before: the whole answer took ``choices[0]`` by position, so ``[{"index": 1, ...}, {"index": 0, ...}]``
answered with the second candidate's text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fault_server import FaultServer, Reply, Stream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.errors import APIResponseValidationError

KEY = "sk-test-0123456789abcdef"


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def m(server):
    with OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, max_retries=0) as module:
        yield module


def choice(index: int | None, text: str, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"message": {"role": "assistant", "content": text}, "finish_reason": "stop", **extra}
    if index is not None:
        found["index"] = index
    return found


def whole(*choices: dict[str, Any]) -> Reply:
    return Reply(body={"object": "chat.completion", "choices": list(choices)})


def streamed(order: list[int]) -> Stream:
    pieces = []
    for index in order:
        event = {"choices": [{"index": index, "delta": {"content": f"answer {index}"}, "finish_reason": "stop"}]}
        pieces.append(b"data: " + json.dumps(event).encode() + b"\n\n")
    return Stream([*pieces, b"data: [DONE]\n\n"])


def test_the_choice_with_index_0_answers_though_it_comes_second(server, m):
    server.script.append(whole(choice(1, "the other candidate"), choice(0, "the answer")))
    assert m("hi") == "the answer"


@pytest.mark.parametrize(
    ("choices", "expected"),
    [
        ([choice(None, "first"), choice(None, "second")], "first"),
        ([choice(None, "first"), choice(0, "second")], "first"),
        ([choice(2, "two"), choice(None, "position one"), choice(0, "zero")], "zero"),
        ([choice(1, "one"), choice(None, "position 1"), choice(None, "position 2"), choice(0, "zero")], "zero"),
        ([choice(0, "zero", logprobs=None)], "zero"),
    ],
    ids=["no-indexes", "position-0-without-index", "index-0-last", "unindexed-in-between", "one-choice"],
)
def test_a_choice_without_an_index_counts_by_its_position(server, m, choices, expected):
    server.script.append(whole(*choices))
    assert m("hi") == expected


@pytest.mark.parametrize(
    ("choices", "path"),
    [
        ([choice(1, "one"), choice(2, "two")], "choices"),
        ([choice(1, "one"), choice(None, "position 1")], "choices"),
        ([choice(True, "a bool index")], "choices[0].index"),
        ([choice(1, "one"), choice("0", "a str index")], "choices[1].index"),
        ([choice(1, "one"), 7], "choices[1]"),
    ],
    ids=["no-choice-0", "no-choice-0-by-position", "bool-index", "str-index", "choice-a-number"],
)
def test_an_answer_without_choice_0_is_a_validation_error_naming_the_path(server, m, choices, path):
    server.script.append(whole(*choices))
    with pytest.raises(APIResponseValidationError, match="wrong shape") as info:
        m("hi")
    assert f"at {path}:" in str(info.value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations([0, 1, 2]))
def test_whole_and_stream_answer_with_the_same_choice_in_any_order(server, m, order):
    server.script.append(whole(*(choice(i, f"answer {i}") for i in order)))
    server.script.append(streamed(order))
    assert m("hi") == "answer 0" == "".join(m.stream("hi"))

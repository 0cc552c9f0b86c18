"""A small request cannot make the playground build a huge rendering, and a tokenizer's panic is no 500.

Before the fix, ``{"instruction": "{a}" * 1000, "input": '{"a": "x" * 5000}'}`` (each field far under its
limit) made the server build, trace, tokenize and send a 5 000 000-character rendering (1.6 GB at peak;
ten times the slots and it was killed for memory), and a ``pyo3_runtime.PanicException`` from the
tokenizer while counting (a BaseException, which ``except Exception`` lets through) was a plain-text 500.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator

import pytest
import requests

from modules.playground.render import is_panic, render
from modules.playground.state import MAX_OUTPUT_CHARS, FieldError, read_state
from prompter import ChatPrompter

AMPLIFIED = [
    ({"instruction": "{a}" * 1000, "input": json.dumps({"a": "x" * 2000})}, "dict-input"),
    ({"instruction": "{a}" * 1000, "input": "x" * 2000}, "text-input"),
    ({"instruction": json.dumps({"system": "{a}" * 500, "user": "{a}" * 500}), "input": "x" * 2000}, "split"),
    ({"instruction": "{a}" * 1000, "input": json.dumps({"a": "x" * 2000}), "model_format": "qwen2.5"}, "qwen"),
    ({"instruction": "{a}" * 1000, "input": json.dumps({"a": "x" * 2000}), "format": "openai"}, "openai"),
]


@pytest.mark.parametrize("state", [s for s, _ in AMPLIFIED], ids=[i for _, i in AMPLIFIED])
def test_a_repeated_slot_cannot_amplify_a_small_request_into_a_huge_render(
    playground_url: str, state: dict[str, str]
) -> None:
    tracemalloc.start()
    try:
        response = requests.post(playground_url + "api/render", json={"state": state}, timeout=60)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 400, response.text[:200]
    error = response.json()["error"]
    assert (error["type"], error["field"]) == ("RenderTooLarge", "input")
    assert str(MAX_OUTPUT_CHARS) in error["message"] and "name the slot fewer times" in error["message"]
    assert peak < MAX_OUTPUT_CHARS  # refused before the 2 000 000 characters were built (or sent)


def test_the_size_is_refused_before_anything_is_rendered() -> None:
    state = {"instruction": "{a}" * 1000, "input": json.dumps({"a": "x" * 2000})}
    tracemalloc.start()
    try:
        with pytest.raises(FieldError, match="would be 2000000 characters"):
            render(read_state(state))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_every_field_near_its_limit_filled_once_still_renders(playground_url: str) -> None:
    big = "word " * 6_500  # three of them, quoted, fit a field of 100 000 characters
    state = {
        "instruction": "Summarize {doc} for {reader}. " + "Be precise. " * 8_000,
        "input": json.dumps({"doc": big, "reader": big, "input": big}),
        "history": json.dumps([[big, big], [big, "ok"]]),
        "model_format": "qwen2.5",
    }
    response = requests.post(playground_url + "api/render", json={"state": state}, timeout=60)
    assert response.status_code == 200, response.text[:200]
    value = json.loads(state["input"])
    expected = ChatPrompter(state["instruction"]).generate_prompt(
        value, history=json.loads(state["history"]), model_format="qwen2.5"
    )
    assert response.json()["output"] == expected


class PanicException(BaseException):
    """Shaped as pyo3 makes the panic of a Rust extension (``tokenizers``) reach Python."""


PanicException.__module__ = "pyo3_runtime"


def _panicking_count(text: str, spans: tuple[tuple[int, int], ...]) -> int:
    raise PanicException("called `Result::unwrap()` on an `Err` value: memory allocation failed")


@pytest.fixture(scope="module")
def panicking_url() -> Iterator[str]:
    from modules.playground import create_playground_app
    from modules.server.lifecycle import ServerThread

    server = ServerThread(create_playground_app(_panicking_count)).start()
    try:
        yield server.url + "/"
    finally:
        server.stop()


@pytest.mark.parametrize("model_format", [None, "qwen2.5"], ids=["generic", "qwen"])
def test_a_tokenizer_panic_while_counting_tokens_is_no_plain_text_500(
    panicking_url: str, model_format: str | None
) -> None:
    state = {"instruction": "Be brief.", "input": "hi", **({"model_format": model_format} if model_format else {})}
    response = requests.post(panicking_url + "api/render", json={"state": state}, timeout=30)
    assert response.status_code == 200, response.text[:200]
    body = response.json()
    assert body["tokens"] is None  # a count is a nicety: the rendering stands without it
    assert body["output"] == ChatPrompter("Be brief.").generate_prompt("hi", model_format=model_format)
    page = requests.get(panicking_url, params=state, timeout=30)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]


def test_only_a_panic_is_taken_for_one() -> None:
    assert is_panic(PanicException("boom"))
    assert not is_panic(KeyboardInterrupt())
    assert not is_panic(SystemExit(1))
    assert not is_panic(ValueError("x"))

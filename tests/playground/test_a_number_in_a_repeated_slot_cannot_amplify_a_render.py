"""A number in a repeated slot cannot make the playground build a huge rendering.

The size pre-check counted only text slot values, so ``{"instruction": "{a}" * 33000, "input": '{"a": 777...}'}``
with a 480-digit int (JSON takes ints up to 4 300 digits) or a float built a 15 840 090-character prompt before
the 400; docs/playground.md promises that size "is worked out and refused before anything is rendered". A number
now counts as the text it fills in (``str()`` of it, as the prompter writes it).
"""

from __future__ import annotations

import json
import tracemalloc

import pytest
import requests

from modules.playground.state import MAX_OUTPUT_CHARS, FieldError, read_state
from prompter import ChatPrompter

BIG_INT = int("7" * 480)
HUGE_INT = int("7" * 4_000)  # under the 4 300 digits Python reads in JSON
LONG_FLOAT = -1.2345678901234567e-300  # str(): 24 characters, the longest a float fills in


def test_an_int_in_a_repeated_slot_is_counted_as_the_text_it_fills_in() -> None:
    state = {"instruction": "{a}" * 33_000, "input": json.dumps({"a": BIG_INT})}
    with pytest.raises(FieldError, match="^input: the filled instruction would be 15840000 characters, over"):
        read_state(state)
    split = json.dumps({"system": "{a}" * 16_000, "user": "{a}" * 16_000})
    with pytest.raises(FieldError, match="would be 15360000 characters"):
        read_state({"instruction": split, "input": json.dumps({"a": BIG_INT})})
    short = read_state({"instruction": "{a}" * 33_000, "input": json.dumps({"a": 12})})  # 66 000: under the limit
    assert short.input == {"a": 12}


def test_a_number_and_text_in_repeated_slots_are_counted_together() -> None:
    # 16 000 times 40 characters of text (640 000) and 24 of a float (384 000): only their sum is over the limit
    state = {"instruction": "{a}{b}" * 16_000, "input": json.dumps({"a": "x" * 40, "b": LONG_FLOAT})}
    with pytest.raises(FieldError, match="would be 1024000 characters") as caught:
        read_state(state)
    assert caught.value.kind == "RenderTooLarge" and caught.value.field == "input"


def test_a_repeated_int_slot_over_http_is_refused_before_it_is_rendered(playground_url: str) -> None:
    state = {"instruction": "{a}" * 2_000, "input": json.dumps({"a": HUGE_INT})}
    tracemalloc.start()
    try:
        response = requests.post(playground_url + "api/render", json={"state": state}, timeout=60)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 400, response.text[:200]
    error = response.json()["error"]
    assert (error["type"], error["field"]) == ("RenderTooLarge", "input")
    assert error["message"].startswith("input: the filled instruction would be 8000000 characters")
    assert "shorten the value or name the slot fewer times" in error["message"]
    assert peak < MAX_OUTPUT_CHARS  # the 8 000 000 characters were never built


def test_a_number_filled_in_a_few_times_still_renders(playground_url: str) -> None:
    state = {"instruction": "{a} and {a} and {b}", "input": json.dumps({"a": BIG_INT, "b": LONG_FLOAT})}
    response = requests.post(playground_url + "api/render", json={"state": state}, timeout=60)
    assert response.status_code == 200, response.text[:200]
    expected = ChatPrompter(state["instruction"]).generate_prompt({"a": BIG_INT, "b": LONG_FLOAT})
    assert response.json()["output"] == expected

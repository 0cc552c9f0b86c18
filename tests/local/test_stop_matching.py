"""Stop strings and incremental decoding: exact, and with bounded work per piece (linear in the answer).

A long or numerous set of stop strings once held the model for about a minute
(transformers' ``stop_strings`` builds a table over the whole vocabulary per
stop string) and the stream rescanned everything it had sent at each token.
These properties pin the replacement: the same answers as a whole-text search,
with a window that never grows with the answer.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.request import GenerationOptions, LocalRequest
from modules.local.streaming import IncrementalDecoder, StopMatcher, cut_at_stop, first_stop, stream_deltas

ALPHABET = st.sampled_from("ab\n <|>é猫😀")
TEXT = st.text(ALPHABET, max_size=12)
STOPS = st.lists(st.text(ALPHABET, min_size=1, max_size=5), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(TEXT, max_size=30), stops=STOPS)
def test_stop_matcher_finds_what_a_whole_text_search_finds_with_a_bounded_tail(
    pieces: list[str], stops: list[str]
) -> None:
    matcher = StopMatcher(stops)
    seen = ""
    for piece in pieces:
        seen += piece
        found = matcher.feed(piece)
        assert found == first_stop(seen, stops)
        assert len(matcher.tail) <= max(map(len, stops)) - 1  # the window never grows with the answer
        if found is not None:
            break


def _request() -> LocalRequest:
    return LocalRequest(
        messages=(), tools=None, text="", spans=(), input_ids=(1, 2), options=GenerationOptions(max_new_tokens=8)
    )


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(TEXT, max_size=30), stops=st.lists(st.text(ALPHABET, min_size=1, max_size=5), max_size=4))
def test_a_stream_never_shows_a_stop_string_and_equals_the_whole_answer_cut(
    pieces: list[str], stops: list[str]
) -> None:
    done = threading.Thread(target=lambda: None)
    done.start()
    flag = threading.Event()
    outcome: dict[str, Any] = {"ids": [1], "finish": "length"}
    deltas = list(stream_deltas(_request(), iter(pieces), done, flag, outcome, None, tuple(stops), None))
    streamed = "".join(d.text for d in deltas)
    expected, finish = cut_at_stop("".join(pieces), stops, "length")
    assert streamed == expected and deltas[-1].finish_reason == finish
    assert flag.is_set()
    sent = ""
    for delta in deltas:  # no stop string is ever visible in what was sent so far
        sent += delta.text
        assert first_stop(sent, stops) is None


class _CountingTokenizer:
    """The tiny model's tokenizer, counting how many ids each decode is given."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.decoded = 0

    def decode(self, ids: list[int], **kwargs: Any) -> str:
        self.decoded += len(ids)
        return str(self.tokenizer.decode(ids, **kwargs))


def test_incremental_decoding_equals_decoding_the_whole_answer_with_bounded_work(
    tiny_model_path: Path,  # noqa: F811
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path, local_files_only=True)
    text = "Cats purr 🐈 when content; 猫は喉を鳴らす. " * 40 + "<|im_end|> done"
    ids = tokenizer.encode(text, add_special_tokens=False)
    counting = _CountingTokenizer(tokenizer)

    @settings(max_examples=50, deadline=None)
    @given(st.lists(st.integers(1, 4), min_size=1, max_size=len(ids)))
    def check(steps: list[int]) -> None:
        decoder = IncrementalDecoder(counting)
        out, at = [], 0
        for step in steps:
            out.append(decoder.push(ids[at : at + step]))
            at += step
        out.append(decoder.push(ids[at:], final=True))
        whole = tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        assert "".join(out) == whole

    check()
    # Work per id is bounded: a long answer, fed one id at a time, decodes each id a few times, not n times.
    counting.decoded = 0
    decoder = IncrementalDecoder(counting)
    for i in ids:
        decoder.push([i])
    decoder.push([], final=True)
    assert counting.decoded <= 8 * len(ids), (counting.decoded, len(ids))

"""Stray byte tokens cannot make streaming quadratic, and the pieces still join to the whole answer.

A model emitting byte tokens that never complete a UTF-8 character (``0x80`` again and
again) once kept the decoder's text ending in ``"\\ufffd"``: it sent nothing and never moved
its window, so every token decoded the whole run again (8000 tokens: seconds on the
generation thread, growing with the square of the run). The text before the last
``"\\ufffd"`` is settled and goes out; the window moves on while the run goes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.streaming import IncrementalDecoder


class _CountingTokenizer:
    """A tokenizer counting how many ids its decodes are given."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.decoded = 0

    def decode(self, ids: list[int], **kwargs: Any) -> str:
        self.decoded += len(ids)
        return str(self.tokenizer.decode(ids, **kwargs))


@pytest.fixture(scope="module")
def tokenizer(tiny_model_path: Path) -> Any:  # noqa: F811
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_path, local_files_only=True)


def _byte_ids(tokenizer: Any) -> list[int]:
    """The id of each single-byte token (byte-level BPE: one per byte value)."""
    shown = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0  # the byte-level alphabet: printable bytes stand for themselves, the rest from U+0100 on
    for b in range(256):
        if b in shown:
            chars[b] = chr(b)
        else:
            chars[b], extra = chr(256 + extra), extra + 1
    ids = [tokenizer.convert_tokens_to_ids(chars[b]) for b in range(256)]
    assert all(isinstance(i, int) and i != tokenizer.unk_token_id for i in ids)
    return ids


def _whole(tokenizer: Any, ids: list[int]) -> str:
    return str(tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))


def _streamed(decoder: IncrementalDecoder, ids: list[int], steps: list[int]) -> str:
    out, at, k = [], 0, 0
    while at < len(ids):
        step = steps[k % len(steps)] if steps else 1
        out.append(decoder.push(ids[at : at + step]))
        at, k = at + step, k + 1
    out.append(decoder.push([], final=True))
    return "".join(out)


@pytest.mark.parametrize("byte", [0x80, 0xBF, 0xE7, 0xF0, 0xFF], ids=["80", "bf", "e7", "f0", "ff"])
def test_a_long_run_of_stray_byte_tokens_decodes_each_id_a_bounded_number_of_times(tokenizer: Any, byte: int) -> None:
    run = [_byte_ids(tokenizer)[byte]] * 2000
    ids = tokenizer.encode("ok ", add_special_tokens=False) + run + tokenizer.encode(" done 猫", add_special_tokens=False)
    counting = _CountingTokenizer(tokenizer)
    decoder = IncrementalDecoder(counting)
    assert _streamed(decoder, ids, [1]) == _whole(tokenizer, ids)
    assert counting.decoded <= 16 * len(ids), (counting.decoded, len(ids))


def test_stray_byte_tokens_are_sent_while_the_run_goes_on(tokenizer: Any) -> None:
    decoder = IncrementalDecoder(tokenizer)
    byte = _byte_ids(tokenizer)[0x80]
    sent = "".join(decoder.push([byte]) for _ in range(100))
    assert sent == "\ufffd" * 99  # all but the last, which could still be the end of a character


CHARS = ["猫", "é", "😀", "\ufffd", "a", " ", "\n", "ab c"]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_streamed_pieces_of_byte_and_ordinary_tokens_join_to_the_whole_answer(tokenizer: Any, data: Any) -> None:
    byte_ids = _byte_ids(tokenizer)
    parts = data.draw(
        st.lists(
            st.one_of(
                st.integers(0, 255).map(lambda b: [byte_ids[b]]),  # any single byte, valid or not
                st.sampled_from(CHARS).map(lambda c: [byte_ids[b] for b in c.encode()]),  # a character split into bytes
                st.sampled_from(CHARS).map(lambda c: tokenizer.encode(c, add_special_tokens=False)),  # ordinary tokens
                st.integers(0, len(tokenizer) - 1).map(lambda i: [i]),  # any token at all
                st.tuples(st.integers(0x80, 0xFF), st.integers(2, 30)).map(lambda r: [byte_ids[r[0]]] * r[1]),  # a run
            ),
            max_size=40,
        )
    )
    ids = [i for part in parts for i in part]
    steps = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=8))
    counting = _CountingTokenizer(tokenizer)
    assert _streamed(IncrementalDecoder(counting), ids, steps) == _whole(tokenizer, ids)
    assert counting.decoded <= 16 * max(len(ids), 1) + 64, (counting.decoded, len(ids))

"""``trim="oldest"`` finds the fewest oldest turns to drop in a few renders, whatever the history's length.

It used to render and tokenize the whole conversation again for every turn it
dropped: 850 short turns in a 62 KB request took 18 s of CPU (quadratic). The
turns dropped are still the fewest oldest whole turns that make the prompt fit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ContextLengthError
from modules.local.trimming import fit_to_context


def _history(turns: int, words: int = 3) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for i in range(turns):
        out += [{"role": "user", "content": f"question {i} " + "w " * words}, {"role": "assistant", "content": f"a{i}"}]
    return [*out, {"role": "user", "content": "the last question"}]


def _counting(calls: list[int]) -> Any:
    def encode(msgs: list[dict[str, Any]]) -> tuple[Any, list[int]]:
        calls.append(1)
        return None, [0] * sum(len(str(m["content"])) for m in msgs)  # one token a character

    return encode


def test_a_long_history_is_trimmed_in_a_logarithmic_number_of_renders() -> None:
    msgs, calls = _history(2000), []
    fitted = fit_to_context(msgs, _counting(calls), max_new_tokens=10, max_context=1000, trim="oldest")
    assert len(calls) <= 2 + 12  # the whole, the latest turn alone, then bisection over 2000 turns
    assert len(fitted.ids) <= 990


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), min_size=0, max_size=30),
    budget=st.integers(1, 600),
)
def test_the_fewest_oldest_turns_are_dropped(lengths: list[int], budget: int) -> None:
    msgs = [{"role": "system", "content": "sys"}]
    for i, n in enumerate(lengths):
        msgs += [{"role": "user", "content": "u" * n}, {"role": "assistant", "content": f"a{i}"}]
    msgs.append({"role": "user", "content": "last"})
    before = [dict(m) for m in msgs]
    size = lambda ms: sum(len(m["content"]) for m in ms)  # noqa: E731
    # what dropping the oldest turns one at a time, each time rendering again, keeps
    expected = None
    for k in range(len(lengths) + 1):
        kept = msgs[:1] + msgs[1 + 2 * k :]
        if size(kept) <= budget:
            expected = kept
            break
    encode = _counting([])
    if expected is None:
        with pytest.raises(ContextLengthError):
            fit_to_context(msgs, encode, max_new_tokens=10, max_context=budget + 10, trim="oldest")
    else:
        fitted = fit_to_context(msgs, encode, max_new_tokens=10, max_context=budget + 10, trim="oldest")
        assert fitted.messages == expected
        assert fitted.dropped == msgs[1 : len(msgs) - len(expected) + 1]
    assert msgs == before  # the caller's list is not changed


def test_a_real_model_trims_850_short_turns_rendering_a_few_times(tiny_model_path: Path) -> None:  # noqa: F811
    from modules.local import trainable
    from modules.local.trainable import TrainableModule

    calls: list[int] = []
    real = trainable.fit_to_context

    def counted(messages: Any, encode: Any, **kwargs: Any) -> Any:
        def wrapped(msgs: Any) -> Any:
            calls.append(1)
            return encode(msgs)

        return real(messages, wrapped, **kwargs)

    m = TrainableModule(tiny_model_path, max_context=256, max_new_tokens=8, trim="oldest")
    try:
        trainable.fit_to_context = counted
        request = m.prepare(_history(850, words=1)[1:], max_new_tokens=8)
    finally:
        trainable.fit_to_context = real
    assert len(request.input_ids) <= 248
    assert len(calls) <= 2 + 11
    assert m.last_dropped and m.last_dropped[0]["content"].startswith("question 0 ")

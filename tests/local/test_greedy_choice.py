"""A greedy row's token is torch's ``argmax`` of its logits, whichever way it is computed.

The decode loop picks greedy tokens through NumPy on the CPU (a vectorised argmax, several
times faster than torch's at 64 rows): the indices must be torch's exactly, ties (the first
maximum), NaN (counted as the largest, the first one), infinities and views included, or a
batched answer would differ from the one ``generate()`` gives.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modules.local.engines.sampling import choose_tokens, next_tokens
from modules.local.request import GenerationOptions

torch = pytest.importorskip("torch")

_VALUES = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf")]),  # ties and the odd ones
    st.floats(width=32, allow_nan=True, allow_infinity=True),
)


@st.composite
def _logits(draw: Any) -> Any:
    rows = draw(st.integers(1, 9))
    vocab = draw(st.integers(1, 40))
    values = draw(st.lists(_VALUES, min_size=rows * vocab, max_size=rows * vocab))
    return torch.tensor(values, dtype=torch.float32).reshape(rows, vocab)


@settings(max_examples=300, deadline=None)
@given(_logits())
def test_greedy_tokens_are_torchs_argmax_with_ties_nan_and_infinities(logits: Any) -> None:
    assert choose_tokens(logits, []) == logits.argmax(dim=-1).tolist()
    greedy = [(GenerationOptions(temperature=0.0), None)] * logits.shape[0]
    assert next_tokens(logits, greedy) == logits.argmax(dim=-1).tolist()


def test_greedy_tokens_of_a_strided_view_and_of_a_tensor_that_needs_grad() -> None:
    base = torch.randn(6, 3, 50, requires_grad=True)
    last = base[:, -1, :] * 2  # what the loop reads: the last position's logits, not contiguous
    assert choose_tokens(last, []) == last.argmax(dim=-1).tolist()
    with torch.inference_mode():
        view = torch.randn(50, 8).t()  # columns as rows
        assert choose_tokens(view, []) == view.argmax(dim=-1).tolist()


def test_greedy_tokens_of_half_precision_logits_are_torchs() -> None:
    logits = torch.randn(5, 30).to(torch.bfloat16)
    logits[2, 3] = logits[2, 7] = logits[2].max() + 1  # a tie
    assert choose_tokens(logits, []) == logits.argmax(dim=-1).tolist()

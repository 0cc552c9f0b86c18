"""BM25Retriever chooses OpenCompass's examples: rank_bm25's scores, to the bit, ranked by ``np.argsort(...)[::-1]``.

OpenCompass scores every example of the index for each test sample (``BM25Okapi.get_scores``)
and takes the first ``ice_num`` of ``np.argsort(scores)[::-1]``. Ours looks only at the examples
sharing a word with the sample; the reference below is the brute force, written from the
formula: generated corpora with repeated words, duplicate and empty examples, words in more
than half the examples (a negative idf, floored) and samples sharing no word with any example,
so that equal scores decide many choices.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from prompter.templates import retrievers
from prompter.templates.retrievers import BM25Retriever

np = pytest.importorskip("numpy")

K1, B, EPSILON = 1.5, 0.75, 0.25


def brute_force_scores(corpus: list[list[str]], query: list[str]) -> Any:
    """Okapi BM25 of every document, word by word over the whole corpus (``BM25Okapi.get_scores``)."""
    n = len(corpus)
    counts = [{w: doc.count(w) for w in dict.fromkeys(doc)} for doc in corpus]
    holding: dict[str, int] = {}
    for c in counts:
        for w in c:
            holding[w] = holding.get(w, 0) + 1
    raw = {w: math.log(n - f + 0.5) - math.log(f + 0.5) for w, f in holding.items()}
    floor = EPSILON * (sum(raw.values()) / len(raw))
    idf = {w: (v if v >= 0 else floor) for w, v in raw.items()}
    lengths = np.array([len(d) for d in corpus])
    average = sum(len(d) for d in corpus) / n
    score = np.zeros(n)
    for w in query:
        tf = np.array([c.get(w, 0) for c in counts])
        score += (idf.get(w) or 0) * (tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths / average)))
    return score


def generated_case(seed: int) -> tuple[list[dict[str, str]], list[dict[str, str]], int]:
    rng = random.Random(seed)
    vocab = [f"w{j}" for j in range(rng.choice([3, 8, 40]))]
    n = rng.choice([2, 9, 40, 150])
    index = [{"q": " ".join(rng.choices(vocab, k=rng.randint(0, 10))), "a": "x"} for _ in range(n)]
    index[-1] = dict(index[0])  # a duplicate: equal scores for every sample
    tests = [{"q": " ".join(rng.choices([*vocab, "unseen"], k=rng.randint(0, 6))), "a": "y"} for _ in range(25)]
    return index, tests, rng.choice([1, 3, 8, 200])


@pytest.mark.parametrize("seed", range(12))
def test_bm25_chooses_the_examples_of_a_brute_force_argsort_over_every_score(seed: int) -> None:
    index, tests, ice_num = generated_case(seed)
    r = BM25Retriever(index, ice_num=ice_num, output_column="a")
    corpus = [r._words(e) for e in index]
    expected = [
        [int(i) for i in np.argsort(brute_force_scores(corpus, r._words(t)))[::-1][:ice_num]] for t in tests
    ]
    assert r.retrieve(tests) == expected


@pytest.mark.parametrize("seed", range(12))
def test_bm25_scores_are_rank_bm25s_to_the_bit(seed: int) -> None:
    index, tests, _ = generated_case(seed)
    r = BM25Retriever(index, output_column="a")
    corpus = [r._words(e) for e in index]
    for t in tests:
        assert r.scores(t) == brute_force_scores(corpus, r._words(t)).tolist()


def test_bm25_without_numpy_puts_the_later_of_equal_examples_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrievers, "_numpy", lambda: None)
    index = [{"q": "cat"}, {"q": "dog"}, {"q": "cat"}, {"q": "fish"}, {"q": "bird"}]
    r = BM25Retriever(index, ice_num=5)
    assert r.retrieve([{"q": "cat"}]) == [[2, 0, 4, 3, 1]]  # the two cats tie, then the zeros, later first


def test_bm25_with_every_example_empty_ranks_upstreams_nan_scores() -> None:
    index = [{"q": ""}, {"q": " "}, {"q": ""}]
    r = BM25Retriever(index, ice_num=3)
    assert all(math.isnan(s) for s in r.scores({"q": "cat"}))
    nan = np.full(3, math.nan)
    assert r.retrieve([{"q": "cat"}]) == [[int(i) for i in np.argsort(nan)[::-1]]]

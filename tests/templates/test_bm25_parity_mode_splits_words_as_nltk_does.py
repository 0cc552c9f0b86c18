"""In parity mode BM25Retriever splits texts into OpenCompass's words: NLTK's ``word_tokenize``, case kept.

OpenCompass's ``BM25Retriever`` scores ``word_tokenize(text)`` (Punkt sentences, then the improved
Treebank rules), which keeps case. Before, parity mode lower-cased ``\\w+`` runs as the default mode does,
so it chose other examples than upstream: for the sample ``The``, the index ``the the dog`` / ``The cat
runs fast today`` / ``a bird`` gave example 0 where OpenCompass gives example 1. The expected word lists
below were recorded from NLTK 3.10.3's ``word_tokenize`` with its English Punkt model; the default mode is
unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.templates.retrievers import BM25Retriever
from prompter.templates.treebank import treebank_words

CASE_INDEX = [{"q": "the the dog"}, {"q": "The cat runs fast today"}, {"q": "a bird"}]

RECORDED = [
    ('The cat\'s "toy" isn\'t here.', ["The", "cat", "'s", "``", "toy", "''", "is", "n't", "here", "."]),
    ("It costs $3.50, or 1,000 yen at 3:30!",
     ["It", "costs", "$", "3.50", ",", "or", "1,000", "yen", "at", "3:30", "!"]),
    ("I cannot go; we're gonna stay (maybe) -- OK?",
     ["I", "can", "not", "go", ";", "we", "'re", "gon", "na", "stay", "(", "maybe", ")", "--", "OK", "?"]),
    ('He said "yes." Then left.', ["He", "said", "``", "yes", ".", "''", "Then", "left", "."]),
    ("Hi there. How are you? Dr. Smith went to the U.S. on Jan. 5. He left.",
     ["Hi", "there", ".", "How", "are", "you", "?", "Dr.", "Smith", "went", "to", "the", "U.S.", "on", "Jan.",
      "5", ".", "He", "left", "."]),
    ("Pick one:\nA. cats\nB. dogs", ["Pick", "one", ":", "A.", "cats", "B.", "dogs"]),
    ("e.g. this. J. R. R. Tolkien wrote it in 1954. the end",
     ["e.g", ".", "this", ".", "J.", "R.", "R.", "Tolkien", "wrote", "it", "in", "1954.", "the", "end"]),
    ("Wait... what?! «Non» said ‘she’ — twice",
     ["Wait", "...", "what", "?", "!", "«", "Non", "»", "said", "‘", "she", "’", "—", "twice"]),
    ("A [b] {c} <d> e@f #g 50% a&b *x*",
     ["A", "[", "b", "]", "{", "c", "}", "<", "d", ">", "e", "@", "f", "#", "g", "50", "%", "a", "&", "b", "*",
      "x", "*"]),
    ("'Tis rock'n'roll, y'know. O'Neil's", ["'", "Tis", "rock'n'roll", ",", "y'know", ".", "O'Neil", "'s"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "words"), RECORDED, ids=[f"recorded-{i}" for i in range(len(RECORDED))])
def test_words_are_nltk_word_tokenize_words(text: str, words: list[str]) -> None:
    assert treebank_words(text) == words


@pytest.mark.parametrize("compat", ["opencompass", "aisbench"])
def test_parity_mode_keeps_case_and_chooses_upstream_example(compat: str) -> None:
    assert BM25Retriever(CASE_INDEX, ice_num=1, compat=compat).retrieve([{"q": "The"}]) == [[1]]
    assert BM25Retriever(CASE_INDEX, ice_num=1).retrieve([{"q": "The"}]) == [[0]]  # the default mode: one word


def test_parity_mode_scores_the_treebank_words() -> None:
    index = [{"q": "isn't it"}, {"q": "is not"}, {"q": 'say "hi"'}, {"q": "3.50 dollars"}, {"q": "a"}, {"q": "b"}]
    parity = BM25Retriever(index, ice_num=4, compat="opencompass")
    default = BM25Retriever(index, ice_num=4)
    assert parity.scores({"q": "is"})[0] > 0 and default.scores({"q": "is"})[0] == 0  # isn't: is + n't
    assert parity.scores({"q": "``"})[2] > 0  # the opening quote, as upstream writes it
    assert parity.scores({"q": "3.50"})[3] > 0 and default.scores({"q": "3.50"})[3] > 0


class Hostile(str):
    def _boom(self, *_: Any) -> Any:
        raise AssertionError("a method of the caller's str subclass ran")

    __str__ = __format__ = __iter__ = __getitem__ = __len__ = __add__ = _boom


@pytest.mark.parametrize("compat", [None, "opencompass"], ids=["default", "opencompass"])
def test_a_str_subclass_column_is_read_as_its_characters(compat: str | None) -> None:
    index = [{"q": Hostile("The cat")}, {"q": "a dog"}, {"q": "a bird"}]
    r = BM25Retriever(index, ice_num=1, compat=compat)
    assert r.retrieve([{"q": Hostile("cat")}]) == [[0]]

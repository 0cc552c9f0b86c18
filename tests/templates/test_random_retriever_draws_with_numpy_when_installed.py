"""RandomRetriever at dataset scale: each choice permutes the whole index set (as numpy's legacy
``choice(replace=False)`` does), so with numpy installed the draws run in numpy, and without it the
same generator runs in Python. Both give OpenCompass's indices."""

from __future__ import annotations

import pytest

from prompter.templates import retrievers
from prompter.templates.retrievers import _MT19937, RandomRetriever, legacy_choice

INDEX = [{"q": str(i)} for i in range(3000)]
TESTS = [{"q": "t"}] * 40


def _python_indices(seed: int, k: int) -> list[list[int]]:
    state = _MT19937(seed)
    return [legacy_choice(len(INDEX), k, state) for _ in TESTS]


def test_with_numpy_installed_the_choices_are_drawn_by_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    np = pytest.importorskip("numpy")
    expected = _python_indices(7, 5)

    def python_generator_used(*_: object) -> list[int]:
        raise AssertionError("the Python generator ran although numpy is installed")

    monkeypatch.setattr(retrievers, "legacy_choice", python_generator_used)
    assert RandomRetriever(INDEX, ice_num=5, seed=7).retrieve(TESTS) == expected
    np.random.seed(7)  # OpenCompass's own call
    assert expected == [np.random.choice(len(INDEX), 5, replace=False).tolist() for _ in TESTS]


def test_without_numpy_the_same_indices_come_from_the_python_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrievers, "_numpy", lambda: None)
    assert RandomRetriever(INDEX, ice_num=3, seed=43).retrieve(TESTS) == _python_indices(43, 3)
    assert RandomRetriever(INDEX[:4], ice_num=4).retrieve([{}]) == [legacy_choice(4, 4, _MT19937(43))]


@pytest.mark.parametrize("ice_num", [0, 1, 3000])
def test_both_ways_agree_at_the_edges_of_ice_num(ice_num: int, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    with_numpy = RandomRetriever(INDEX, ice_num=ice_num, seed=1).retrieve(TESTS[:3])
    monkeypatch.setattr(retrievers, "_numpy", lambda: None)
    assert RandomRetriever(INDEX, ice_num=ice_num, seed=1).retrieve(TESTS[:3]) == with_numpy
    assert all(isinstance(i, int) for ids in with_numpy for i in ids)

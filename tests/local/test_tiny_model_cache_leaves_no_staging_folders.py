"""``cached_tiny_model`` leaves no half-built staging folder in the cache, whatever happens to the build.

Before, every call with an unknown family left an empty ``<family>-XXXX`` folder in
``<cache>/prompter-tiny`` (and an interrupted build a half-written one), and a process that lost the
race to another building the same model left its whole finished copy there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.local import tiny_model
from modules.local.tiny_model import cached_tiny_model


def test_an_unknown_family_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    for _ in range(3):
        with pytest.raises(ValueError, match="unknown model family 'nope'"):
            cached_tiny_model("nope", cache_dir=str(tmp_path))
    assert list((tmp_path / "prompter-tiny").iterdir()) == []


def test_losing_the_race_to_another_build_leaves_only_the_winner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    winner = cached_tiny_model(cache_dir=str(tmp_path))
    real = tiny_model._complete
    looks: list[Path] = []

    def complete(folder: Path) -> bool:
        looks.append(folder)
        return len(looks) > 1 and real(folder)  # the first look: another process is still writing it

    monkeypatch.setattr(tiny_model, "_complete", complete)
    assert cached_tiny_model(cache_dir=str(tmp_path)) == winner
    assert len(looks) == 2  # it built its own copy, then found the winner's finished
    assert [p.name for p in (tmp_path / "prompter-tiny").iterdir()] == [winner.name]
    assert real(winner)

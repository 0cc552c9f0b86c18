"""A tqdm progress bar, or nothing: one place that imports tqdm (it ships no type stubs)."""

from __future__ import annotations

from typing import Any

__all__ = ["progress_bar"]


def progress_bar(total: int, desc: str, unit: str, show: bool) -> Any:
    """A ``tqdm`` bar on stderr when *show* (and tqdm is installed), else None."""
    if not show:
        return None
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]
    except ImportError:  # progress is a nicety: training runs without it
        return None
    return tqdm(total=total, desc=desc, unit=unit)

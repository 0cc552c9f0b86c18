"""Reading evaluation datasets: JSONL and CSV files, or a Hugging Face ``datasets`` split.

Every sample is a plain ``dict`` of its fields; the caller's files are only read. A
Hugging Face dataset has named splits (``"hf:NAME"``, or a ``datasets.DatasetDict``):
:func:`load_samples` reads one of them, and a split it lacks is a
:class:`~modules.errors.ModuleConfigError` naming the splits it has.

>>> import json, tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.jsonl"
>>> _ = path.write_text(json.dumps({"q": "1+1=?", "a": "2"}) + "\\n")
>>> load_samples(path)
[{'q': '1+1=?', 'a': '2'}]
"""

from __future__ import annotations

import csv
import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from modules.errors import MissingExtraError, ModuleConfigError

__all__ = ["has_splits", "hf_splits", "load_samples"]

_FIELD_LIMIT = 2**31 - 1
"""The longest CSV field read (the csv module's own default is 128 KiB; long-context datasets exceed it)."""


def load_samples(source: str | Path | Any, *, split: str | None = None) -> list[dict[str, Any]]:
    """The samples of ``source``: a ``.jsonl`` / ``.json`` / ``.csv`` path, a list of dicts, or an HF dataset.

    A ``"hf:NAME"`` source (see :func:`hf_splits`) or a ``datasets.DatasetDict`` gives its
    split ``split`` (``"test"`` when None); a file or a list has no splits and ignores it.
    """
    if isinstance(source, list):
        return [_sample(s, f"samples[{i}]") for i, s in enumerate(source)]
    if isinstance(source, str) and source.startswith("hf:"):
        return _split(hf_splits(source), split or "test", source)
    if has_splits(source):
        return _split(source, split or "test", type(source).__name__)
    if hasattr(source, "column_names") and hasattr(source, "__iter__"):  # a datasets.Dataset
        return [_sample(row, f"dataset[{i}]") for i, row in enumerate(source)]
    if not isinstance(source, (str, Path)):
        raise ModuleConfigError(
            f"dataset: expected a .jsonl/.json/.csv path, a list of sample dicts or a datasets.Dataset, "
            f"got {type(source).__name__}"
        )
    path = Path(source)
    if not path.is_file():
        raise ModuleConfigError(f"dataset {str(path)!r}: no such file (give a .jsonl, .json or .csv file)")
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".json", ".csv"):
        raise ModuleConfigError(f"dataset {str(path)!r}: unknown format {suffix!r}; use .jsonl, .json or .csv")
    try:
        return _read(path, suffix)
    except UnicodeDecodeError as exc:
        raise ModuleConfigError(f"dataset {str(path)!r}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def _read(path: Path, suffix: str) -> list[dict[str, Any]]:
    # "utf-8-sig": a byte-order mark (spreadsheets write one) is not part of the first field's name
    if suffix == ".jsonl":
        return _jsonl(path)
    if suffix == ".json":
        data = _json(path.read_text(encoding="utf-8-sig"), path.name)
        if not isinstance(data, list):
            raise ModuleConfigError(f"dataset {str(path)!r}: a .json dataset is a list of objects")
        return [_sample(s, f"{path.name}[{i}]") for i, s in enumerate(data)]
    return _csv(path)


def _csv(path: Path) -> list[dict[str, Any]]:
    # a field may be a long document: the csv module's default limit (128 KiB) is lifted while reading
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, _FIELD_LIMIT))
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            out = []
            for row in reader:
                if None in row:  # more fields than the header names: they would have no column
                    named = len(reader.fieldnames or ())
                    raise ModuleConfigError(
                        f"{path.name}:{reader.line_num}: {named + len(row[None])} fields but the header names "
                        f"{named}; quote fields that hold commas"
                    )
                out.append(dict(row))
            return out
    except csv.Error as exc:
        raise ModuleConfigError(f"{path.name}:{reader.line_num}: not valid CSV ({exc})") from None
    finally:
        csv.field_size_limit(limit)


def _sample(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModuleConfigError(f"{where}: expected an object of fields, got {type(value).__name__}")
    return dict(value)


def _json(text: str, name: str, line: int | None = None) -> Any:
    """``json.loads(text)`` of file ``name`` (its line ``line``, in a .jsonl); JSON it cannot read
    (nested too deep, an int past Python's digit limit) is a :class:`ModuleConfigError` naming where."""
    where = name if line is None else f"{name}:{line}"
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = where if line is not None else f"{name}:{exc.lineno}:{exc.colno}"
        raise ModuleConfigError(f"{at}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise ModuleConfigError(f"{where}: JSON nested too deep to read; flatten the sample") from None
    except ValueError as exc:  # an integer of more digits than Python converts, say
        raise ModuleConfigError(f"{where}: JSON that cannot be read ({exc}); write the value as a string") from None


def _jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            value = _json(line, path.name, number)
            out.append(_sample(value, f"{path.name}:{number}"))
    return out


def has_splits(source: object) -> bool:
    """Whether ``source`` names splits: an ``"hf:NAME"`` source or a ``datasets.DatasetDict``."""
    if isinstance(source, str):
        return source.startswith("hf:")
    return isinstance(source, Mapping) and hasattr(source, "column_names")


def hf_splits(source: str) -> Any:
    """The ``datasets.DatasetDict`` of an ``"hf:NAME"`` source: ``datasets.load_dataset(NAME)``, reusing
    the local cache, where NAME is a Hub dataset or a local folder in a layout it reads
    (``train.jsonl`` / ``test.jsonl`` ..., ``data/test-*.parquet``). The ``datasets`` package is an
    optional extra."""
    try:
        datasets = importlib.import_module("datasets")
    except ImportError as exc:
        raise MissingExtraError("an hf: dataset needs the 'datasets' package: pip install datasets") from exc
    name = source[3:]
    try:
        return datasets.load_dataset(name, download_mode="reuse_cache_if_exists")
    except OSError as exc:  # no such folder, or a Hub dataset neither cached nor reachable
        raise ModuleConfigError(
            f"dataset {source!r}: cannot be loaded ({exc}); give a dataset in the local Hugging Face cache "
            "or a folder that datasets.load_dataset reads"
        ) from None


def _split(splits: Any, split: object, where: str) -> list[dict[str, Any]]:
    if not isinstance(split, str) or split not in splits:
        raise ModuleConfigError(f"{where}: no split {split!r}; its splits are {[str(name) for name in splits]}")
    return [_sample(row, f"{where}[{split!r}][{i}]") for i, row in enumerate(splits[split])]

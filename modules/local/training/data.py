"""Datasets into training examples: JSONL files, lists of records, Hugging Face ``datasets``.

A record is one of:

* **Alpaca** ``{"instruction": ..., "input": ..., "output": ...}`` (``input`` optional);
* **question/answer** ``{<one input key>: ..., "output" | "answer" | "response" | "label": ...}``;
* **slots** ``{<the prompter's slots>..., "output": ...}``: the keys fill the prompter's slots;
* **a pair** ``(input, answer)`` (a 2-item list or tuple, in Python or as a JSON array);
* **chat** ``{"messages": [...]}`` (or ``"conversations"``) in OpenAI form, ending with the
  assistant's answer: the last user turn is the input, the turns before it the history
  (a system message in it is left out: the module's prompter supplies the system prompt).

A file is JSONL (one record a line, UTF-8) or a ``.json`` file holding one JSON array of
records (Alpaca's ``alpaca_data.json``); an error in a record names its index and, from a
file, its place (``record 4 (train.jsonl:5): ...``).

Any record may carry ``history`` and ``tools``. The answer is the label; everything
else goes through the module's prompter exactly as a call would
(:func:`~modules.local.training.example.build_training_example`)::

    examples = module.training_examples("train.jsonl", max_length=512)
    examples.summary   # {"examples": 20, "tokens": 1234, "truncated": 0, "trained_tokens": 180}
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from modules.local.training.example import IGNORE_INDEX, TrainingExample, TrainingExampleError
from modules.local.training.progress import progress_bar
from prompter.errors import PromptError

__all__ = ["ExampleSet", "build_examples", "read_records"]

logger = logging.getLogger(__name__)

_LABEL_KEYS = ("output", "answer", "response", "label", "completion")
_CHAT_KEYS = ("messages", "conversations")


class ExampleSet(list[TrainingExample]):
    """The examples, in order, and ``summary``: examples, tokens, trained tokens, truncated."""

    summary: dict[str, int]


def read_records(data: Any) -> list[Mapping[str, Any]]:
    """Records from a JSONL (or JSON array) path, a list of dicts or a ``datasets.Dataset`` (rows as dicts)."""
    return _read(data)[0]


def _read(data: Any) -> tuple[list[Mapping[str, Any]], list[str | None]]:
    """The records, and where each came from in a file (``train.jsonl:5``; None for data in memory)."""
    if isinstance(data, (str, Path)):
        records, where = _read_file(Path(data))
        return _checked(records, where), list(where)
    if isinstance(data, Mapping):
        splits = [str(k) for k in data if type(data[k]).__name__ in ("Dataset", "IterableDataset")]
        if splits:  # a datasets.DatasetDict
            raise TrainingExampleError(
                f"training data: a DatasetDict holds splits ({', '.join(splits)}); give one, "
                f"e.g. data[{splits[0]!r}]"
            )
        raise TrainingExampleError("training data: give a list of records (or a JSONL path), not one dict")
    if isinstance(data, Iterable):
        records = list(data)  # a datasets.Dataset iterates over its rows as dicts
        return _checked(records, [f"data[{i}]" for i in range(len(records))]), [None] * len(records)
    raise TrainingExampleError(
        f"training data: expected a JSONL path, a list of dicts or a Dataset, got {type(data).__name__}"
    )


def _read_file(path: Path) -> tuple[list[Any], list[str]]:
    """The JSON values of a JSONL file, one a line (or of a ``.json`` file holding one array), and their places."""
    if not path.is_file():
        raise TrainingExampleError(f"training data: {str(path)!r} is not a file (give a JSONL file or a list)")
    if path.suffix.lower() in (".csv", ".tsv"):
        raise TrainingExampleError(
            f"training data: {path.name} is CSV, which is not read directly; load it with "
            f"datasets.load_dataset('csv', data_files=...)['train'] and pass that, or write JSONL"
        )
    raw = path.read_bytes()
    try:
        # utf-8-sig: a byte order mark (Windows editors, Excel exports) is no part of the first record
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = raw[: exc.start].count(b"\n") + 1
        raise TrainingExampleError(
            f"{path.name}:{at}: not UTF-8 text ({exc.reason}); save the file as UTF-8"
        ) from exc
    if path.suffix.lower() == ".json" and text.lstrip().startswith("["):
        try:  # a JSON array of records (Alpaca's alpaca_data.json); else the lines are read as JSONL
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, list):
            return whole, [f"{path.name}[{i}]" for i in range(len(whole))]
    records, where = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise TrainingExampleError(f"{path.name}:{number}: not a JSON line ({exc.msg})") from exc
        where.append(f"{path.name}:{number}")
    return records, where


def _checked(records: list[Any], where: list[str]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for record, place in zip(records, where):
        if isinstance(record, (list, tuple)) and len(record) == 2:
            record = {"input": record[0], "output": record[1]}
        if not isinstance(record, Mapping):
            raise TrainingExampleError(
                f"{place}: expected a record (a JSON object) or an (input, answer) pair, got {type(record).__name__}"
            )
        out.append(record)
    return out


def build_examples(
    module: Any,
    data: Any,
    *,
    max_length: int | None = None,
    train_on_history: bool = False,
    progress: bool = True,
) -> ExampleSet:
    """Every record of *data* as a training example of *module*, with a progress bar and a summary."""
    records, where = _read(data)
    bar = progress_bar(len(records), "examples", "ex", progress)
    out = ExampleSet()
    for i, record in enumerate(records):
        try:
            input, history, tools, label = split_record(record, tuple(getattr(module.prompter, "slots", ())))
            example = module.training_example(
                input, history, tools, label=label, train_on_history=train_on_history, max_length=max_length
            )
        except (TrainingExampleError, PromptError) as exc:  # the same error, naming the record it came from
            located = _at_record(exc, i, where[i])
            if located is exc:
                raise
            raise located from exc
        out.append(example)
        if bar is not None:
            bar.update(1)
    out.summary = {
        "examples": len(out),
        "tokens": sum(len(e["input_ids"]) for e in out),
        "trained_tokens": sum(sum(1 for t in e["labels"] if t != IGNORE_INDEX) for e in out),
        "truncated": sum(1 for e in out if e.truncated),
    }
    if bar is not None:  # the summary stays on screen with the finished bar
        bar.set_postfix({k: v for k, v in out.summary.items() if k != "examples"})
        bar.close()
    logger.info("training examples: %s", out.summary)
    if out.summary["truncated"]:
        logger.warning("%d example(s) were cut at max_length=%s", out.summary["truncated"], max_length)
    return out


def _at_record(error: Exception, index: int, place: str | None) -> Exception:
    """*error* again, its message opening with the record's index and, from a file, its line (``train.jsonl:5``);
    itself if its type takes no message."""
    try:
        return type(error)(f"record {index}: {error}" if place is None else f"record {index} ({place}): {error}")
    except Exception:  # noqa: BLE001 - an error class with another signature: the original says enough
        return error


def split_record(record: Mapping[str, Any], slots: tuple[str, ...]) -> tuple[Any, Any, Any, str]:
    """``(input, history, tools, label)`` of one record (see the module docstring for the shapes)."""
    history = record.get("history")
    tools = record.get("tools")
    chat = next((k for k in _CHAT_KEYS if k in record), None)
    if chat is not None:
        current, earlier = _split_chat(record[chat], chat, history)
        return current, earlier, tools, _last_answer(record[chat], chat)
    key = next((k for k in _LABEL_KEYS if k in record), None)
    if key is None:
        raise TrainingExampleError(
            f"a record needs the answer under one of {', '.join(_LABEL_KEYS)}, or a chat under 'messages'; "
            f"got keys {sorted(map(str, record))}"
        )
    label = record[key]
    if not isinstance(label, str):
        raise TrainingExampleError(f"{key!r}: expected the answer as a str, got {type(label).__name__}")
    rest = {k: v for k, v in record.items() if k not in (key, "history", "tools")}
    if slots:
        return rest, history, tools, label
    if set(rest) <= {"instruction", "input"} and rest:
        return "\n\n".join(str(rest[k]) for k in ("instruction", "input") if rest.get(k)), history, tools, label
    if len(rest) == 1:
        return next(iter(rest.values())), history, tools, label
    return rest, history, tools, label  # the prompter says which keys it cannot place


def _split_chat(messages: Any, key: str, history: Any) -> tuple[Any, Any]:
    if not isinstance(messages, list) or len(messages) < 2:
        raise TrainingExampleError(f"{key!r}: expected a list of messages ending with the assistant's answer")
    if history is not None:
        raise TrainingExampleError(f"give the earlier turns inside {key!r} or as 'history', not both")
    for j, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TrainingExampleError(
                f"{key}[{j}]: expected a message (a dict with role and content), got {type(message).__name__}"
            )
    before = messages[:-1]
    last_user = max((i for i, m in enumerate(before) if isinstance(m, Mapping) and m.get("role") == "user"), default=-1)
    if last_user < 0:
        raise TrainingExampleError(f"{key!r}: no user message before the answer")
    current = before[last_user]
    tail = before[last_user + 1 :]
    current_input = current.get("content") if not tail else [dict(current), *map(dict, tail)]
    return current_input, [dict(m) for m in before[:last_user] if m.get("role") != "system"] or None


def _last_answer(messages: list[Any], key: str) -> str:
    last = messages[-1]
    if not isinstance(last, Mapping) or last.get("role") != "assistant" or not isinstance(last.get("content"), str):
        raise TrainingExampleError(f"{key!r}: the last message must be the assistant's answer, as a str content")
    return str(last["content"])

"""Datasets into training examples: JSONL files, lists of records, Hugging Face ``datasets``.

A record is one of:

* **Alpaca** ``{"instruction": ..., "input": ..., "output": ...}`` (``input`` optional);
* **question/answer** ``{<one input key>: ..., "output" | "answer" | "response" | "label": ...}``;
* **slots** ``{<the prompter's slots>..., "output": ...}``: the keys fill the prompter's slots;
* **a pair** ``(input, answer)`` (a 2-item list or tuple, in Python or as a JSON array);
* **chat** ``{"messages": [...]}`` (or ``"conversations"``) in OpenAI form, ending with the
  assistant's answer: the last user turn is the input, the turns before it the history
  (a system message in it is left out: the module's prompter supplies the system prompt).

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
    """Records from a JSONL path, a list of dicts or a ``datasets.Dataset`` (rows as dicts)."""
    if isinstance(data, (str, Path)):
        path = Path(data)
        if not path.is_file():
            raise TrainingExampleError(f"training data: {str(path)!r} is not a file (give a JSONL file or a list)")
        records = []
        # utf-8-sig: a byte order mark (Windows editors, Excel exports) is no part of the first record
        for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TrainingExampleError(f"{path.name}:{number}: not a JSON line ({exc.msg})") from exc
        return _checked(records, path.name)
    if isinstance(data, Mapping):
        splits = [str(k) for k in data if type(data[k]).__name__ in ("Dataset", "IterableDataset")]
        if splits:  # a datasets.DatasetDict
            raise TrainingExampleError(
                f"training data: a DatasetDict holds splits ({', '.join(splits)}); give one, "
                f"e.g. data[{splits[0]!r}]"
            )
        raise TrainingExampleError("training data: give a list of records (or a JSONL path), not one dict")
    if isinstance(data, Iterable):
        return _checked(list(data), "data")  # a datasets.Dataset iterates over its rows as dicts
    raise TrainingExampleError(
        f"training data: expected a JSONL path, a list of dicts or a Dataset, got {type(data).__name__}"
    )


def _checked(records: list[Any], where: str) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for i, record in enumerate(records):
        if isinstance(record, (list, tuple)) and len(record) == 2:
            record = {"input": record[0], "output": record[1]}
        if not isinstance(record, Mapping):
            raise TrainingExampleError(
                f"{where}[{i}]: expected a record (a JSON object) or an (input, answer) pair, "
                f"got {type(record).__name__}"
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
    records = read_records(data)
    bar = progress_bar(len(records), "examples", "ex", progress)
    out = ExampleSet()
    for i, record in enumerate(records):
        try:
            input, history, tools, label = split_record(record, tuple(getattr(module.prompter, "slots", ())))
            example = module.training_example(
                input, history, tools, label=label, train_on_history=train_on_history, max_length=max_length
            )
        except (TrainingExampleError, PromptError) as exc:  # the same error, naming the record it came from
            located = _at_record(exc, i)
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


def _at_record(error: Exception, index: int) -> Exception:
    """*error* again, its message opening with the record's index (itself if its type takes no message)."""
    try:
        return type(error)(f"record {index}: {error}")
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

"""Datasets into training examples: JSONL files, lists of records, Hugging Face ``datasets``.

A record is one of:

* **Alpaca** ``{"instruction": ..., "input": ..., "output": ...}`` (``input`` optional);
* **question/answer** ``{<one input key>: ..., "output" | "answer" | "response" | "label": ...}``;
* **slots** ``{<the prompter's slots>..., "output": ...}``: the keys fill the prompter's slots;
* **a pair** ``(input, answer)`` (a 2-item list or tuple, in Python or as a JSON array);
* **chat** ``{"messages": [...]}`` (or ``"conversations"``) in OpenAI form, ending with the
  assistant's answer (its text, or its tool calls as the template writes them): the last user
  turn is the input, the turns before it the history (a system message in it is left out:
  the module's prompter supplies the system prompt).

Other keys (an ``id``, a ``source``) are metadata, ignored when the input is found by name
(the chat's messages; ``instruction``/``input``, ``question``, ``prompt`` or ``query``).

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

from modules.errors import ModuleError
from modules.local.training.example import IGNORE_INDEX, TrainingExample, TrainingExampleError, check_options
from modules.local.training.progress import progress_bar
from prompter.errors import PromptError
from prompter.strict_json import NotJSONError, no_constant, strict_loads, unique_pairs

__all__ = ["ExampleSet", "build_examples", "read_records"]

logger = logging.getLogger(__name__)

_LABEL_KEYS = ("output", "answer", "response", "label", "completion")
_CHAT_KEYS = ("messages", "conversations")
_INPUT_KEYS = ("instruction", "input", "question", "prompt", "query")


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
        if type(data).__module__.split(".")[0] == "datasets":
            records = [_arrow_row(r) if isinstance(r, Mapping) else r for r in records]
        return _checked(records, [f"data[{i}]" for i in range(len(records))]), [None] * len(records)
    raise TrainingExampleError(
        f"training data: expected a JSONL path, a list of dicts or a Dataset, got {type(data).__name__}"
    )


def _arrow_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``datasets`` row without the ``None`` its Arrow columns add, at any depth of tools and messages, for
    keys that only other rows have (``"properties": {"city": ..., "zone": None}``): they are no part of the
    data, and inference never sees them. A null meant as data goes in JSON text (tools, arguments)."""
    return {k: _no_nulls(v) if k in ("tools", "history", *_CHAT_KEYS) else v for k, v in row.items()}


def _no_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


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
        # a JSON array of records (Alpaca's alpaca_data.json); else (JSONL of arrays) the lines are read as JSONL
        whole = _array(text, path.name)
        if whole is not None:
            return whole, [f"{path.name}[{i}]" for i in range(len(whole))]
    records, where = [], []
    # JSONL lines end at "\n" alone: str.splitlines would also cut at U+2028, U+0085 or a form feed,
    # which JSON strings may hold as they are
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            records.append(_loads(line, f"{path.name}:{number}"))
            where.append(f"{path.name}:{number}")
    return records, where


def _array(text: str, name: str) -> list[Any] | None:
    """The records of a file holding one JSON array, read element by element so that an error names the line
    (of the syntax error, or where the refused record starts: a pretty-printed array spans many lines); None
    when the text is JSONL whose lines are arrays (its first line is JSON on its own)."""
    decode = json.JSONDecoder(parse_constant=no_constant, object_pairs_hook=unique_pairs).raw_decode
    records: list[Any] = []
    at = _skip_space(text, text.index("[") + 1)
    line, counted = 1, 0
    try:
        more = not text.startswith("]", at)
        while more:  # a value, then "," (another value follows) or "]"
            line, counted = line + text.count("\n", counted, at), at
            value, end = _loads(text, f"{name}:{line}", decode, at)
            records.append(value)
            at = _skip_space(text, end)
            more = text.startswith(",", at)
            if more:
                at = _skip_space(text, at + 1)
            elif not text.startswith("]", at):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        if text[at + 1 :].strip():
            raise json.JSONDecodeError("Extra data", text, _skip_space(text, at + 1))
    except json.JSONDecodeError as exc:
        if _first_line_is_json(text):
            return None
        raise TrainingExampleError(f"{name}:{exc.lineno}: not a JSON line ({exc.msg})") from exc
    return records


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _first_line_is_json(text: str) -> bool:
    line = next((line for line in text.split("\n") if line.strip()), "")
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _loads(text: str, where: str, decode: Any = None, at: int = 0) -> Any:
    """One JSON value, as JSON says (no NaN, no key given twice: the server refuses them too); with *decode*
    (a strict decoder's ``raw_decode``), the value at *at* and where it ends, a syntax error left to the caller."""
    try:
        return strict_loads(text) if decode is None else decode(text, at)
    except json.JSONDecodeError as exc:
        if decode is not None:
            raise
        raise TrainingExampleError(f"{where}: not a JSON line ({exc.msg})") from exc
    except (NotJSONError, RecursionError) as exc:
        detail = str(exc) if isinstance(exc, NotJSONError) else "it nests too deep to read; flatten it"
        raise TrainingExampleError(f"{where}: not a JSON line ({detail})") from exc
    except ValueError as exc:  # an integer of more digits than Python converts (4300): JSON text, not data
        detail = "a number too long to read; write it as a string"
        raise TrainingExampleError(f"{where}: not a JSON line ({detail})") from exc


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
    **unknown: Any,
) -> ExampleSet:
    """Every record of *data* as a training example of *module*, with a progress bar and a summary."""
    if unknown:  # every option is checked before any work, as finetune's are
        raise TrainingExampleError(
            f"training_examples: unknown option {sorted(unknown)[0]!r}; known: max_length, progress, train_on_history"
        )
    check_options(max_length, train_on_history)
    if type(progress) is not bool:
        raise TrainingExampleError(f"progress: expected True or False, got {progress!r}")
    records, where = _read(data)
    bar = progress_bar(len(records), "examples", "ex", progress)
    out = ExampleSet()
    slots, ignored = tuple(getattr(module.prompter, "slots", ())), set[str]()
    for i, record in enumerate(records):
        try:
            input, history, tools, label = split_record(record, slots, ignored)
            example = module.training_example(
                input, history, tools, label=label, train_on_history=train_on_history, max_length=max_length
            )
        except (ModuleError, PromptError) as exc:  # the same error, naming the record it came from
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
    if ignored:
        logger.warning("keys left out of every prompt, as metadata: %s", ", ".join(sorted(ignored)))
    systems = sum(1 for r in records if any(_is_system(m) for k in _CHAT_KEYS for m in _listed(r.get(k))))
    if systems:
        logger.warning(
            "%d chat record(s) carry a system message, left out: the module's prompter supplies the system "
            "prompt, as at inference (set it there, e.g. ChatPrompter(system=...))", systems
        )  # fmt: skip
    return out


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_system(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") == "system"


def _at_record(error: Exception, index: int, place: str | None) -> Exception:
    """*error* again (its type and fields), its message opening with the record's index and, from a file,
    its line (``train.jsonl:5``)."""
    message = f"record {index}: {error}" if place is None else f"record {index} ({place}): {error}"
    try:
        return type(error)(message)
    except Exception:  # noqa: BLE001 - a class with another signature (ContextLengthError's numbers): a copy
        located = type(error).__new__(type(error))
        located.__dict__.update(error.__dict__)
        located.args = (message,)
        return located


def split_record(
    record: Mapping[str, Any], slots: tuple[str, ...], ignored: set[str] | None = None
) -> tuple[Any, Any, Any, Any]:
    """``(input, history, tools, label)`` of one record (see the module docstring for the shapes); the keys
    left out as metadata are added to *ignored*."""
    history = record.get("history")
    tools = record.get("tools")
    ignored = set() if ignored is None else ignored
    chat = next((k for k in _CHAT_KEYS if k in record), None)
    if chat is not None:
        ignored.update(str(k) for k in record if k not in (chat, "history", "tools"))
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
        raise TrainingExampleError(
            f"{key!r}: expected the answer as a str, got {type(label).__name__}; write the answer as text"
        )
    rest = {k: v for k, v in record.items() if k not in (key, "history", "tools")}
    others = [k for k in rest if k not in slots]
    named = [k for k in _INPUT_KEYS if k in others]
    if len(others) > 1 and named:  # the input is named: the other keys are metadata (an id, a source)
        ignored.update(str(k) for k in rest if k not in slots and k not in named)
        rest = {k: v for k, v in rest.items() if k in slots or k in named}
    if slots:
        return rest, history, tools, label  # the prompter says which keys it cannot place
    if set(rest) <= {"instruction", "input"} and rest:
        return _alpaca_input(rest), history, tools, label
    if len(rest) == 1:
        return next(iter(rest.values())), history, tools, label
    if not rest:
        return rest, history, tools, label
    raise TrainingExampleError(
        f"cannot tell which of the keys {sorted(map(str, rest))} holds the input: name it one of "
        f"{', '.join(_INPUT_KEYS)} (other keys are then ignored as metadata), or remove the others"
    )


def _alpaca_input(rest: Mapping[str, Any]) -> Any:
    """Alpaca's input: ``instruction`` and ``input`` joined by a blank line, or the one given (None or "" is
    none), taken as a call takes its input, so its type is checked there and a str subclass is its value."""
    given = [k for k in ("instruction", "input") if rest.get(k) is not None and not _empty_str(rest[k])]
    if len(given) < 2:
        return rest[given[0]] if given else ""
    for k in given:
        value = rest[k]
        if not isinstance(value, str) and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TrainingExampleError(
                f"{k!r}: expected text (a str) to join with the other Alpaca field, got {type(value).__name__}; "
                f"write it as a string"
            )
    return "\n\n".join(str.__str__(v) if isinstance(v, str) else str(v) for v in (rest[k] for k in given))


def _empty_str(value: Any) -> bool:
    return isinstance(value, str) and not str.__str__(value)


def _split_chat(messages: Any, key: str, history: Any) -> tuple[Any, Any]:
    if not isinstance(messages, list) or len(messages) < 2:
        raise TrainingExampleError(
            f"{key!r}: expected a list of messages ending with the assistant's answer, got "
            f"{type(messages).__name__ if not isinstance(messages, list) else f'{len(messages)} message(s)'}; "
            "give at least the user's message and the assistant's answer"
        )
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
        raise TrainingExampleError(f"{key!r}: no user message before the answer; add the user's message it answers")
    current = before[last_user]
    tail = before[last_user + 1 :]
    # Text alone is the input as a call gives it; content parts (a list, OpenAI's multimodal form) or turns after
    # it go as messages, as a call would give them (a list as the input is a list of messages, not of parts).
    plain = not tail and isinstance(current.get("content"), str)
    current_input = current.get("content") if plain else [dict(current), *map(dict, tail)]
    return current_input, [dict(m) for m in before[:last_user] if not _is_system(m)] or None


def _last_answer(messages: list[Any], key: str) -> Any:
    """The answer: the last message's text, or the message itself when it calls tools (learnt as written)."""
    last = messages[-1]
    if isinstance(last, Mapping) and last.get("role") == "assistant" and last.get("tool_calls"):
        return last
    if not isinstance(last, Mapping) or last.get("role") != "assistant" or not isinstance(last.get("content"), str):
        raise TrainingExampleError(
            f"{key!r}: the last message must be the assistant's answer, as a str content or with tool_calls; "
            "end the chat with the assistant's answer"
        )
    return str.__str__(last["content"])  # the text itself, not what a str subclass's __str__ makes of it

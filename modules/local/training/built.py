"""Examples built already (dicts of ``input_ids`` and ``labels``), given to ``finetune`` instead of records.

They are checked before any work (a label list of another length would be padded, silently
misaligned with its ids; an id outside the vocabulary would fail inside the embedding),
copied (the caller's lists are never changed) and cut to ``max_length`` as
``training_examples`` cuts the examples it builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from modules.errors import ModuleConfigError

__all__ = ["built_examples", "check_ids"]


def built_examples(data: Any, max_length: int | None, train_on_history: bool) -> list[Mapping[str, list[int]]] | None:
    """Examples built already, cut to ``max_length`` as ``training_examples`` cuts them; None for records.

    ``train_on_history`` cannot apply to them (their labels already say what is learnt): asking for it is
    an error rather than an option silently left out.
    """
    examples = _as_examples(data)
    if examples is None:
        return None
    if train_on_history:
        raise ModuleConfigError(
            "finetune: train_on_history=True applies when examples are built from records, and these are built "
            "already (their labels say what is learnt); build them with "
            "module.training_examples(data, train_on_history=True), or pass the records"
        )
    if max_length is not None:
        examples = [{k: v[:max_length] for k, v in e.items()} for e in examples]
    return examples


def _as_examples(data: Any) -> list[Mapping[str, list[int]]] | None:
    """Copies of *data* when it is a list (or tuple, or ``datasets.Dataset``) of built examples (dicts with
    input_ids and labels), else None.

    Each is checked (a label list of another length would be padded, silently misaligned with
    its ids); a missing ``attention_mask`` is all ones, as ``training_example`` makes it.
    """
    columns = getattr(data, "column_names", None) if type(data).__module__.split(".")[0] == "datasets" else None
    if isinstance(columns, list) and {"input_ids", "labels"} <= set(columns):
        data = list(data)  # a Dataset of built examples (Dataset.from_list(examples)) iterates over its rows
    if not (
        isinstance(data, (list, tuple))
        and data
        and all(isinstance(e, Mapping) and "input_ids" in e and "labels" in e for e in data)
    ):
        return None
    out: list[Mapping[str, list[int]]] = []
    for i, example in enumerate(data):
        ids, labels = _ints(example["input_ids"], i, "input_ids"), _ints(example["labels"], i, "labels")
        mask = _ints(example["attention_mask"], i, "attention_mask") if "attention_mask" in example else [1] * len(ids)
        if not ids or len(labels) != len(ids) or len(mask) != len(ids):
            raise ModuleConfigError(
                f"finetune: example {i}: input_ids, labels and attention_mask must have one entry per token "
                f"(got {len(ids)}, {len(labels)}, {len(mask)}); build examples with module.training_examples"
            )
        out.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
    return out


def _ints(value: Any, index: int, key: str) -> list[int]:
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # a tensor or an array
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ModuleConfigError(f"finetune: example {index}: {key} must be a list of ints, got {value!r:.80}")
    return list(value)


def check_ids(examples: Sequence[Mapping[str, list[int]]], vocab: int) -> None:
    """Every id (and every label but -100) names a row of the model's embeddings."""
    for i, example in enumerate(examples):
        for key, allowed in (("input_ids", ()), ("labels", (-100,))):
            bad = next((t for t in example[key] if not 0 <= t < vocab and t not in allowed), None)
            if bad is not None:
                raise ModuleConfigError(
                    f"finetune: example {i}: {key} holds {bad}, outside the model's {vocab} token ids"
                )

"""From a pasted OpenCompass/AISBench dataset config to the jobs of one evaluation.

A dataset config names its samples (``path``, and ``index_path`` for the examples
retrievers choose from; the test samples themselves by default, or for a dataset
with splits, ``"hf:NAME"``, its ``train`` split), what the reader takes
(``reader_cfg``: ``input_columns``, ``output_column``, ``train_split`` /
``test_split`` and ``train_range`` / ``test_range`` as OpenCompass reads them) and how prompts are
made (``infer_cfg``: ``ice_template``, ``prompt_template``, ``retriever``,
``inferencer``, each a ``dict(type=...)``). A model config names the module
(``type="TrainableModule"`` with its ``path``, or ``"OnlineChatModule"``) and its
``meta_template``.

>>> from modules.eval.pipeline import plan
>>> p = plan(dict(path=[{"q": "1+1=?", "a": "2"}], reader_cfg=dict(input_columns=["q"], output_column="a"),
...               infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="Q: {q}\\nA: {a}"),
...                              retriever=dict(type="ZeroRetriever"),
...                              inferencer=dict(type="GenInferencer", max_out_len=4))), model={})
>>> p.jobs()[0]["origin_prompt"]
'Q: 1+1=?\\nA: '
"""

from __future__ import annotations

import difflib
import inspect
import random
import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modules.errors import ModuleConfigError
from modules.eval.api_prompts import CHAT_TEMPLATE_META, CHAT_TEMPLATE_TYPES, asks_in_turns, model_type
from modules.eval.datasets import has_splits, hf_splits, load_samples
from modules.eval.inferencers import GenInferencer, MultiTurnGenInferencer, PPLInferencer, Prompts
from prompter.templates import MMPromptTemplate, MultiTurnPromptTemplate, PromptTemplate
from prompter.templates.compat import Compat, check_compat
from prompter.templates.config import build, build_meta, type_name
from prompter.templates.retrievers import BaseRetriever, ZeroRetriever

__all__ = ["INFERENCERS", "MODEL_KEYS", "Plan", "build_module", "plan"]

INFERENCERS: dict[str, Any] = {
    "GenInferencer": GenInferencer,
    "PPLInferencer": PPLInferencer,
    "MultiTurnGenInferencer": MultiTurnGenInferencer,
}
"""The inferencer names a config's ``inferencer=dict(type=...)`` may give."""

MODEL_KEYS = frozenset({
    "type", "abbr", "meta_template", "max_out_len", "max_seq_len", "batch_size", "run_cfg", "stop_words",
    "pred_postprocessor",
})  # fmt: skip
"""Model-config keys that describe the evaluation, not the module's constructor (``max_out_len`` is the
default of an inferencer that sets none, and ``stop_words`` are added to a generating inferencer's
``stopping_criteria``, as in OpenCompass; ``pred_postprocessor`` is read by upstream's scoring, not here)."""


@dataclass
class Plan:
    """One dataset, rendered: its samples, templates, inferencer and (PPL) labels."""

    name: str
    tests: list[dict[str, Any]]
    prompts: Prompts
    inferencer: GenInferencer | PPLInferencer | MultiTurnGenInferencer
    labels: list[Hashable] = field(default_factory=list)

    def jobs(self) -> list[dict[str, Any]]:
        """Every sample's job (its rendered prompt or candidates), in dataset order."""
        ice_ids = self.prompts.retriever.retrieve(self.tests)
        if isinstance(self.inferencer, GenInferencer):
            return self.inferencer.jobs(self.prompts, self.tests, ice_ids)
        if isinstance(self.inferencer, PPLInferencer):
            return self.inferencer.jobs(self.prompts, self.tests, ice_ids, self.labels)
        # multi-turn samples are each a conversation of their own: rendered one by one
        return [
            self.inferencer.job(self.prompts, i, entry, ids)
            for i, (entry, ids) in enumerate(zip(self.tests, ice_ids, strict=True))
        ]


READER_KEYS = ("input_columns", "output_column", "train_split", "train_range", "test_split", "test_range")
READER_UNUSED = ("input_template", "output_template")
"""``reader_cfg`` keys used (the splits only by a dataset that has splits), and OpenCompass's that are accepted
with no effect."""


def _reader(cfg: Any) -> dict[str, Any]:
    """``reader_cfg`` checked: a misspelt key would drop the output column and leak the answer into the prompt."""
    if cfg is not None and not isinstance(cfg, Mapping):
        raise ModuleConfigError(f"reader_cfg: expected a dict, got {type(cfg).__name__}")
    reader = dict(cfg or {})
    unknown = sorted(map(str, set(reader) - {*READER_KEYS, *READER_UNUSED}))
    if unknown:
        hints = [f"{c[0]!r} for {k!r}" for k in unknown if (c := difflib.get_close_matches(k, READER_KEYS, 1))]
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise ModuleConfigError(f"reader_cfg: unknown key(s) {unknown}{hint}; a reader_cfg has {list(READER_KEYS)}")
    output = reader.get("output_column")
    if output is not None and not isinstance(output, str):
        raise ModuleConfigError(f"reader_cfg['output_column']: expected a column name (a str), got {output!r:.60}")
    columns = reader.get("input_columns")
    if isinstance(columns, str):
        reader["input_columns"] = columns.split()  # OpenCompass's reader reads a string as space-separated names
    return reader


def _check_columns(reader: Mapping[str, Any], samples: list[dict[str, Any]]) -> None:
    """A ``ModuleConfigError`` for an ``output_column`` or ``input_columns`` name no sample has: the output
    column would be filled into every prompt (the gold answer shown to the model), an input column read as empty."""
    if not samples:  # no fields to hold the names against
        return
    fields = list(dict.fromkeys(str(k) for sample in samples if isinstance(sample, Mapping) for k in sample))
    columns = reader.get("input_columns")
    wanted = [("output_column", reader.get("output_column"))]
    wanted += [("input_columns", c) for c in columns] if isinstance(columns, (list, tuple)) else []
    for key, name in wanted:
        if name is not None and name not in fields:
            close = difflib.get_close_matches(str(name), fields, 1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ModuleConfigError(
                f"reader_cfg[{key!r}]: {name!r} names no field of the dataset{hint}; "
                f"its fields are {fields}: name one of them"
            )


_SLICE = re.compile(r"\[\s*(-?\d*)\s*:\s*(-?\d*)\s*(?::\s*(-?\d*)\s*)?\]")


def _partial(samples: list[dict[str, Any]], size: Any, where: str) -> list[dict[str, Any]]:
    """OpenCompass's ``load_partial_dataset``: a number draws that many (a fraction: that share) with
    ``random.Random(size)``; ``"[a:b]"`` takes that slice."""
    if size is None:
        return samples
    if isinstance(size, str):
        match = _SLICE.fullmatch(size.strip())
        if match is None:
            raise ModuleConfigError(f"reader_cfg[{where!r}]: expected a slice such as '[:100]', got {size!r}")
        start, stop, step = (int(x) if x else None for x in match.groups())
        if step == 0:
            raise ModuleConfigError(f"reader_cfg[{where!r}]: a slice step cannot be 0 ({size!r})")
        return samples[start:stop:step]
    if isinstance(size, bool) or not isinstance(size, (int, float)):
        raise ModuleConfigError(f"reader_cfg[{where!r}]: expected a number or a slice string, got {size!r}")
    total = len(samples)
    if size >= total or size <= 0:
        return samples
    if size < 1:
        size = int(size * total)
    if not isinstance(size, int):
        raise ModuleConfigError(f"reader_cfg[{where!r}]: a number of samples >= 1 is a whole number, got {size!r}")
    order = list(range(total))
    random.Random(size).shuffle(order)
    return [samples[i] for i in order[:size]]


def _samples(value: Any, base: Path, where: str, reader: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """A file's samples, or (``reader`` given: the ``index_path``) the ``train_split`` of a dataset with splits."""
    if has_splits(value):
        return _split_of(_open_splits(value, base), value, reader or {}, "train_split", "train")
    if isinstance(value, (str, Path)) and not Path(value).is_absolute():
        value = base / value
    try:
        return load_samples(value)
    except ModuleConfigError as exc:
        raise ModuleConfigError(f"{where}: {exc}") from None


def _open_splits(source: Any, base: Path) -> Any:
    """The splits of an ``"hf:NAME"`` source (a relative folder is read beside the config, as files are)."""
    if not isinstance(source, str):
        return source  # a datasets.DatasetDict
    name = source[3:]
    if name and not Path(name).is_absolute() and (base / name).is_dir():
        source = f"hf:{base / name}"
    return hf_splits(source)


def _split_of(splits: Any, source: Any, reader: Mapping[str, Any], key: str, default: str) -> list[dict[str, Any]]:
    split = reader.get(key, default)
    if not isinstance(split, str) or split not in splits:
        what = repr(source) if isinstance(source, str) else "the dataset"
        remedy = ", or give index_path" if key == "train_split" else ""
        raise ModuleConfigError(
            f"reader_cfg[{key!r}]: {what} has no split {split!r}; its splits are "
            f"{[str(name) for name in splits]}: name one of them{remedy}"
        )
    return load_samples(splits, split=split)


def _split_samples(
    dataset: Mapping[str, Any], reader: Mapping[str, Any], base: Path, zero_shot: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The test samples and the index set of a dataset with splits, as OpenCompass's reader takes them: the
    tests from ``test_split`` (``"test"``), the examples from ``train_split`` (``"train"``), never from the tests
    unless the config says so. A zero-shot run reads no examples (a dataset may have only a test split)."""
    source = dataset["path"]
    splits = _open_splits(source, base)
    tests = _split_of(splits, source, reader, "test_split", "test")
    if "index_path" in dataset:
        return tests, _samples(dataset["index_path"], base, "dataset['index_path']", reader)
    if zero_shot and "train_split" not in reader:
        return tests, []
    return tests, _split_of(splits, source, reader, "train_split", "train")


def plan(
    dataset: Mapping[str, Any],
    model: Mapping[str, Any],
    *,
    compat: Compat | None = None,
    base_dir: Path | str = ".",
    limit: int | None = None,
) -> Plan:
    """The evaluation of ``dataset`` for ``model`` (configs as OpenCompass writes them)."""
    compat = check_compat(compat)
    base = Path(base_dir)
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ModuleConfigError(f"limit: expected an int >= 0 (the first N samples), got {limit!r}")
    if not isinstance(dataset, Mapping):
        raise ModuleConfigError(f"dataset: expected a dict config, got {type(dataset).__name__}")
    if "path" not in dataset:
        raise ModuleConfigError("dataset: no 'path' (a .jsonl/.json/.csv file, or a list of samples)")
    reader = _reader(dataset.get("reader_cfg"))
    if not isinstance(model, Mapping):
        raise ModuleConfigError(
            f"model: expected a dict config, dict(type='TrainableModule', path=...), got {type(model).__name__}"
        )
    if not isinstance(dataset.get("infer_cfg") or {}, Mapping):
        raise ModuleConfigError("infer_cfg: expected a dict of prompt_template, retriever and inferencer blocks")
    infer = dict(dataset.get("infer_cfg") or {})
    if has_splits(dataset["path"]):
        zero_shot = _is_zero(infer.get("retriever", {"type": "ZeroRetriever"}))
        whole, index = _split_samples(dataset, reader, base, zero_shot)
    else:
        whole = _samples(dataset["path"], base, "dataset['path']")
        has_index = "index_path" in dataset
        index = _samples(dataset["index_path"], base, "dataset['index_path']", reader) if has_index else whole
    _check_columns(reader, whole)
    samples = _partial(whole, reader.get("test_range"), "test_range")
    # the examples come from the whole dataset: a limit shows the first samples as the full run renders them
    index = _partial(index, reader.get("train_range"), "train_range")
    tests = samples if limit is None else samples[:limit]
    output_column = reader.get("output_column")
    known = ("ice_template", "prompt_template", "retriever", "inferencer")
    unknown = sorted(map(str, set(infer) - set(known)))
    if unknown:
        hints = [f"{close[0]!r} for {key!r}" for key in unknown if (close := difflib.get_close_matches(key, known, 1))]
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise ModuleConfigError(f"infer_cfg: unknown key(s) {unknown}{hint}; an infer_cfg has {list(known)}")
    ice_t = _built(infer, "ice_template", TEMPLATES, compat=compat) if "ice_template" in infer else None
    prompt_t = _built(infer, "prompt_template", TEMPLATES, compat=compat) if "prompt_template" in infer else None
    retriever = _built(
        {"retriever": {"type": "ZeroRetriever"}, **infer},
        "retriever",
        BaseRetriever,
        compat=compat,
        index=index,
        output_column=output_column,
        input_columns=reader.get("input_columns"),
    )
    inferencer_cfg = infer.get("inferencer", {"type": "GenInferencer"})
    default_out = model.get("max_out_len")
    if isinstance(inferencer_cfg, Mapping) and "max_out_len" not in inferencer_cfg and default_out is not None:
        # as OpenCompass's infer task: the model's max_out_len is the default of an inferencer that sets none
        inferencer_cfg = {**inferencer_cfg, "max_out_len": model["max_out_len"]}
    stops = model.get("stop_words")
    if stops and isinstance(inferencer_cfg, Mapping) and model_type(inferencer_cfg.get("type")) != "PPLInferencer":
        # as OpenCompass's HuggingFace models: the model's stop_words stop every generation as well
        given = inferencer_cfg.get("stopping_criteria") or []
        if isinstance(stops, str) or not isinstance(stops, (list, tuple)):
            raise ModuleConfigError(f"model['stop_words']: expected a list of strings, got {stops!r}")
        if isinstance(given, (list, tuple)):  # anything else: the inferencer says what is wrong with it
            inferencer_cfg = {**inferencer_cfg, "stopping_criteria": [*given, *(s for s in stops if s not in given)]}
    inferencer = _built({"inferencer": inferencer_cfg}, "inferencer", tuple(INFERENCERS.values()), INFERENCERS)
    kind = model_type(model.get("type"))
    # as OpenCompass's HuggingFacewithChatTemplate: Gen turns written by the model's chat template (PPL: the text)
    chat = kind in CHAT_TEMPLATE_TYPES and not isinstance(inferencer, PPLInferencer)
    meta = build_meta(model.get("meta_template") or (CHAT_TEMPLATE_META if chat else None), compat=compat)
    api = asks_in_turns(kind, meta) and (chat or kind not in CHAT_TEMPLATE_TYPES)
    prompts = Prompts(retriever, meta, ice_t, prompt_t, api=api, markup=kind in LOCAL_TYPES, chat=chat)
    if isinstance(inferencer, MultiTurnGenInferencer):
        inferencer.meta, inferencer.api, inferencer.chat = meta, prompts.api, prompts.chat
    labels: list[Hashable] = []
    if isinstance(inferencer, PPLInferencer):
        labels = inferencer.labels or retriever.get_labels(samples, ice_template=ice_t, prompt_template=prompt_t)
    source = dataset["path"]
    if isinstance(source, str) and source.startswith("hf:"):
        source = source[3:]
    name = str(dataset.get("abbr") or (Path(source).stem if isinstance(source, (str, Path)) else "data"))
    return Plan(name, tests, prompts, inferencer, labels)


TEMPLATES = (PromptTemplate, MultiTurnPromptTemplate, MMPromptTemplate)
"""What an ``ice_template`` or ``prompt_template`` block builds."""


def _built(infer: Mapping[str, Any], key: str, kinds: Any, registry: Any = None, **options: Any) -> Any:
    """``infer[key]`` built, and checked to be what that key holds (a block is a ``dict(type=...)``)."""
    value = build(infer[key], registry, where=key, **options)
    if not isinstance(value, kinds):
        raise ModuleConfigError(
            f"infer_cfg[{key!r}]: expected a dict(type=...) config block, got {type(value).__name__} "
            f"({value!r:.60}); write it as dict(type=..., ...)"
        )
    return value


def _is_zero(retriever: Any) -> bool:
    """Whether a retriever (config) chooses no examples, so that no index set need be read."""
    if isinstance(retriever, Mapping):
        kind = retriever.get("type")
        return (isinstance(kind, type) or (isinstance(kind, str) and bool(kind.strip()))) and (
            type_name(kind) == "ZeroRetriever"
        )
    return isinstance(retriever, ZeroRetriever)


LOCAL_TYPES = frozenset(
    {"TrainableModule", "HuggingFace", "HuggingFaceCausalLM", "HuggingFaceBaseModel", *CHAT_TEMPLATE_TYPES}
)
"""Model config types that run a local model (a TrainableModule)."""


def build_module(model: Mapping[str, Any]) -> Any:
    """The started module a model config describes (``type`` TrainableModule or OnlineChatModule)."""
    if not isinstance(model, Mapping) or "type" not in model:
        raise ModuleConfigError("model: a dict(type='TrainableModule', path=...) or dict(type='OnlineChatModule', ...)")
    name = type_name(model["type"], "model['type']")
    kwargs = {k: v for k, v in model.items() if k not in MODEL_KEYS}
    if name in LOCAL_TYPES:
        from modules.local.trainable import TrainableModule

        path = kwargs.pop("path", None)
        if path is None:
            raise ModuleConfigError("model: a TrainableModule needs path, the model folder")
        _check_module_options(TrainableModule, kwargs)
        return TrainableModule(path, **kwargs).start()
    if name == "OnlineChatModule":
        from modules.online.module import OnlineChatModule

        _check_module_options(OnlineChatModule, kwargs)
        return OnlineChatModule(**kwargs)
    raise ModuleConfigError(f"model['type']: unknown module {name!r}; use 'TrainableModule' or 'OnlineChatModule'")


def _check_module_options(cls: type, options: Mapping[str, Any]) -> None:
    """A model-config key the module does not take (an OpenCompass model option such as ``model_kwargs``, or a
    misspelling) is an error naming it, never a bare ``TypeError`` from the constructor."""
    parameters = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    takes = [n for n, p in parameters.items() if n != "self" and p.kind is not inspect.Parameter.VAR_POSITIONAL]
    unknown = sorted(str(key) for key in options if key not in takes)
    if unknown:
        hints = [f"{c[0]!r} for {k!r}" for k in unknown if (c := difflib.get_close_matches(k, takes, 1))]
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise ModuleConfigError(
            f"model: {cls.__name__} takes no {unknown}{hint}; remove them from the model config "
            f"(it takes {takes}, and {sorted(MODEL_KEYS)} describe the evaluation)"
        )

"""Answering an evaluation's jobs on a Ray cluster (the optional ``ray`` extra).

``run_plan(..., backend="ray")`` (``prompter eval CONFIG --ray [ADDRESS]``) sends
the jobs not answered yet to Ray as a Ray Dataset, one row per job. The rows are
answered in ``map_batches`` by a pool of ``workers`` actors; each actor builds its
own module from the model config once, as a worker process does, and runs the
inferencer's picklable :meth:`answer` on each job. The records come back in
dataset order and :func:`~modules.eval.runner.run_plan` appends them to the
predictions file as they come, so the file, its resume and its check against
another evaluation's records are those of the one-process run.

The prompts are rendered by the driver, before Ray starts: a retriever chooses
examples over the whole index, rendering a dataset takes milliseconds
(docs/evaluation.md, "Speed"), and resuming checks each record already written
against its prompt. What the cluster spreads is the model's work.

Each row carries its job as one JSON string, so Ray's columnar blocks never
reinterpret a job's mixed fields (labels, pairs, a ``None`` gold).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from modules.errors import MissingExtraError, ModuleConfigError, ModuleError
from prompter.errors import PromptError

__all__ = ["import_ray", "ray_answers"]


def import_ray() -> Any:
    """The ``ray`` package, or a :class:`MissingExtraError` naming the extra to install."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise MissingExtraError(
            "backend='ray' (prompter eval --ray) needs Ray: pip install 'prompter-kit[ray]'"
        ) from exc


def _failure(exc: BaseException) -> str:
    return json.dumps({"failed": f"{type(exc).__name__}: {exc}"})


class _Answerer:
    """A Ray actor's state: the module it built and the inferencer; answers one batch of rows.

    A mistake of ours (a ``ModuleError`` or ``PromptError``: a model folder that is not
    there, a prompt too long) comes back as a row saying so, and the driver raises it as
    one :class:`ModuleConfigError`; Ray would otherwise report only that an actor died.
    """

    def __init__(self, model: Mapping[str, Any], inferencer: Any) -> None:
        from modules.eval.pipeline import build_module

        self.inferencer = inferencer
        self.module: Any = None
        self.failed: str | None = None
        try:
            self.module = build_module(model)
        except (ModuleError, PromptError) as exc:
            self.failed = _failure(exc)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        indices = [int(i) for i in batch["index"]]
        records = []
        for job in batch["job"]:
            if self.failed is not None:
                records.append(self.failed)
                continue
            try:
                records.append(json.dumps(self.inferencer.answer(self.module, json.loads(str(job)))))
            except (ModuleError, PromptError) as exc:
                records.append(_failure(exc))
        return {"index": indices, "record": records}


def ray_answers(
    inferencer: Any,
    pending: list[dict[str, Any]],
    model: Mapping[str, Any],
    *,
    workers: int,
    address: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Each pending job's record, in the order of ``pending``, answered by ``workers`` Ray actors.

    A Ray already initialized in this process is used as it is; otherwise Ray is
    started (``address=None``: a local instance, or the cluster ``RAY_ADDRESS`` names)
    or joined (``address``: ``"auto"`` or ``"ray://HOST:PORT"``), and shut down after.
    """
    ray = import_ray()
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ModuleConfigError(f"workers: expected an int >= 1, got {workers!r}")
    if not pending:
        return  # everything was answered before: no need to start Ray
    owned = not ray.is_initialized()
    if owned:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False)
    options = ray.data.DataContext.get_current().execution_options
    kept = options.preserve_order
    options.preserve_order = True  # records in dataset order, written as they come (restored after)
    try:
        rows = [{"index": job["index"], "job": json.dumps(job, ensure_ascii=False)} for job in pending]
        answered = ray.data.from_items(rows, override_num_blocks=min(len(rows), 4 * workers)).map_batches(
            _Answerer,
            fn_constructor_args=(dict(model), inferencer),
            batch_size=1,
            concurrency=workers,
            num_cpus=1,
            batch_format="numpy",
        )
        expected = iter(job["index"] for job in pending)
        for row in answered.iter_rows():
            record: dict[str, Any] = json.loads(str(row["record"]))
            if "failed" in record and "index" not in record:
                raise ModuleConfigError(f"a Ray worker failed on sample {row['index']}: {record['failed']}")
            if record.get("index") != next(expected, None):  # preserve_order is what the resume relies on
                raise ModuleConfigError(f"ray: a record came back out of order (sample {record.get('index')})")
            yield record
    finally:
        options.preserve_order = kept
        if owned:
            ray.shutdown()

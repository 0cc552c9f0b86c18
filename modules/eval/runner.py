"""Running an evaluation at dataset scale: predictions JSONL, progress, resume, worker processes.

:func:`run_eval` renders every sample's job in this process (pure and fast), then
answers the jobs not answered yet, in one process or in ``workers`` processes
(each builds its own module from the model config), and appends one JSON line per
sample to ``output`` in dataset order, flushed as it goes.

Resuming: a later run over the same output file keeps the records already there
(a torn last line, from an interruption mid-write, is cut off) and answers only
the rest. A record whose prompt differs from what the config renders now means the
file belongs to another evaluation: that is an error, never a silent mix.

Worker processes answer jobs independently and each job is scored in one batch of
its own, so predictions do not depend on ``workers``. ``backend="ray"`` answers
them on a Ray cluster instead (:mod:`modules.eval.ray_backend`), into the same file.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from modules.errors import ModuleConfigError
from modules.eval.api_prompts import model_type
from modules.eval.pipeline import LOCAL_TYPES, Plan, build_module, plan
from prompter.templates.compat import Compat

__all__ = ["Backend", "Progress", "RunStats", "config_parts", "read_done", "run_eval", "run_plan"]

Backend = Literal["process", "ray"]
"""Where jobs are answered: this process and its worker processes, or a Ray cluster."""


@dataclass(frozen=True)
class RunStats:
    """What a run did: samples in the dataset, already answered before it, answered by it."""

    total: int
    resumed: int
    answered: int
    output: Path


_RECORD_START = b'{"index": '
"""How every record line begins (the writer's ``json.dumps`` of a record with ``index`` first)."""


def _torn(raw: bytes) -> bool:
    """Whether an unterminated last line is a record cut short by an interrupted write."""
    return raw.startswith(_RECORD_START) or _RECORD_START.startswith(raw)


def read_done(path: Path, jobs: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The records already in ``path``, checked against ``jobs``; a torn last line is cut off.

    Only an unterminated last line that begins as a record does is torn: any other line that is
    no record means the file is not a predictions file, which is an error and stays as it is.
    """
    if not path.exists():
        return {}
    done: dict[int, dict[str, Any]] = {}
    keep = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.endswith(b"\n") and _torn(raw):
                break  # an interrupted write: the sample is answered again
            try:
                record = json.loads(raw) if raw.endswith(b"\n") else None
            except (ValueError, RecursionError):  # no JSON, non-UTF-8, too deep, an int past the digit limit
                record = None
            index = record.get("index") if isinstance(record, dict) else None
            if record is None or not isinstance(index, int):
                raise ModuleConfigError(
                    f"{path}:{number}: not a predictions record; this file is no predictions file of an "
                    "evaluation and is left as it is: choose another output (--output)"
                )
            if not 0 <= index < len(jobs):
                raise ModuleConfigError(f"{path}: a record with index {index!r} is not a sample of this dataset")
            if record.get("origin_prompt") != jobs[index]["origin_prompt"]:
                raise ModuleConfigError(
                    f"{path}: the record of sample {index} was written for another prompt; this file belongs "
                    "to another evaluation: delete it or choose another output"
                )
            done[index] = record
            keep += len(raw)
    if keep != path.stat().st_size:
        with path.open("r+b") as handle:
            handle.truncate(keep)
    return done


_WORKER: dict[str, Any] = {}


def _init_worker(model: Mapping[str, Any], inferencer: Any) -> None:
    _WORKER["inferencer"] = inferencer
    # a pool replaces a worker whose initializer raises, for ever (a wrong model path hung the run):
    # the worker keeps the error and raises it from its first job, which ends the run with it
    try:
        _WORKER["module"] = build_module(model)
    except Exception as exc:
        _WORKER["error"] = exc


def _answer_in_worker(job: dict[str, Any]) -> dict[str, Any]:
    if "error" in _WORKER:
        raise _WORKER["error"]
    record: dict[str, Any] = _WORKER["inferencer"].answer(_WORKER["module"], job)
    return record


class Progress:
    """A progress line on stderr: redrawn in place on a terminal, every tenth otherwise (logs stay short)."""

    def __init__(self, total: int, initial: int, enabled: bool, stream: Any = None) -> None:
        self.total, self.done, self.enabled = total, initial, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self._last_tenth = -1
        self._draw(force=True)

    def update(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        tenth = self.done * 10 // max(self.total, 1)
        if not (self.tty or force or tenth != self._last_tenth or self.done == self.total):
            return
        self._last_tenth = tenth
        rate = self.done / max(time.monotonic() - self.start, 1e-9)
        line = f"eval: {self.done}/{self.total} samples ({100 * self.done // max(self.total, 1)}%, {rate:.1f}/s)"
        self.stream.write(("\r" + line) if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def run_plan(
    the_plan: Plan,
    output: str | Path,
    *,
    model: Mapping[str, Any] | None = None,
    module: Any = None,
    workers: int = 1,
    progress: bool = True,
    backend: Backend = "process",
    ray_address: str | None = None,
) -> RunStats:
    """Answer ``the_plan``'s jobs with ``module`` (or modules built from ``model``) into ``output``.

    ``backend="ray"`` answers them with ``workers`` Ray actors (:mod:`modules.eval.ray_backend`),
    on the cluster at ``ray_address`` or a local Ray; the predictions file is the same.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ModuleConfigError(f"workers: expected an int >= 1, got {workers!r}")
    if backend not in ("process", "ray"):
        raise ModuleConfigError(f"backend: expected 'process' or 'ray', got {backend!r}")
    if module is None and model is None:
        raise ModuleConfigError("give a module, or a model config to build one from")
    if module is not None and (workers > 1 or backend == "ray"):
        raise ModuleConfigError(
            "workers > 1 and backend='ray' build a module in each worker: give the model config, not a module"
        )
    if backend == "ray":
        from modules.eval.ray_backend import import_ray

        import_ray()  # a missing extra is said before anything is written
    if not isinstance(output, (str, Path)):
        raise ModuleConfigError(f"output: expected the predictions file's path (a str), got {output!r:.60}")
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    jobs = the_plan.jobs()
    done = read_done(path, jobs)
    pending = [job for job in jobs if job["index"] not in done]
    bar = Progress(len(jobs), len(done), progress)
    answered = 0
    try:
        with path.open("a", encoding="utf-8") as handle:
            if backend == "ray":
                from modules.eval.ray_backend import ray_answers

                answers = ray_answers(the_plan.inferencer, pending, model or {}, workers=workers, address=ray_address)
            else:
                answers = _answers(the_plan, pending, model, module, workers)
            for record in answers:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()
                answered += 1
                bar.update(1)
    finally:
        bar.close()
    return RunStats(len(jobs), len(done), answered, path)


def _answers(
    the_plan: Plan, pending: list[dict[str, Any]], model: Mapping[str, Any] | None, module: Any, workers: int
) -> Iterator[dict[str, Any]]:
    if not pending:
        return
    if workers == 1:
        owned = module is None
        m = build_module(model or {}) if owned else module
        try:
            for job in pending:
                yield the_plan.inferencer.answer(m, job)
        finally:
            if owned and hasattr(m, "stop"):
                m.stop()
        return
    context = _context(model or {})
    with context.Pool(workers, initializer=_init_worker, initargs=(dict(model or {}), the_plan.inferencer)) as pool:
        yield from pool.imap(_answer_in_worker, pending, chunksize=1)


def _context(model: Mapping[str, Any]) -> Any:
    """Worker processes forked from a fresh server process that imported the heavy libraries once.

    Forking from this process could copy its threads' locks mid-use; the forkserver
    starts clean, and its preloaded imports make each worker start in moments.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods() or _forkserver_would_shadow_us():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    preload = ["modules.eval.runner"]
    if model_type(model.get("type")) in LOCAL_TYPES:  # a local model: its heavy imports done once
        preload += ["torch", "transformers", "modules.local.trainable"]
    context.set_forkserver_preload(preload)
    return context


def _forkserver_would_shadow_us() -> bool:
    """Whether the forkserver process would import another ``modules`` package than this one.

    CPython starts the forkserver with ``python -c``, which puts the working folder first on its
    ``sys.path``, and does not apply the ``sys_path`` it is handed (3.10-3.13). From an application
    folder with its own ``modules/`` package, preloading ``modules.eval.runner`` there binds the name
    ``modules`` to the application's package in every worker forked from it, and each worker then
    dies on import, which a pool answers by starting another, for ever. Spawned workers take this
    process's ``sys.path`` instead.
    """
    import importlib.machinery
    import os

    ours = Path(__file__).resolve().parents[1]
    try:
        found = importlib.machinery.PathFinder.find_spec("modules", [os.getcwd()])
    except (OSError, ValueError):  # no working folder left, say: spawn is always safe
        return True
    if found is None or found.origin is None:  # nothing there, or a folder without __init__.py, which
        return False  # yields to a regular package (ours) later on the path
    return Path(found.origin).resolve().parent != ours


def config_parts(config: Mapping[str, Any], *, first_model: bool = False) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """The one dataset config and the model config (``{}`` when none) of an evaluation config.

    ``first_model``: several models are allowed and the first is taken (viewing prompts)."""
    if not isinstance(config, Mapping):
        raise ModuleConfigError(f"config: expected a dict with dataset and model, got {type(config).__name__}")
    datasets = config.get("datasets", [config["dataset"]] if "dataset" in config else [])
    models = config.get("models", [config["model"]] if "model" in config else [])
    for key, value in (("datasets", datasets), ("models", models)):
        if not isinstance(value, (list, tuple)):
            raise ModuleConfigError(f"config[{key!r}]: expected a list of dict configs, got {type(value).__name__}")
    if len(datasets) != 1:
        raise ModuleConfigError(f"config: expected one dataset (dataset=... or datasets=[...]), got {len(datasets)}")
    if len(models) > 1 and not first_model:
        raise ModuleConfigError(f"config: expected one model (model=... or models=[...]), got {len(models)}")
    if not isinstance(datasets[0], Mapping):
        raise ModuleConfigError(f"dataset: expected a dict config, got {type(datasets[0]).__name__}")
    if models and not isinstance(models[0], Mapping):
        raise ModuleConfigError(
            f"model: expected a dict config, dict(type='TrainableModule', path=...), got {type(models[0]).__name__}"
        )
    return datasets[0], dict(models[0]) if models else {}


def _config_workers(config: Mapping[str, Any]) -> int:
    value = config.get("workers", 1)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModuleConfigError(f"config['workers']: expected an int >= 1, got {value!r}")
    return value


def run_eval(
    config: Mapping[str, Any],
    *,
    output: str | Path | None = None,
    workers: int | None = None,
    module: Any = None,
    progress: bool = True,
    compat: Compat | None = None,
    limit: int | None = None,
    base_dir: str | Path = ".",
    backend: Backend | None = None,
    ray_address: str | None = None,
) -> RunStats:
    """Run the evaluation a config describes (``dataset`` or one-item ``datasets``, ``model``/``models``).

    The config may also set ``output``, ``workers``, ``compat``, ``backend`` and ``ray_address``;
    arguments win.
    """
    dataset, model = config_parts(config)
    out = output or config.get("output") or f"{dataset.get('abbr', 'predictions')}.jsonl"
    if not isinstance(out, (str, Path)):
        raise ModuleConfigError(f"output: expected the predictions file's path (a str), got {out!r:.60}")
    the_plan = plan(
        dataset,
        model,
        compat=compat or config.get("compat"),
        base_dir=base_dir,
        limit=limit if limit is not None else config.get("limit"),
    )
    return run_plan(
        the_plan,
        Path(base_dir) / out if not Path(out).is_absolute() else out,
        model=model if module is None else None,
        module=module,
        workers=workers or _config_workers(config),
        progress=progress,
        backend=backend or config.get("backend", "process"),
        ray_address=ray_address or config.get("ray_address"),
    )

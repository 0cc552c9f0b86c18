"""``backend="ray"`` / ``prompter eval --ray``: on a local Ray instance, the predictions file of the 1-process run.

Ray starts once for this module (a few seconds); each run's actors load the tiny model (a few
seconds more) and answer 12 samples.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_eval_e2e import _gen_dataset, _ppl_dataset, toy  # noqa: F401 - toy is a fixture
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.cli import main
from modules.errors import MissingExtraError
from modules.eval import plan, run_eval, run_plan

N = 12


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """A local Ray instance of 2 CPUs, no dashboard, shared by this module's tests."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("make", [_gen_dataset, _ppl_dataset], ids=["gen", "ppl"])
def test_ray_writes_the_predictions_file_of_the_one_process_run_and_resumes(
    make: Any,
    toy: Path,  # noqa: F811
    tmp_path: Path,
    tiny_model_path: Path,  # noqa: F811
    started_module: Any,  # noqa: F811
    local_ray: Any,
) -> None:
    one = run_plan(plan(make(str(toy)), {}, limit=N), tmp_path / "one.jsonl", module=started_module, progress=False)
    expected = one.output.read_bytes()
    config = {
        "dataset": make("toy.jsonl"),
        "model": {"type": "TrainableModule", "path": str(tiny_model_path)},
        "limit": N,
    }
    (tmp_path / "eval.json").write_text(json.dumps(config), encoding="utf-8")
    if make is _gen_dataset:  # through the CLI, as a user runs it
        assert main(["eval", str(tmp_path / "eval.json"), "--output", "ray.jsonl", "--ray", "--workers", "2"]) == 0
    else:
        stats = run_eval(config, output="ray.jsonl", backend="ray", workers=2, progress=False, base_dir=tmp_path)
        assert (stats.total, stats.resumed, stats.answered) == (N, 0, N)
    out = tmp_path / "ray.jsonl"
    assert out.read_bytes() == expected
    if make is _gen_dataset:
        return  # one Ray run per kind keeps this module's time small; the resume is the same code for both

    # an interrupted Ray run resumes as the 1-process run does: 5 records kept, a torn line cut off
    lines = expected.splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:5]) + b'{"index": 5, "ki')
    again = run_eval(config, output="ray.jsonl", backend="ray", workers=1, progress=False, base_dir=tmp_path)
    assert (again.resumed, again.answered) == (5, N - 5)
    assert out.read_bytes() == expected
    done = run_eval(config, output="ray.jsonl", backend="ray", workers=1, progress=False, base_dir=tmp_path)
    assert (done.resumed, done.answered) == (N, 0)
    # the process's Ray Data settings are left as they were (the run sets preserve_order for itself)
    assert local_ray.data.DataContext.get_current().execution_options.preserve_order is False


def test_without_ray_the_error_names_the_extra_and_nothing_is_written(
    tmp_path: Path,
    toy: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    out = tmp_path / "sub" / "p.jsonl"
    with pytest.raises(MissingExtraError, match=r"prompter-kit\[ray\]"):
        run_plan(plan(_gen_dataset(str(toy)), {}, limit=2), out, model={"type": "TrainableModule"}, backend="ray")
    assert not out.parent.exists()


def test_ray_needs_a_model_config_not_a_module(
    tmp_path: Path,
    toy: Path,  # noqa: F811
) -> None:
    from modules.errors import ModuleConfigError

    with pytest.raises(ModuleConfigError, match="give the model config"):
        run_plan(plan(_gen_dataset(str(toy)), {}, limit=2), tmp_path / "p.jsonl", module=object(), backend="ray")
    with pytest.raises(ModuleConfigError, match="backend: expected 'process' or 'ray'"):
        run_plan(plan(_gen_dataset(str(toy)), {}, limit=2), tmp_path / "p.jsonl", model={}, backend="dask")  # type: ignore[arg-type]


def test_a_mistake_in_a_ray_worker_is_one_typed_error_naming_it(
    tmp_path: Path,
    toy: Path,  # noqa: F811
    local_ray: Any,
) -> None:
    from modules.errors import ModuleConfigError

    model = {"type": "TrainableModule", "path": str(tmp_path / "no-such-model")}
    with pytest.raises(ModuleConfigError, match="a Ray worker failed on sample 0: .*no-such-model"):
        run_plan(plan(_gen_dataset(str(toy)), {}, limit=2), tmp_path / "p.jsonl", model=model, backend="ray")
    assert (tmp_path / "p.jsonl").read_text(encoding="utf-8") == ""  # nothing half-written

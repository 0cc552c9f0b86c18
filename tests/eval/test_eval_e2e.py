"""A 50-question toy dataset end to end: Gen and PPL on the tiny local model, resumable, 1 or 2 workers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval import plan, run_eval, run_plan

ROWS = [{"question": f"What is {i}+{i}?", "answer": str(2 * i), "label": "AB"[i % 2]} for i in range(50)]


def _gen_dataset(path: str) -> dict[str, Any]:
    return {
        "path": path,
        "abbr": "toy",
        "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
        "infer_cfg": {
            "ice_template": {"type": "PromptTemplate", "template": "Q: {question}\nA: {answer}"},
            "prompt_template": {
                "type": "opencompass.openicl.icl_prompt_template.PromptTemplate",
                "template": "</E>Q: {question}\nA: {answer}",
                "ice_token": "</E>",
            },
            "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1]},
            "inferencer": {"type": "GenInferencer", "max_out_len": 4, "stopping_criteria": ["\n"]},
        },
    }


def _ppl_dataset(path: str) -> dict[str, Any]:
    return {
        "path": path,
        "abbr": "toy-ppl",
        "reader_cfg": {"input_columns": ["question"], "output_column": "label"},
        "infer_cfg": {
            "prompt_template": {
                "type": "PromptTemplate",
                "template": {"A": "Q: {question}\nA: yes", "B": "Q: {question}\nA: no"},
            },
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "PPLInferencer"},
        },
    }


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """The 50-question toy dataset as JSONL."""
    path = tmp_path / "toy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


class _Interrupting:
    """A module handle that fails after ``n`` answers, as a killed run stops."""

    def __init__(self, module: Any, n: int) -> None:
        self.module, self.left = module, n

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.module, name)
        if name not in ("generate", "score"):
            return real

        def counted(*args: Any, **kwargs: Any) -> Any:
            if self.left <= 0:
                raise KeyboardInterrupt
            self.left -= 1
            return real(*args, **kwargs)

        return counted


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("make", [_gen_dataset, _ppl_dataset], ids=["gen", "ppl"])
def test_a_toy_dataset_runs_end_to_end_and_resumes_after_an_interruption(
    make: Any,
    toy: Path,
    tmp_path: Path,
    started_module: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    the_plan = plan(make(str(toy)), {})
    whole = run_plan(the_plan, tmp_path / "whole.jsonl", module=started_module)
    assert (whole.total, whole.resumed, whole.answered) == (50, 0, 50)
    assert "eval: 50/50 samples" in capsys.readouterr().err  # the progress line

    out = tmp_path / "cut.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_plan(the_plan, out, module=_Interrupting(started_module, 20), progress=False)
    assert len(_records(out)) == 20
    with out.open("a", encoding="utf-8") as handle:
        handle.write('{"index": 20, "kind": "gen", "orig')  # a write torn by the interruption
    again = run_plan(the_plan, out, module=started_module, progress=False)
    assert (again.resumed, again.answered) == (20, 30)
    assert out.read_text(encoding="utf-8") == (tmp_path / "whole.jsonl").read_text(encoding="utf-8")

    records = _records(out)
    assert [r["index"] for r in records] == list(range(50))
    if make is _ppl_dataset:
        for r in records:
            losses = r["label_losses"]
            assert set(losses) == {"A", "B"} and all(math.isfinite(x) for x in losses.values())
            assert r["prediction"] == min(losses, key=losses.__getitem__)
            assert r["gold"] == ROWS[r["index"]]["label"]
    else:
        assert records[2]["origin_prompt"] == "Q: What is 0+0?\nA: 0\nQ: What is 1+1?\nA: 2\nQ: What is 2+2?\nA: "
        assert all("\n" not in r["prediction"] for r in records)


def test_a_predictions_file_of_another_evaluation_is_refused(
    toy: Path,
    tmp_path: Path,
    started_module: Any,  # noqa: F811
) -> None:
    out = tmp_path / "p.jsonl"
    run_plan(plan(_gen_dataset(str(toy)), {}, limit=3), out, module=started_module, progress=False)
    other = _gen_dataset(str(toy))
    other["infer_cfg"]["prompt_template"]["template"] = "</E>Question: {question}\nA: {answer}"
    with pytest.raises(ModuleConfigError, match="another evaluation"):
        run_plan(plan(other, {}, limit=3), out, module=started_module, progress=False)


@pytest.mark.parametrize("make", [_gen_dataset, _ppl_dataset], ids=["gen", "ppl"])
def test_two_worker_processes_give_the_same_predictions_as_one(
    make: Any,
    toy: Path,
    tmp_path: Path,
    tiny_model_path: Path,  # noqa: F811
    started_module: Any,  # noqa: F811
) -> None:
    one = run_plan(plan(make(str(toy)), {}), tmp_path / "one.jsonl", module=started_module, progress=False)
    config = {"dataset": make("toy.jsonl"), "model": {"type": "TrainableModule", "path": str(tiny_model_path)}}
    (tmp_path / "eval.json").write_text(json.dumps(config), encoding="utf-8")
    if make is _gen_dataset:  # through the CLI, as a user runs it
        assert main(["eval", str(tmp_path / "eval.json"), "--output", "two.jsonl", "--workers", "2"]) == 0
    else:
        run_eval(config, output="two.jsonl", workers=2, progress=False, base_dir=tmp_path)
    assert (tmp_path / "two.jsonl").read_text(encoding="utf-8") == one.output.read_text(encoding="utf-8")

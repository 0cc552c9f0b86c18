"""A PPL prediction is the label as the config gives it: an int label (OpenCompass's PPL configs key their
templates ``{0: ..., 1: ...}`` and read int gold labels) predicts that int, as upstream's predictions hold
it, so the prediction compares equal to its gold. Before, every label became its ``str()``: ``"1" != 1``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.eval import plan, run_eval

ROWS = [{"q": f"{i}+{i}", "label": i % 2} for i in range(4)]


def _config(template: Any, inferencer: dict[str, Any] | None = None) -> dict[str, Any]:
    return dict(
        dataset=dict(
            path=ROWS,
            abbr="ints",
            reader_cfg=dict(input_columns=["q"], output_column="label"),
            infer_cfg=dict(
                prompt_template=dict(type="PromptTemplate", template=template),
                retriever=dict(type="ZeroRetriever"),
                inferencer=inferencer or dict(type="PPLInferencer"),
            ),
        ),
        model=dict(type="TrainableModule", path="unused"),
    )


def test_an_int_label_is_predicted_as_that_int(tmp_path: Path, started_module: Any) -> None:  # noqa: F811
    config = _config({0: "Q: {q}\nA: even", 1: "Q: {q}\nA: odd"})
    run_eval(config, output=tmp_path / "p.jsonl", module=started_module, progress=False)
    records = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [r["labels"] for r in records] == [[0, 1]] * 4
    assert all(type(r["prediction"]) is int and r["prediction"] in (0, 1) for r in records)
    assert all(set(r["label_losses"]) == {"0", "1"} for r in records)
    gold = [r["gold"] for r in records]
    assert gold == [0, 1, 0, 1]  # and a right answer compares equal to its gold
    assert [r["prediction"] == g for r, g in zip(records, gold, strict=True)] == [
        min(r["label_losses"], key=r["label_losses"].__getitem__) == str(g) for r, g in zip(records, gold, strict=True)
    ]


def test_labels_read_from_an_int_column_are_ints_too() -> None:
    jobs = plan(_config("Q: {q}\nA: {label}")["dataset"], model={}).jobs()
    assert jobs[0]["labels"] == [0, 1]


def test_a_label_json_cannot_hold_as_it_is_is_written_as_its_str() -> None:
    template = {(1, 2): "Q: {q}\nA: pair", "x": "Q: {q}\nA: x"}
    jobs = plan(_config(template, dict(type="PPLInferencer"))["dataset"], model={}).jobs()
    assert jobs[0]["labels"] == ["(1, 2)", "x"]
    json.dumps(jobs[0])

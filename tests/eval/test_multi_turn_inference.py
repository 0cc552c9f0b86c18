"""AISBench multi-turn inference over a module: every, every_with_gt and last."""

from __future__ import annotations

from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.eval import plan
from modules.eval.inferencers import MultiTurnGenInferencer

ROWS = [{"question": ["1+1=?", "2+2=?", "3+3=?"], "answer": ["2", "4", "6"]}]


def _dataset(mode: str) -> dict[str, Any]:
    template = {
        "type": "MultiTurnPromptTemplate",
        "template": {"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]},
    }
    return {
        "path": ROWS,
        "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
        "infer_cfg": {
            "prompt_template": template,
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "MultiTurnGenInferencer", "infer_mode": mode, "max_out_len": 3},
        },
    }


META = {
    "meta_template": {
        "round": [
            {"role": "HUMAN", "begin": "U:", "end": "\n"},
            {"role": "BOT", "begin": "A:", "end": "\n", "generate": True},
        ]
    }
}


@pytest.mark.parametrize("compat", [None, "aisbench"])
def test_every_with_gt_and_last_ask_the_turns_aisbench_asks(compat: Any, started_module: Any) -> None:  # noqa: F811
    p = plan(_dataset("every_with_gt"), META, compat=compat)
    assert isinstance(p.inferencer, MultiTurnGenInferencer)
    record = p.inferencer.answer(started_module, p.jobs()[0])
    assert record["turn_prompts"] == [
        "U:1+1=?\nA:",
        "U:1+1=?\nA:2\nU:2+2=?\nA:",
        "U:1+1=?\nA:2\nU:2+2=?\nA:4\nU:3+3=?\nA:",
    ]
    assert len(record["prediction"]) == 3
    last = plan(_dataset("last"), META, compat=compat)
    assert last.inferencer.answer(started_module, last.jobs()[0])["turn_prompts"] == record["turn_prompts"][-1:]


def test_every_feeds_the_models_own_answers_back(started_module: Any) -> None:  # noqa: F811
    p = plan(_dataset("every"), META, compat="aisbench")
    record = p.inferencer.answer(started_module, p.jobs()[0])
    first, second = record["prediction"][:2]
    assert record["turn_prompts"][1] == f"U:1+1=?\nA:{first}\nU:2+2=?\nA:"
    assert record["turn_prompts"][2].startswith(f"U:1+1=?\nA:{first}\nU:2+2=?\nA:{second}\n")

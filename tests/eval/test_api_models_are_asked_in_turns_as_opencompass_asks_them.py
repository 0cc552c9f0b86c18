"""An online model with an API meta template is asked in turns (chat messages), as OpenCompass asks API models.

OpenCompass writes an API model's prompt with ``APITemplateParser``: turns that its API
models send as system / user / assistant messages, and that its predictions file shows as
``origin_prompt``. The Gen inferencer wrote them with the local model's parser instead: the
turns' texts glued into one string (``"Be brief.Q: 1+1=?"``, not even a separator) sent as
one user message, so the system prompt and every few-shot turn lost their roles. The
server here is a real HTTP server on 127.0.0.1 that records what it receives.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.eval import plan, run_eval
from modules.eval.cli import view
from modules.testing import FakeOpenAIServer
from prompter.errors import UnknownRoleError

KEY = "sk-test-0123456789abcdef"
QA = [{"role": "HUMAN", "prompt": "Q: {q}"}, {"role": "BOT", "prompt": "{a}"}]
API_META = {
    "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}],
}
ROWS = [{"q": "1+1=?", "a": "2"}, {"q": "2+2=?", "a": "4"}]


def _dataset(**infer: Any) -> dict[str, Any]:
    system = {"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Be brief."}
    return {
        "path": ROWS,
        "index_path": [{"q": "3+3=?", "a": "6"}],
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "ice_template": {"type": "PromptTemplate", "template": {"round": QA}},
            "prompt_template": {
                "type": "PromptTemplate",
                "template": {"begin": [system, "</E>"], "round": QA},
                "ice_token": "</E>",
            },
            "retriever": {"type": "FixKRetriever", "fix_id_list": [0]},
            "inferencer": {"type": "GenInferencer", "max_out_len": 8},
            **infer,
        },
    }


def _turns(question: str) -> list[dict[str, str]]:
    return [
        {"role": "SYSTEM", "prompt": "Be brief."},
        {"role": "HUMAN", "prompt": "Q: 3+3=?"},
        {"role": "BOT", "prompt": "6"},
        {"role": "HUMAN", "prompt": f"Q: {question}"},
    ]


def _messages(question: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Q: 3+3=?"},
        {"role": "assistant", "content": "6"},
        {"role": "user", "content": f"Q: {question}"},
    ]


def test_the_gen_prompt_of_an_online_model_is_its_turns() -> None:
    jobs = plan(_dataset(), {"type": "OnlineChatModule", "meta_template": API_META}).jobs()
    assert [job["origin_prompt"] for job in jobs] == [_turns("1+1=?"), _turns("2+2=?")]


def test_an_online_model_is_sent_the_turns_as_chat_messages(tmp_path: Path) -> None:
    with FakeOpenAIServer(replies=["2", "4"]) as server:
        model = {"type": "OnlineChatModule", "base_url": server.base_url, "model": "m", "api_key": KEY,
                 "meta_template": API_META}  # fmt: skip
        run_eval({"dataset": _dataset(), "model": model}, output=tmp_path / "p.jsonl", progress=False)
        sent = [request.json()["messages"] for request in server.requests]
    assert sent == [_messages("1+1=?"), _messages("2+2=?")]
    records = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["origin_prompt"], r["prediction"], r["gold"]) for r in records] == [
        (_turns("1+1=?"), "2", "2"),
        (_turns("2+2=?"), "4", "4"),
    ]


def test_a_resumed_run_of_an_api_model_keeps_its_records(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    with FakeOpenAIServer(replies=["2", "4", "again"]) as server:
        model = {"type": "OnlineChatModule", "base_url": server.base_url, "model": "m", "api_key": KEY,
                 "meta_template": API_META}  # fmt: skip
        run_eval({"dataset": _dataset(), "model": model}, output=out, progress=False)
        stats = run_eval({"dataset": _dataset(), "model": model}, output=out, progress=False)
        assert len(server.requests) == 2
    assert (stats.resumed, stats.answered) == (2, 0)


def test_multi_turn_samples_of_an_online_model_are_asked_in_turns(tmp_path: Path) -> None:
    dataset = {
        "path": [{"question": ["1+1=?", "2+2=?"], "answer": ["2", "4"]}],
        "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
        "infer_cfg": {
            "prompt_template": {"type": "MultiTurnPromptTemplate", "template": {"round": [
                {"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]}},
            "inferencer": {"type": "MultiTurnGenInferencer", "infer_mode": "every"},
        },
    }  # fmt: skip
    with FakeOpenAIServer(replies=["two", "four"]) as server:
        model = {"type": "OnlineChatModule", "base_url": server.base_url, "model": "m", "api_key": KEY,
                 "meta_template": API_META}  # fmt: skip
        run_eval({"dataset": dataset, "model": model}, output=tmp_path / "p.jsonl", progress=False)
        sent = [request.json()["messages"] for request in server.requests]
    assert sent[1] == [
        {"role": "user", "content": "1+1=?"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "2+2=?"},
    ]


def test_a_local_model_and_an_online_model_without_meta_template_read_one_string() -> None:
    local = plan(_dataset(), {"type": "TrainableModule", "meta_template": API_META}).jobs()[0]
    bare = plan(_dataset(), {"type": "OnlineChatModule"}).jobs()[0]
    assert local["origin_prompt"] == "Be brief.Q: 3+3=?6Q: 1+1=?"
    assert bare["origin_prompt"] == "Be brief.\nQ: 3+3=?\n6\nQ: 1+1=?"


def test_viewing_an_api_models_prompts_shows_each_turn() -> None:
    out = io.StringIO()
    view({"dataset": _dataset(), "model": {"type": "OnlineChatModule", "meta_template": API_META}}, 1, stream=out)
    assert out.getvalue() == "--- sample 0 (gen) ---\n" + "\n".join(json.dumps(t) for t in _turns("1+1=?")) + "\n"


def test_a_compat_meta_begin_that_no_api_model_can_be_sent_is_a_typed_error_before_any_request() -> None:
    meta = {**API_META, "begin": "You are a grader."}
    with pytest.raises(ModuleConfigError, match="meta template's begin stands alone"):
        plan(_dataset(), {"type": "OnlineChatModule", "meta_template": meta}, compat="opencompass").jobs()


def test_an_api_role_no_chat_api_has_is_a_typed_error_before_any_request() -> None:
    meta = {**API_META, "reserved_roles": [{"role": "SYSTEM", "api_role": "TOOL"}]}
    with pytest.raises(UnknownRoleError, match="'TOOL'"):
        plan(_dataset(), {"type": "OnlineChatModule", "meta_template": meta}).jobs()

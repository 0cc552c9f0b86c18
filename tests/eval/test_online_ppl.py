"""PPL through an online source: ``OnlineChatModule.score`` over ``/v1/completions`` with echo and logprobs.

A loopback server on 127.0.0.1 speaks the wire format (one choice per prompt, the
prompt's tokens echoed with ``token_logprobs`` and ``text_offset``) with a toy
"model": one token per character, each with a log-probability that a formula gives.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from modules.errors import APIResponseValidationError
from modules.eval import plan, run_plan
from modules.online.module import OnlineChatModule
from modules.online.scoring import ScoringUnsupportedError, continuation_losses
from modules.testing import LoopbackServer, RecordedRequest, write_response

KEY = "sk-test-0123456789abcdef"


def _logprob(text: str, t: int) -> float | None:
    """The toy model's log-probability of character ``t`` of ``text`` (none for the first)."""
    return None if t == 0 else -((ord(text[t]) * 7 + t) % 5 + 1) / 4


def _completions(request: RecordedRequest, sock: socket.socket) -> bool:
    body = request.json()
    if request.path != "/v1/completions":
        write_response(sock, 404, {"error": {"message": "no such route"}})
        return True
    choices = [
        {
            "index": i,
            "text": text,
            "finish_reason": "length",
            "logprobs": {
                "tokens": list(text),
                "token_logprobs": [_logprob(text, t) for t in range(len(text))],
                "text_offset": list(range(len(text))),
                "top_logprobs": [None] * len(text),
            },
        }
        for i, text in enumerate(body["prompt"])
    ]
    write_response(sock, 200, {"id": "cmpl-1", "object": "text_completion", "model": body["model"], "choices": choices})
    return True


def _expected(context: str, continuation: str) -> float:
    text = context + continuation
    values = [_logprob(text, t) for t in range(len(context), len(text))]
    scored = [v for v in values if v is not None]
    return -sum(scored) / len(scored)


@pytest.fixture
def server() -> Any:
    with LoopbackServer(_completions).start() as s:
        yield s


def test_score_is_the_mean_continuation_loss_from_the_echoed_logprobs(server: LoopbackServer) -> None:
    module = OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY)
    pairs = [("Q: 1+1?\nA: ", "two"), ("Q: 1+1?\nA: ", "three"), ("x", "y")]
    losses = module.score(pairs, batch_size=2)
    assert losses == pytest.approx([_expected(c, t) for c, t in pairs])

    sent = server.requests
    assert len(sent) == 2  # batches of 2 texts
    body = sent[0].json()
    assert body == {
        "model": "m",
        "prompt": ["Q: 1+1?\nA: two", "Q: 1+1?\nA: three"],
        "max_tokens": 0,
        "echo": True,
        "logprobs": 1,
        "temperature": 0,
    }
    assert sent[0].headers["authorization"] == f"Bearer {KEY}"


def test_the_ppl_inferencer_runs_over_an_online_module(server: LoopbackServer, tmp_path: Path) -> None:
    rows = [{"question": f"What is {i}+{i}?", "label": "AB"[i % 2]} for i in range(6)]
    dataset = {
        "path": rows,
        "reader_cfg": {"input_columns": ["question"], "output_column": "label"},
        "infer_cfg": {
            "prompt_template": {
                "type": "PromptTemplate",
                "template": {"A": "Q: {question}\nyes", "B": "Q: {question}\nno"},
            },
            "inferencer": {"type": "PPLInferencer"},
        },
    }
    module = OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY)
    stats = run_plan(plan(dataset, {}), tmp_path / "p.jsonl", module=module, progress=False)
    assert stats.answered == 6
    for line in stats.output.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        context = f"Q: {rows[record['index']]['question']}\n"
        want = {"A": _expected(context, "yes"), "B": _expected(context, "no")}
        assert record["label_losses"] == pytest.approx(want, abs=1e-6)
        assert record["prediction"] == min(want, key=want.__getitem__)
    assert KEY not in stats.output.read_text(encoding="utf-8")


def test_a_token_across_the_boundary_counts_for_the_continuation() -> None:
    # "ab|cd|ef" scored as tokens "ab", "cd", "ef"; the context "abc" ends inside "cd"
    data = {"choices": [{"index": 0, "logprobs": {"token_logprobs": [None, -1.0, -3.0], "text_offset": [0, 2, 4]}}]}
    assert continuation_losses(data, [("abc", "def")]) == [2.0]
    assert continuation_losses(data, [("abcd", "ef")]) == [3.0]


def test_a_source_without_logprobs_is_a_typed_error_naming_the_remedy(server: LoopbackServer) -> None:
    native = OnlineChatModule(source="ollama", base_url=f"http://127.0.0.1:{server.port}", model="m")
    with pytest.raises(ScoringUnsupportedError, match="vLLM, prompter serve"):
        native.score([("a", "b")])
    assert server.requests == []  # refused before anything is sent

    no_route = OnlineChatModule(base_url=f"http://127.0.0.1:{server.port}/v2", model="m", api_key=KEY)
    with pytest.raises(ScoringUnsupportedError, match="/completions") as info:
        no_route.score([("a", "b")])
    assert KEY not in str(info.value)

    with pytest.raises(ScoringUnsupportedError, match="no logprobs"):
        continuation_losses({"choices": [{"index": 0, "text": "ab"}]}, [("a", "b")])
    with pytest.raises(APIResponseValidationError, match="expected 2"):
        continuation_losses({"choices": [{"index": 0}]}, [("a", "b"), ("a", "c")])
    with pytest.raises(ScoringUnsupportedError, match="give the pair a context"):
        OnlineChatModule(base_url=server.base_url, model="m").score([("", "b")])

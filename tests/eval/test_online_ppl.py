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
from tiny_model_fixture import served_module, started_module, tiny_model_path  # noqa: F401 - fixtures

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
    dataset = _yes_no(rows)
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


def _yes_no(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "path": rows,
        "reader_cfg": {"input_columns": ["question"], "output_column": "label"},
        "infer_cfg": {
            # the answer starts after a newline: a token boundary, so HTTP and in-process read the same tokens
            "prompt_template": {
                "type": "PromptTemplate",
                "template": {"A": "Q: {question}\nyes", "B": "Q: {question}\nno"},
            },
            "inferencer": {"type": "PPLInferencer"},
        },
    }


def test_ppl_over_http_against_prompter_serve_picks_the_in_process_labels(
    served_module: Any,  # noqa: F811
    started_module: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    rows = [{"question": f"What is {i}+{i}?", "label": "AB"[i % 2]} for i in range(12)]
    local = run_plan(plan(_yes_no(rows), {}), tmp_path / "local.jsonl", module=started_module, progress=False)
    online = OnlineChatModule(base_url=served_module.url, model="tiny")
    http = run_plan(plan(_yes_no(rows), {}), tmp_path / "http.jsonl", module=online, progress=False)
    mine = [json.loads(x) for x in local.output.read_text(encoding="utf-8").splitlines()]
    theirs = [json.loads(x) for x in http.output.read_text(encoding="utf-8").splitlines()]
    assert [r["prediction"] for r in theirs] == [r["prediction"] for r in mine]
    for a, b in zip(mine, theirs, strict=True):
        assert b["label_losses"] == pytest.approx(a["label_losses"], abs=1e-4)
    assert {r["prediction"] for r in mine} == {"A", "B"}  # both labels are chosen: the comparison means something


def test_prompter_serve_echoes_the_prompts_tokens_with_their_logprobs(served_module: Any) -> None:  # noqa: F811
    import httpx

    text = "Q: What is 2+2?\nfour"
    body = {"model": "tiny", "prompt": [text, "x"], "echo": True, "logprobs": 2, "max_tokens": 0}
    r = httpx.post(served_module.url + "/completions", json=body, timeout=30)
    assert r.status_code == 200, r.text
    first, second = r.json()["choices"]
    assert (first["index"], first["text"], second["index"], second["text"]) == (0, text, 1, "x")
    logprobs = first["logprobs"]
    n = len(logprobs["tokens"])
    assert (
        n > 3 and len(logprobs["token_logprobs"]) == len(logprobs["text_offset"]) == len(logprobs["top_logprobs"]) == n
    )
    assert logprobs["token_logprobs"][0] is None and all(v <= 0 for v in logprobs["token_logprobs"][1:])
    assert logprobs["text_offset"][0] == 0 and logprobs["text_offset"] == sorted(logprobs["text_offset"])
    assert text.endswith("four") and logprobs["text_offset"][-1] < len(text)
    assert all(len(t) == 2 for t in logprobs["top_logprobs"][1:])
    assert second["logprobs"]["token_logprobs"] == [None]

    # max_tokens 0 without echo+logprobs, and echo with generation, stay refused by name
    for bad, param in (({"max_tokens": 0}, "max_tokens"), ({"echo": True, "logprobs": 1, "max_tokens": 2}, "echo")):
        r = httpx.post(served_module.url + "/completions", json={"model": "tiny", "prompt": "x", **bad}, timeout=30)
        assert r.status_code == 400 and r.json()["error"]["param"] == param, r.text

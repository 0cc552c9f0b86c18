"""AgentScope parity: every corpus case renders exactly as the real AgentScope code renders it,
or differs for a reason listed in :data:`DELIBERATE` (docs/agents.md lists them too).

Upstream's outputs (0.0.6a2 model wrappers' ``format``, 0.1.6 formatters) are recorded in
``data/agentscope.json`` by ``benchmarks/agentscope_corpus.py``; this test needs no AgentScope.
A deliberate case must still differ, so the list cannot go stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from agentscope_parity import on_the_wire, render

from prompter.errors import UnsupportedContentError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from agentscope_corpus import build_cases, write_files  # noqa: E402

RECORDED: dict[str, Any] = json.loads((Path(__file__).with_name("data") / "agentscope.json").read_text("utf-8"))[
    "results"
]

#: why a case differs from AgentScope on purpose; "bug:" fixes an upstream bug, "form:" is an
#: equivalent wire form, "impossible:" has no prompter call that reproduces it
DELIBERATE = {
    "system-name": "bug: the OpenAI system message gets name 'system' (0.1.x also sends text-only content "
    "as a list of text blocks, which the API reads as the plain string we send)",
    "anthropic-system": "bug: Anthropic's system prompt goes in messages with role 'system', which the "
    "Messages API rejects; ours is the top-level system (text-only content a plain string)",
    "anthropic-url": "bug: an Anthropic image URL source is a bare string the API rejects",
    "never-drop-names": "bug: format_chat sends turns of different speakers in one role without their "
    "names (Anthropic, Gemini and DashScope have no name field), so who said what is lost; ours falls back "
    "to the merged history",
    "merge-same-speaker": "form: one speaker's consecutive Anthropic turns are one message of several text "
    "blocks, as the Messages API merges them",
    "final-user-turn": "bug: format_chat/format_auto end a DashScope or Gemini conversation on an "
    "assistant turn, which those APIs answer badly or reject; ours falls back to the merged history",
    "dashscope-file-url": "bug: 0.1.x sends a DashScope local image as a bare path; DashScope reads local "
    "files only as file:// URLs",
    "dashscope-video": "bug: 0.0.x's multimodal wrapper drops a video URL silently; DashScope takes it",
    "dashscope-form": "form: DashScope text-only content is a plain string (upstream: a list of one text "
    "item)",
    "gemini-system": "form: the Gemini system prompt is system_instruction (format_chat: a user turn "
    "before the first user turn, two user turns in a row)",
    "gemini-images": "bug: AgentScope's Gemini formatters drop every image; ours sends it (file_data)",
    "tool-json": "bug: tool calls and results in a merged history are dropped (DashScope) or written as a "
    "Python repr (Anthropic); ours writes <tool_use>/<tool_result> lines of JSON in every dialect",
    "litellm-one-message": "impossible: 0.0.x's LiteLLM wrapper sends one user message holding the system "
    "prompt and the history; no openai-dialect strategy folds the system prompt into the user turn",
    "ollama-url": "bug: Ollama's images get a web URL, which Ollama does not fetch; ours is an "
    "UnsupportedContentError naming the remedy (download it, pass the local file)",
    "ollama-base64": "bug: Ollama's images hold a local path the ollama client library reads; the HTTP "
    "API takes base64, which ours sends",
}


#: deliberate differences where prompter raises a typed error instead
RAISES = {"ollama-url"}


def why(case_id: str) -> str | None:
    """The key in :data:`DELIBERATE` for ``case_id``, or None when it must be equal."""
    version, api, method, conv = case_id.split(":")
    if api == "litellm":
        return "litellm-one-message"
    if api in ("openai", "post_api"):
        return "system-name" if conv != "no-system" else None
    if version == "0.0.6a2":
        if api == "dashscope_mm":
            if conv in ("image-url", "image-local", "audio-local"):
                return None  # media before the merged text, as upstream's code writes them
            return {"video-url": "dashscope-video"}.get(conv, "dashscope-form")
        if api == "gemini":
            return "gemini-images" if conv == "image-url" else None
        if api == "ollama" and conv == "image-local":
            return "ollama-base64"
        if api == "ollama" and conv == "image-agents":
            return "ollama-url"
        return None
    if conv == "tool" and method == "multi_agent":
        return "tool-json"
    if method == "chat" and conv == "three" and api != "common":
        return "never-drop-names"
    if method == "auto" and conv == "two" and api in ("dashscope", "gemini"):
        return "final-user-turn"
    if api == "anthropic":
        return {"consecutive": "merge-same-speaker", "image-url": "anthropic-url"}.get(conv, "anthropic-system")
    if api == "gemini":
        return {"image-url": "gemini-images", "two-user-last": "gemini-system"}.get(conv)
    if api == "dashscope":
        if method == "multi_agent" and conv == "image-url":
            return None
        return "dashscope-file-url" if conv in ("image-local", "audio-local") else "dashscope-form"
    return None


def _fill(value: Any, folder: str) -> Any:
    return json.loads(json.dumps(value).replace("<DIR>", folder))


@pytest.mark.parametrize("case", build_cases(), ids=lambda c: c["id"])
def test_renders_as_agentscope_or_differs_deliberately(case: dict[str, Any], tmp_path: Path) -> None:
    write_files(tmp_path)
    upstream = _fill(RECORDED[case["id"]], str(tmp_path))
    assert "ok" in upstream, upstream
    expected = on_the_wire(case, upstream["ok"])
    reason = why(case["id"])
    if reason in RAISES:
        with pytest.raises(UnsupportedContentError):
            render(_fill(case, str(tmp_path)))
        return
    ours = render(_fill(case, str(tmp_path)))
    if reason is None:
        assert ours == expected
    else:
        assert reason in DELIBERATE
        assert ours != expected, f"{case['id']} now equals AgentScope: drop it from DELIBERATE"


def test_the_measured_parity_does_not_regress() -> None:
    """83 cases: 35 equal, 40 fix an upstream bug, 7 differ in an equivalent form, 1 impossible
    (measured 2026-11-23, after DashScope's merged media moved before the text as upstream's code writes
    them). The issue's bar is 56 of 61 equal-or-bug-fix, about 76 of 83: 75 here, the "form:" differences
    standing (docs/agents.md says why each is kept)."""
    ids = [c["id"] for c in build_cases()]
    equal = [i for i in ids if why(i) is None]
    fixes = [i for i in ids if why(i) is not None and DELIBERATE[why(i) or ""].startswith("bug:")]
    assert len(ids) == 83
    assert len(equal) >= 35
    assert len(equal) + len(fixes) >= 75

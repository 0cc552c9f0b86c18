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

#: why a case differs from AgentScope on purpose; "bug:" fixes an upstream bug (its output is refused by
#: the API or by AgentScope's own wrapper, or loses or garbles what the caller gave), "form:" is an
#: equivalent wire form that upstream's valid output has and ours does not, "choice:" is a valid
#: upstream output we render otherwise on purpose
DELIBERATE = {
    "openai-name": "bug: the speaker 'Dr Alice' goes in the name field, whose pattern ^[a-zA-Z0-9_-]+$ the "
    "API enforces (400); ours falls back to the merged history",
    "jpg-mime": "bug: a local .jpg becomes data:image/jpg, not a registered MIME type (Anthropic refuses "
    "it); ours is image/jpeg",
    "openai-audio": "bug: 0.0.x's OpenAI wrapper drops an audio attachment silently; ours sends input_audio",
    "anthropic-system": "bug: format_chat writes the system prompt as a list of text blocks, which "
    "AgentScope's own AnthropicChatWrapper refuses (ValueError: the system content should be a string); "
    "ours is the top-level system string (one speaker's consecutive turns are one message of several "
    "blocks, which the Messages API makes of them anyway)",
    "anthropic-url": "bug: an Anthropic image URL source is a bare string the API rejects",
    "never-drop-names": "bug: format_chat sends turns of different speakers in one role without their "
    "names (Anthropic, Gemini and DashScope have no name field), so who said what is lost; ours falls back "
    "to the merged history",
    "final-user-turn": "bug: format_auto counts messages where its docstring says speakers, and its "
    "format_chat ends a DashScope or Gemini conversation on an assistant turn (Gemini: after two user "
    "turns in a row); ours falls back to the merged history",
    "dashscope-file-url": "bug: 0.1.x sends a DashScope local image as a bare path; DashScope reads local "
    "files only as file:// URLs",
    "dashscope-video": "bug: 0.0.x's multimodal wrapper drops a video URL silently; DashScope takes it",
    "dashscope-mm-parts": "form: 0.0.x's multimodal wrapper sends text-only content as a list of one text "
    "item; the call (history_header='## Dialogue History') cannot tell it from 0.0.x's DashScopeChatWrapper, "
    "whose plain string ours is",
    "gemini-system": "bug: format_chat sends the system prompt as a user turn, two user turns in a row, "
    "which the Gemini API refuses ('Please ensure that multiturn requests alternate between user and "
    "model'); ours is system_instruction",
    "gemini-images": "bug: AgentScope's Gemini formatters drop every image; ours sends it (file_data)",
    "tool-dropped": "bug: DashScope's merged history drops tool calls and results; ours writes "
    "<tool_use>/<tool_result> lines of JSON, as in every dialect",
    "tool-repr": "choice: Anthropic's merged history writes tool calls and results as a Python repr in "
    "the tags; ours writes the JSON every dialect gets (nothing is lost either way)",
    "ollama-url": "bug: Ollama's images get a web URL, which Ollama does not fetch (the ollama client "
    "library refuses it); ours is an UnsupportedContentError naming the remedy (download it, pass the "
    "local file)",
}


#: deliberate differences where prompter raises a typed error instead
RAISES = {"ollama-url"}


def why(case_id: str) -> str | None:
    """The key in :data:`DELIBERATE` for ``case_id``, or None when it must be equal."""
    version, api, method, conv = case_id.split(":")
    if api in ("openai", "post_api", "litellm"):
        special = {"spaced-name": "openai-name", "image-two": "jpg-mime"}
        if version == "0.0.6a2":
            return {**special, "audio-local": "openai-audio"}.get(conv)
        return special.get(conv)
    if version == "0.0.6a2":
        if api == "dashscope_mm":
            return {"video-url": "dashscope-video", "three": "dashscope-mm-parts"}.get(conv)
        if api == "gemini":
            return "gemini-images" if conv == "image-url" else None
        if api == "ollama" and conv == "image-agents":
            return "ollama-url"
        return None
    if conv == "tool" and method == "multi_agent" and api != "common":
        return "tool-repr" if api == "anthropic" else "tool-dropped"
    if method == "chat" and conv == "three" and api != "common":
        return "never-drop-names"
    if method == "auto" and conv == "two" and api in ("dashscope", "gemini"):
        return "final-user-turn"
    if api == "anthropic" and method == "chat":
        return "anthropic-url" if conv == "image-url" else "anthropic-system"
    if api == "gemini":
        return {"image-url": "gemini-images", "two-user-last": "gemini-system"}.get(conv)
    if api == "dashscope" and conv in ("image-local", "audio-local"):
        return "dashscope-file-url"
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
    """83 cases: 58 equal, 23 fix an upstream bug, 1 differs in an equivalent form (0.0.x's multimodal
    DashScope wrapper's one-item list for text only), one is a choice (Anthropic's tool repr), none
    impossible (measured 2026-11-26, after the system Msg kept its name, DashScope, Anthropic and
    OpenAI took 0.1.x's content-part lists under a strategy, 0.0.x's header gave LiteLLM's single
    message, and the Ollama client's path-to-base64 step was applied to upstream's output).
    81 of 83 (98%) equal-or-bug-fix."""
    ids = [c["id"] for c in build_cases()]
    equal = [i for i in ids if why(i) is None]
    kinds = [DELIBERATE[r].split(":")[0] for r in map(why, ids) if r is not None]
    assert len(ids) == 83
    assert len(equal) >= 58
    assert len(equal) + kinds.count("bug") >= 81
    assert kinds.count("form") + kinds.count("choice") <= 2 and "impossible" not in kinds


def test_every_deliberate_reason_is_used() -> None:
    used = {why(c["id"]) for c in build_cases()}
    assert set(DELIBERATE) <= used, f"reasons no case needs: {set(DELIBERATE) - used}"

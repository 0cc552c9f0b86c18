"""A one-off request with a large tool set never pays the fixed-string probes.

Deriving a tool set's fixed strings runs the template about 300 times over every
tool: with 128 tools that is 1.5 s of CPU, against 5 ms for one render. It was done
at a tool set's second sighting, which its first render reaches by itself, so every
new large tool set cost a client's request 1.5 s (and the server that CPU). A tool
set now earns its probes by recurring in proportion to its size; a small one still
gets them at its first render.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.formats import budget, derive, fixed, skeleton
from prompter.formats.model_format import ModelFormat

MESSAGES = [{"role": "user", "content": "hi"}]


def _tools(count: int, tag: str) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": f"{tag}{i}", "description": "d", "parameters": {"type": "object"}}}
        for i in range(count)
    ]


def _derivations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the fixed-string derivations. Their probes get a minute: these tests are about when a tool set
    is probed, not about the probes' deadline, which 128 tools reach on a slow machine (0.72 s of probes
    against 0.75 s on a quiet 2-core one, so a busy one timed out and tried again at a later render)."""
    calls: list[int] = []
    real = fixed._derive
    monkeypatch.setattr(derive, "probing", lambda seconds=60.0: budget.probing(seconds))

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(fixed, "_derive", counted)
    return calls


def _policies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = skeleton._policy

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(skeleton, "_policy", counted)
    return calls


def test_a_small_tool_set_is_probed_at_its_first_render(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt, calls = ModelFormat.get("qwen2.5"), _derivations(monkeypatch)
    tools = _tools(2, "small_")
    first = fmt.render(MESSAGES, tools=tools)
    assert calls == [1]
    assert fmt.render(MESSAGES, tools=tools) == first
    assert calls == [1]


def test_a_large_tool_set_is_not_probed_on_its_first_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt, calls, policies = ModelFormat.get("qwen2.5"), _derivations(monkeypatch), _policies(monkeypatch)
    tools = _tools(128, "large_")
    first = fmt.render(MESSAGES, tools=tools)
    for _ in range(4):  # two requests through the spans path, and more
        assert fmt.render(MESSAGES, tools=tools) == first
    assert calls == [] and policies == []  # neither the fixed strings nor the skeletons probed
    for _ in range(40):  # recurring, it earns its probes (and renders the same bytes)
        assert fmt.render(MESSAGES, tools=tools) == first
    assert calls == [1]

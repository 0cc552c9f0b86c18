"""Probes that run out of time once (the machine busy for a moment: another process, a collector pause)
must not keep a fast template on the slow path for good: a later render probes again, up to
``PROBE_TRIES`` sessions, and then takes the fast path. Before, one timed-out probing session was kept
as the answer for the process's life (a test of the agent-turn skeletons failed under CI load)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from test_skeleton_tools import TOOLS, agent_turn, count_template_runs, template_says

from prompter.formats import budget, derive, fixed, skeleton_tools
from prompter.formats.model_format import ModelFormat


def _time_out_first(monkeypatch: pytest.MonkeyPatch, module: Any, times: int = 1) -> list[int]:
    """Make the first *times* probing sessions of *module* run out of time (the later ones are real)."""
    sessions = [0]
    real = budget.probing

    @contextlib.contextmanager
    def probing(seconds: float = budget.PROBE_SECONDS) -> Iterator[budget.Probing]:
        sessions[0] += 1
        with real(seconds) as state:
            if sessions[0] <= times:
                state.timed_out = True
            yield state
            if sessions[0] <= times:
                state.timed_out = True

    monkeypatch.setattr(module, "probing", probing)
    return sessions


def _fresh(family: str, tag: str) -> ModelFormat:
    """*family*'s template with a comment of its own: nothing learnt about it yet in this process."""
    shipped = ModelFormat.get(family)
    assert shipped.chat_template is not None
    source = shipped.chat_template + "{# " + tag + " #}"
    return ModelFormat.from_chat_template(source, shipped.bos_token, shipped.eos_token)


def test_agent_turn_skeletons_are_learnt_after_a_timed_out_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = _fresh("llama-3.1", "agent turns, busy once")
    sessions = _time_out_first(monkeypatch, skeleton_tools)
    for i in range(5):
        messages = agent_turn(f"Weather {i}?", {"city": f"P{i}"}, f'{{"t": {i}}}')
        assert fmt.render(messages, tools=TOOLS) == template_says(fmt, messages, TOOLS)
    assert sessions[0] >= 2  # it probed again after the session that ran out of time
    runs = count_template_runs(monkeypatch)
    other = agent_turn("Und in Köln?", {"city": "Köln"}, "12")
    text = fmt.render(other, tools=TOOLS)
    assert runs[0] == 0, "a known agent shape should not run the template"
    monkeypatch.undo()
    assert text == template_says(fmt, other, TOOLS)


def test_fixed_strings_are_learnt_after_a_timed_out_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    _time_out_first(monkeypatch, derive)
    fmt = _fresh("qwen2.5", "fixed strings, busy once")
    for i in range(4):
        messages = [{"role": "user", "content": f"question {i}"}]
        assert fmt.render(messages) == template_says(fmt, messages)
    assert fixed.fast_layout(fmt, None) is not None  # the fixed strings were derived on a later try
    runs = count_template_runs(monkeypatch)
    messages = [{"role": "user", "content": "and again"}]
    text = fmt.render(messages)
    assert runs[0] == 0, "a template learnt after a busy moment should not run"
    monkeypatch.undo()
    assert text == template_says(fmt, messages)


def test_a_template_slow_every_time_is_probed_only_probe_tries_times(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = _fresh("llama-3.1", "agent turns, always busy")
    sessions = _time_out_first(monkeypatch, skeleton_tools, times=10**6)
    for i in range(3 * budget.PROBE_TRIES):
        messages = agent_turn(f"Weather {i}?", {"city": f"P{i}"}, f'{{"t": {i}}}')
        assert fmt.render(messages, tools=TOOLS) == template_says(fmt, messages, TOOLS)
    assert sessions[0] == budget.PROBE_TRIES


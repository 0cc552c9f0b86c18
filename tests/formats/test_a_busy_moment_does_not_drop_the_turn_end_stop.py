"""A busy moment while ``from_chat_template`` probes a template's turn end must not build a format
that never stops there.

Phi-3 closes an assistant turn with ``<|end|>`` and writes its eos token only after the last
turn; the format built from its template learns that first stop word by rendering one answer,
under a probe's short deadline. When that render ran out of time (another process, a
collector's pause), the format was built for good without ``<|end|>``: a module loading the
model then let generation run past the turn's end. A timed-out probe is now tried again, in a
session of its own, as the traits probes are (``PROBE_TRIES`` times at most for one template).
"""

from __future__ import annotations

from typing import Any

import pytest

import prompter.formats.tokens as tokens
from prompter.errors import TemplateTimeoutError
from prompter.formats.budget import PROBE_TRIES
from prompter.formats.model_format import ModelFormat

PHI_3 = ModelFormat.get("phi-3")


def _busy_for(times: int) -> Any:
    """A renderer whose first ``times`` turn-end probes (an answer after a question, no generation
    prompt) run out of time, as on a busy machine."""
    real = tokens.render_template
    calls = {"timed_out": 0}

    def render(compiled: Any, context: Any, **kwargs: Any) -> str:
        roles = [m.get("role") for m in context.get("messages", ())]
        answer = roles == ["user", "assistant"] and context.get("add_generation_prompt") is False
        if answer and calls["timed_out"] < times:
            calls["timed_out"] += 1
            raise TemplateTimeoutError("chat template ran past its time budget")
        return str(real(compiled, context, **kwargs))

    render.calls = calls  # type: ignore[attr-defined]
    return render


def _phi_3_template(tag: str) -> str:
    """Phi-3's template, made a template of its own (what was learnt of the registry's is kept)."""
    assert PHI_3.chat_template is not None
    return PHI_3.chat_template + "{# " + tag + " #}"


@pytest.mark.parametrize("times", range(1, PROBE_TRIES))
def test_a_timed_out_turn_end_probe_is_tried_again(times: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The busy moment stops the layout probes too: the format renders with its template (Phi-3's has
    no fixed strings anyway), and still stops at the turn's end."""
    import prompter.formats.derive as derive

    def layout_too_slow(*args: Any, **kwargs: Any) -> Any:
        raise derive.ProbeTimedOut

    monkeypatch.setattr(derive, "derive_layout", layout_too_slow)
    monkeypatch.setattr(tokens, "render_template", _busy_for(times))
    source = _phi_3_template(f"busy {times} times")
    fmt = ModelFormat.from_chat_template(source, bos_token="<s>", eos_token="<|endoftext|>")
    assert fmt.stop_words == ("<|end|>", "<|endoftext|>")


def test_a_template_too_slow_every_time_is_probed_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = _busy_for(10 * PROBE_TRIES)
    monkeypatch.setattr(tokens, "render_template", busy)
    source = _phi_3_template("always slow")
    first = ModelFormat.from_chat_template(source, bos_token="<s>", eos_token="<|endoftext|>")
    second = ModelFormat.from_chat_template(source, bos_token="<s>", eos_token="<|endoftext|>")
    assert busy.calls["timed_out"] == PROBE_TRIES  # the second build no longer probes it
    assert first.stop_words == second.stop_words == ("<|endoftext|>",)

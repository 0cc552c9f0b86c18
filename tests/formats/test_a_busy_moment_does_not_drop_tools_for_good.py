"""A busy moment while a template's traits are probed must not make its tools vanish for good.

Where a template reads tools (GLM-4: from the system message's ``tools`` key), how a
conversation reaches it (a folded system message for Gemma 2, string arguments for
DeepSeek-R1) is learnt by probing, under a short deadline. When the probes ran out of
time (another process, threads rendering at once), the guess from the source ("reads the
``tools`` variable", "keeps the system message") was cached for the life of the process:
GLM-4, given ``tools``, then printed none of them on every later render. Probes that ran
out of time are now tried again on later renders, as the fast paths' probes are.
"""

from __future__ import annotations

from typing import Any

import pytest

import prompter.formats.traits as traits
from prompter.errors import TemplateTimeoutError
from prompter.formats.model_format import ModelFormat

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {}}}]
USER = [{"role": "user", "content": "Weather in Paris?"}]


def _busy(*args: Any, **kwargs: Any) -> str:
    raise TemplateTimeoutError("chat template ran past its time budget")


@pytest.mark.parametrize("family", ["glm-4", "phi-4-mini"])
def test_tools_a_template_reads_from_the_system_message_survive_a_busy_first_probe(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered = ModelFormat.get(family)
    assert registered.chat_template is not None
    # a template of its own (the registry's traits may be learnt already in this process)
    fmt = ModelFormat(
        name=family,
        chat_template=registered.chat_template + "{# busy #}",
        bos_token=registered.bos_token,
        eos_token=registered.eos_token,
    )
    with monkeypatch.context() as busy:
        busy.setattr(traits, "render_template", _busy)
        traits.traits_of(fmt.chat_template, fmt.bos_token, fmt.eos_token)
    assert "get_weather" in fmt.render(USER, tools=TOOLS)
    assert "get_weather" in registered.render(USER, tools=TOOLS)


def test_a_rejected_system_message_is_folded_after_a_busy_first_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    gemma = ModelFormat.get("gemma-2")
    assert gemma.chat_template is not None
    fmt = ModelFormat(name="gemma-2", chat_template=gemma.chat_template + "{# busy #}", bos_token=gemma.bos_token)
    with monkeypatch.context() as busy:
        busy.setattr(traits, "render_template", _busy)
        traits.traits_of(fmt.chat_template, fmt.bos_token, fmt.eos_token)
    conversation = [{"role": "system", "content": "Be terse."}, *USER]
    assert fmt.render(conversation) == gemma.render(conversation)

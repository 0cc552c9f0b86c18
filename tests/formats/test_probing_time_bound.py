"""Learning a template (fixed strings, traits, skeletons) is bounded in time, like rendering it.

The fast paths probe a template with dozens of renders, once it has been rendered twice. Each
probe used to get the format's whole time budget, and a timeout only failed that probe: a bomb
held the second render for the budget times the number of probes (17 s), and a template that
stays just under the per-render budget, with many literals to probe, held ``from_chat_template``
for over a minute. Probes now share one short deadline per session and give up at the first
timeout, so every call is stopped within the 2 s bar with a ``PromptError``.
"""

from __future__ import annotations

import time

import pytest

from prompter.errors import PromptError, TemplateTimeoutError
from prompter.formats.model_format import ModelFormat

BOMB = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}{{ messages[0].content }}"
USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("construct", ["from_chat_template", "direct"])
def test_every_render_of_a_bomb_is_stopped_within_two_seconds(construct: str) -> None:
    fmt = ModelFormat.from_chat_template(BOMB) if construct != "direct" else ModelFormat(chat_template=BOMB)
    for _ in range(3):  # the second render is the one that probes the template for the fast paths
        start = time.monotonic()
        with pytest.raises(TemplateTimeoutError):
            fmt.render(USER)
        assert time.monotonic() - start < 2.0


def test_a_bomb_with_tools_is_stopped_within_two_seconds_on_every_render() -> None:
    fmt = ModelFormat(chat_template=BOMB)
    tools = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}}]
    for _ in range(3):
        start = time.monotonic()
        with pytest.raises(TemplateTimeoutError):
            fmt.render(USER, tools=tools)
        assert time.monotonic() - start < 2.0


def _slow_template(loops: int) -> str:
    """Each render loops ``loops`` times 99,999 (well under the 1 s budget, not under the probes'
    total); 40 literals the probes try one by one, which the template never reacts to."""
    literals = "{% set _ = [" + ", ".join(f"'<t{i}>'" for i in range(40)) + "] %}"
    work = "{% for i in range(99999) %}{% endfor %}" * loops
    return (
        literals + work + "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}</s>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )


def _seconds_per_render(source: str) -> float:
    fmt = ModelFormat(chat_template=source)
    fmt.render(USER, foo=1)  # the first render learns the template's traits
    start = time.monotonic()
    fmt.render(USER, foo=1)  # a keyword argument: the template runs, nothing is probed
    return time.monotonic() - start


def test_a_slow_template_with_many_literals_is_learnt_within_the_bar() -> None:
    loops = 1
    while _seconds_per_render(_slow_template(loops)) < 0.05 and loops < 64:  # about 50 ms a render
        loops *= 2
    source = _slow_template(loops)
    start = time.monotonic()
    fmt = ModelFormat.from_chat_template(source)
    assert time.monotonic() - start < 2.0
    for _ in range(3):
        start = time.monotonic()
        text = fmt.render(USER)
        assert time.monotonic() - start < 2.0
        assert text == "<|user|>hi</s><|assistant|>"


def test_a_template_slow_only_on_what_the_probes_send_is_still_rendered_exactly() -> None:
    """The probes time out (their sample text sets the bomb off); the caller's text does not."""
    source = (
        "{% for m in messages %}{% if 'World' in m.content %}"
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}{% endif %}"
        "<|{{ m.role }}|>{{ m.content }}</s>{% endfor %}"
    )
    fmt = ModelFormat(chat_template=source)
    for _ in range(3):
        start = time.monotonic()
        assert fmt.render(USER) == "<|user|>hi</s>"
        assert time.monotonic() - start < 2.0
    start = time.monotonic()
    with pytest.raises(PromptError):
        fmt.render([{"role": "user", "content": "Hello World"}])
    assert time.monotonic() - start < 2.0

"""Per-shape skeletons: what makes a template's skeleton unusable, and what keeps the cache bounded.

Each test renders twice or more, so the second render takes the skeleton path where the
template allows it, and compares with the sandboxed template itself.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.errors import TemplateError
from prompter.formats import skeleton
from prompter.formats.fixed import render_full
from prompter.formats.model_format import ModelFormat

PER_TURN = (
    "{% for m in messages %}{% if loop.first and m.role == 'system' %}[SYS {{ m.content }}]"
    "{% elif loop.last %}<last {{ m.role }}>{{ m.content }}</last>{% else %}<{{ m.role }}>{{ m.content }}"
    "</{{ m.role }}>{% endif %}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
)


def template_says(fmt: ModelFormat, messages: list[dict[str, Any]], add: bool = True) -> str:
    return render_full(fmt, messages, None, add, {}, False, use_layout=False).text


def conversation(turns: int, text: str = "q") -> list[dict[str, str]]:
    messages = [{"role": "system", "content": "sys"}]
    for i in range(turns):
        if i:
            messages.append({"role": "assistant", "content": f"a{i}"})
        messages.append({"role": "user", "content": f"{text}{i}"})
    return messages


def test_a_per_turn_template_renders_from_skeletons_with_the_templates_bytes() -> None:
    fmt = ModelFormat.from_chat_template(PER_TURN)
    for turns in (1, 2, 5):
        messages = conversation(turns)
        for _ in range(3):
            assert fmt.render(messages) == template_says(fmt, messages)
    entry = skeleton.front_entry(fmt)
    assert entry is not None and entry.policy is not None, "the per-turn template should take skeletons"


FLAGGING = {
    # a per-turn template takes skeletons, a uniform one fixed strings: both must see the branch
    "skeleton": PER_TURN.replace(
        "{{ m.content }}</last>", "{{ m.content }}{% if 'URGENT' in m.content %}!!{% endif %}</last>"
    ),
    "fixed-strings": (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% if 'URGENT' in m.content %}!!{% endif %}"
        "</{{ m.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
    ),
}


@pytest.mark.parametrize("path", sorted(FLAGGING))
def test_content_the_template_branches_on_is_rendered_by_the_template(path: str) -> None:
    fmt = ModelFormat.from_chat_template(FLAGGING[path])
    plain, flagged = conversation(2), conversation(2, text="URGENT ")
    for _ in range(3):
        assert fmt.render(plain) == template_says(fmt, plain)
        assert fmt.render(flagged) == template_says(fmt, flagged)
    assert "!!" in fmt.render(flagged)


LENGTHY = {
    "skeleton": PER_TURN.replace(
        "{{ m.content }}</last>", "{% if m.content | length > LIMIT %}LONG{% endif %}{{ m.content }}</last>"
    ),
    "fixed-strings": (
        "{% for m in messages %}<{{ m.role }}>{% if m.content | length > LIMIT %}LONG{% endif %}{{ m.content }}"
        "</{{ m.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
    ),
}


@pytest.mark.parametrize("path", sorted(LENGTHY))
@pytest.mark.parametrize("limit", [20, 300, 3000])
def test_a_template_that_reacts_to_content_length_keeps_its_bytes(path: str, limit: int) -> None:
    fmt = ModelFormat.from_chat_template(LENGTHY[path].replace("LIMIT", str(limit)))
    short, long = conversation(2), conversation(2, text="x" * (limit + 1))
    for _ in range(3):
        assert fmt.render(short) == template_says(fmt, short)
        assert fmt.render(long) == template_says(fmt, long)
    assert "LONG" in fmt.render(long)


def test_the_skeleton_cache_of_many_long_shapes_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skeleton, "_MAX_HELD", 20_000)
    fmt = ModelFormat.from_chat_template(PER_TURN)
    for turns in range(30, 90):  # a new shape every time, as a stream of growing chats would bring
        messages = conversation(turns)
        for _ in range(2):
            assert fmt.render(messages) == template_says(fmt, messages)
    held = sum(
        len(roles) + (0 if s is None else sum(map(len, s.markup)))
        for entry in skeleton._ENTRIES.values()
        for (roles, *_), s in entry.skeletons.items()
    )
    assert held <= 20_000 + 2_000  # the cap, plus the one shape that is always kept


def test_a_hostile_template_on_the_second_render_still_stops_within_its_budget() -> None:
    bomb = "{% for m in messages %}{{ m.content }}{% endfor %}{% for i in range(10**9) %}{% endfor %}"
    fmt = ModelFormat.from_chat_template(bomb)
    fmt = type(fmt)(**{**fmt.__dict__, "time_budget": 0.2})
    for _ in range(3):
        with pytest.raises(TemplateError):
            fmt.render(conversation(1))

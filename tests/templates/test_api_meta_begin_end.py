"""Default mode: an API meta template's ``begin``/``end`` surround the turns as they surround parse()'s text."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from prompter.templates import MetaTemplate, PromptList

ROUND = [dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)]
SYSTEM = [dict(role="SYSTEM", api_role="SYSTEM")]


def _prompt() -> PromptList:
    return PromptList(
        [
            dict(role="SYSTEM", fallback_role="HUMAN", prompt="Be brief."),
            dict(role="HUMAN", prompt="1+1=?"),
            dict(role="BOT", prompt="2"),
        ]
    )


def test_begin_opens_the_first_turn_and_gen_mode_leaves_end_to_the_model() -> None:
    meta = MetaTemplate(round=ROUND, reserved_roles=SYSTEM, begin="<meta>", end="</meta>")
    assert meta.parse_api(_prompt(), mode="gen") == [
        {"role": "SYSTEM", "prompt": "<meta>Be brief."},
        {"role": "HUMAN", "prompt": "1+1=?"},
    ]


def test_ppl_mode_writes_end_after_the_last_turn() -> None:
    meta = MetaTemplate(round=ROUND, reserved_roles=SYSTEM, begin="<meta>", end="</meta>")
    assert meta.parse_api(_prompt(), mode="ppl") == [
        {"role": "SYSTEM", "prompt": "<meta>Be brief."},
        {"role": "HUMAN", "prompt": "1+1=?"},
        {"role": "BOT", "prompt": "2</meta>"},
    ]


def test_the_turns_text_is_the_text_parse_writes_between_begin_and_end() -> None:
    """Same bytes as the LM form: begin + every turn's prompt + end, nothing added."""
    meta = MetaTemplate(round=ROUND, reserved_roles=SYSTEM, begin="B|", end="|E")
    turns = meta.parse_api(_prompt(), mode="ppl")
    assert "".join(t["prompt"] for t in turns) == "B|Be brief.1+1=?2|E"
    lm = MetaTemplate(
        round=[dict(role="HUMAN"), dict(role="BOT", generate=True)],
        reserved_roles=[dict(role="SYSTEM")],
        begin="B|",
        end="|E",
    )
    assert lm.parse(_prompt(), mode="ppl") == "B|Be brief.1+1=?2|E"


def test_content_parts_get_the_strings_as_text_parts_of_their_own() -> None:
    image = {"type": "image_url", "image_url": {"url": "file://cat.jpg"}}
    prompt = PromptList([dict(role="HUMAN", prompt=[image]), dict(role="BOT", prompt="a cat")])
    before = copy.deepcopy(prompt)
    meta = MetaTemplate(round=ROUND, begin="<meta>", end="</meta>")
    assert meta.parse_api(prompt, mode="ppl") == [
        {"role": "HUMAN", "prompt": [{"type": "text", "text": "<meta>"}, image]},
        {"role": "BOT", "prompt": "a cat</meta>"},
    ]
    assert prompt == before  # the caller's prompt and its parts are not changed


@pytest.mark.parametrize("mode", ["gen", "ppl"])
def test_no_turns_stay_no_turns(mode: Any) -> None:
    meta = MetaTemplate(round=ROUND, begin="<meta>", end="</meta>")
    assert meta.parse_api(PromptList([]), mode=mode) == []


def test_compat_mode_keeps_upstreams_value() -> None:
    """Upstream's APITemplateParser puts begin in front as a bare string and never writes end."""
    meta = MetaTemplate(round=ROUND, begin="<meta>", end="</meta>", compat="opencompass")
    out = meta.parse_api(PromptList([dict(role="HUMAN", prompt="hi"), dict(role="BOT", prompt="yo")]), mode="ppl")
    assert out[0] == "<meta>"
    assert "</meta>" not in str(out)

"""DashScope's and GLM's non-user turns carry text as the APIs document it.

DashScope: an unnamed assistant turn with an image, audio or video part was sent as a multimodal
list, though the assistant's ``content`` is the model's reply text (prompter's own strategy table
lists DashScope among the dialects whose assistant turns take no media); now a typed
``UnsupportedContentError`` names it before anything is sent, as for ``openai`` and ``zhipu``.

GLM: a system, assistant or tool message given as a list of text parts was sent as that list,
though GLM documents their ``content`` as a string; now the parts are newline-joined (as every
other string dialect joins them), and an image there is refused.
"""

from __future__ import annotations

import copy

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
AUDIO = {"type": "audio_url", "audio_url": {"url": "https://example.com/purr.mp3"}}


@pytest.mark.parametrize("part", [IMAGE, AUDIO], ids=["image", "audio"])
def test_dashscope_refuses_media_in_an_unnamed_assistant_turn(part: dict) -> None:
    given = [
        {"role": "user", "content": "Draw a cat."},
        {"role": "assistant", "content": [{"type": "text", "text": "Here it is."}, part]},
    ]
    before = copy.deepcopy(given)
    with pytest.raises(UnsupportedContentError, match=r"^history\[1\]\.content\[1\]: format='dashscope'.*assistant"):
        ChatPrompter().generate_prompt("Again.", history=given, format="dashscope")
    assert given == before


def test_dashscope_sends_the_remedies_in_a_user_turn() -> None:
    given = [{"role": "user", "content": "Draw a cat."}, {"role": "assistant", "content": [{"type": "text", "text": "Here."}, IMAGE]}]
    for body in (
        ChatPrompter().generate_prompt("Again.", history=given, format="dashscope", strategy="multi_agent"),
        ChatPrompter().generate_prompt("Again.", history=[given[0], {**given[1], "name": "painter"}], format="dashscope"),
    ):
        CHECKS["dashscope"](body)
        assert all(m["role"] != "assistant" for m in body["input"]["messages"])
        assert {"image": "https://example.com/cat.png"} in body["input"]["messages"][-1]["content"]


def test_dashscope_still_takes_media_in_a_user_turn_and_text_parts_from_the_assistant() -> None:
    given = [
        {"role": "user", "content": [{"type": "text", "text": "What is it?"}, IMAGE]},
        {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]},
    ]
    body = ChatPrompter(system="").generate_prompt("Sure?", history=given, format="dashscope")
    CHECKS["dashscope"](body)
    assert body["input"]["messages"][1] == {"role": "assistant", "content": [{"text": "A cat."}]}


@pytest.mark.parametrize("role", ["system", "assistant"])
def test_glm_sends_a_text_part_list_as_one_string(role: str) -> None:
    parts = [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]
    given = [{"role": "user", "content": "Hi."}, {"role": role, "content": parts}]
    body = ChatPrompter(system="").generate_prompt("Go on.", history=given, format="zhipu")
    CHECKS["zhipu"](body)
    assert body["messages"][1] == {"role": role, "content": "One.\nTwo."}


def test_glm_tool_result_given_as_parts_is_a_string() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    given = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    result = {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "18 degrees"}]}
    body = ChatPrompter(system="").generate_prompt(result, history=given, format="zhipu")
    CHECKS["zhipu"](body)
    assert body["messages"][-1] == {"role": "tool", "content": "18 degrees", "tool_call_id": "c1"}


def test_glm_refuses_an_image_in_a_system_message() -> None:
    given = [{"role": "system", "content": [{"type": "text", "text": "Look:"}, IMAGE]}]
    with pytest.raises(UnsupportedContentError, match=r"content\[1\]: format='zhipu' takes only text in a system"):
        ChatPrompter(system="").generate_prompt("Hi.", history=given, format="zhipu")


def test_glm_user_parts_stay_a_list() -> None:
    said = {"role": "user", "content": [{"type": "text", "text": "What is it?"}, IMAGE]}
    body = ChatPrompter(system="").generate_prompt(said, format="zhipu")
    assert body["messages"][0]["content"] == [{"type": "text", "text": "What is it?"}, IMAGE]

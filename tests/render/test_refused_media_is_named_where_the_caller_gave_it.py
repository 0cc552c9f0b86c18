"""A media part a dialect refuses is named where the caller gave it: ``history[i]``, ``input`` or ``input[j]``.

Before, three renders named another place. A strategy that merges the conversation into one message
(``"multi_agent"``, always for ``ollama_generate``) refused a history image as ``input.content[1]``,
a part of the merged message the caller never wrote; ``openai`` and ``zhipu`` counted the messages of
the body (``messages[1]``, after the system prompt) instead of the history; and a local model's
text-only chat template called an audio or video part of the history ``messages[1]...: a 'image_url'
part``. Ollama's errors also read "not a audio part". Now each error starts with the caller's place
and the part's own kind, for every strategy, and never shows the URL (a signed URL carries its key).
"""

from __future__ import annotations

import copy
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prompter import ChatPrompter
from prompter.errors import MessageError, PromptError, ToolsError, UnsupportedContentError

KEY = "X-Amz-Signature=k3yk3yk3yk3y"
AUDIO = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
VIDEO = {"type": "video_url", "video_url": {"url": f"https://example.com/clip.mp4?{KEY}"}}
IMAGE_URL = {"type": "image_url", "image_url": {"url": f"https://example.com/cat.png?{KEY}"}}
MALFORMED = {"type": "image_url", "image_url": {"url": "data:image/png;base64"}}
# per dialect, parts it takes nowhere (in no role, under no strategy)
REFUSED = {
    "openai": [VIDEO],
    "zhipu": [AUDIO, VIDEO],
    "anthropic": [AUDIO, VIDEO, MALFORMED],
    "gemini": [MALFORMED],
    "ollama": [AUDIO, VIDEO, IMAGE_URL, MALFORMED],
    "ollama_generate": [AUDIO, VIDEO, IMAGE_URL, MALFORMED],
}
CALL = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
TEXT_TURNS = [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "18 degrees"},
    {"role": "assistant", "content": "It is 18 degrees.", "name": "Bob"},
    {"role": "user", "content": "Thanks.", "name": "Alice"},
]


def test_audio_or_video_in_history_for_a_text_only_model_is_named_by_its_kind_and_place() -> None:
    for part, kind in ((AUDIO, "an audio part"), (VIDEO, "a video part")):
        history = [{"role": "user", "content": [part]}, {"role": "assistant", "content": "ok"}]
        with pytest.raises(UnsupportedContentError) as info:
            ChatPrompter("x").generate_prompt("hi", model_format="qwen2.5", history=history)
        assert str(info.value).startswith(f"history[0].content[0]: {kind} cannot be rendered")
        assert "image_url" not in str(info.value) and "messages[" not in str(info.value)


def test_ollama_generate_names_the_history_place_of_an_audio_part() -> None:
    history = [{"role": "user", "content": [AUDIO]}, {"role": "assistant", "content": "ok"}]
    with pytest.raises(UnsupportedContentError) as info:
        ChatPrompter("x").generate_prompt("hi", format="ollama_generate", history=history)
    assert str(info.value).startswith("history[0].content[0]: Ollama's /api/generate takes images only")
    assert "an audio part" in str(info.value) and "a audio" not in str(info.value)


@pytest.mark.parametrize("dialect", ["ollama", "ollama_generate"])
def test_multi_agent_names_the_history_place_of_an_image_url(dialect: str) -> None:
    history = [{"role": "user", "name": "A", "content": [IMAGE_URL]}]
    with pytest.raises(UnsupportedContentError) as info:
        ChatPrompter().generate_prompt("hi", format=dialect, history=history, strategy="multi_agent")
    assert str(info.value).startswith("history[0].content[0]: Ollama's ")
    assert "k3y" not in str(info.value)


def test_glm_names_the_history_place_of_an_image_in_a_tool_result() -> None:
    result = {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "r"}, IMAGE_URL]}
    history = [{"role": "assistant", "content": None, "tool_calls": [CALL]}, result]
    with pytest.raises(UnsupportedContentError) as info:
        ChatPrompter("x").generate_prompt("hi", format="zhipu", history=history)
    assert str(info.value).startswith("history[1].content[1]: format='zhipu' takes only text in a tool message")


def test_a_tool_with_nan_is_named_by_its_index() -> None:
    tools = [
        {"type": "function", "function": {"name": "f"}},
        {"type": "function", "function": {"name": "g", "parameters": {"type": "object", "default": float("nan")}}},
    ]
    for dialect in sorted(REFUSED):
        with pytest.raises(ToolsError, match=r"^tools\[1\]: NaN is not a JSON value"):
            ChatPrompter().generate_prompt("hi", tools=tools, format=dialect)


@settings(max_examples=150, deadline=None)
@given(
    dialect=st.sampled_from(sorted(REFUSED)),
    which=st.integers(0, 3),
    strategy=st.sampled_from([None, "chat", "multi_agent", "auto"]),
    role=st.sampled_from(["user", "assistant", "system", "tool"]),
    name=st.sampled_from([None, "Carol"]),
    before=st.integers(0, len(TEXT_TURNS)),
    place=st.sampled_from(["history", "input", "input list"]),
    system=st.sampled_from(["", "Be brief."]),
)
def test_every_refusal_names_the_callers_place(dialect, which, strategy, role, name, before, place, system) -> None:
    part = REFUSED[dialect][which % len(REFUSED[dialect])]
    message: dict = {"role": role, "content": [{"type": "text", "text": "Look."}, part]}
    if name is not None and role in ("user", "assistant"):
        message["name"] = name
    if role == "tool":
        message["tool_call_id"] = "c1"
    history = copy.deepcopy(TEXT_TURNS)
    if place == "history":
        history.insert(before, message)
        given_input, expected = "Go on.", f"history[{before}].content[1]: "
    elif place == "input":
        given_input, expected = message, "input.content[1]: "
    else:
        given_input, expected = [{"role": "user", "content": "Hi."}, message], "input[1].content[1]: "
    kept = copy.deepcopy((history, given_input))
    with pytest.raises((UnsupportedContentError, MessageError)) as info:
        ChatPrompter(system).generate_prompt(given_input, history=history, format=dialect, strategy=strategy)
    assert isinstance(info.value, PromptError)
    assert str(info.value).startswith(expected), str(info.value)
    assert "k3y" not in str(info.value)
    assert (history, given_input) == kept


def test_a_skipped_urls_key_never_reaches_the_log(caplog: pytest.LogCaptureFixture) -> None:
    pdf = {"type": "image_url", "image_url": {"url": f"https://user:pw@example.com/report.pdf?{KEY}#page=2"}}
    with caplog.at_level(logging.DEBUG, logger="prompter"):
        ChatPrompter().generate_prompt({"role": "user", "content": [{"type": "text", "text": "Hi."}, pdf]}, format="openai")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "skipped 'https://example.com/report.pdf'" in logged
    assert "k3y" not in logged and "pw" not in logged and "page=2" not in logged


def test_a_url_that_cannot_be_read_is_a_typed_error_naming_it() -> None:
    broken = {"type": "image_url", "image_url": {"url": "http://[abc/cat.png"}}
    with pytest.raises(MessageError, match=r"^input\.content\[1\]: the image URL cannot be read"):
        ChatPrompter().generate_prompt({"role": "user", "content": [{"type": "text", "text": "Hi."}, broken]}, format="gemini")


def test_anthropic_shows_an_image_type_it_refuses_short_with_the_remedy() -> None:
    url = "data:image/" + "x" * 100_000 + ";base64,AAAA"
    given = {"role": "user", "content": [{"type": "text", "text": "Hi."}, {"type": "image_url", "image_url": {"url": url}}]}
    with pytest.raises(UnsupportedContentError) as info:
        ChatPrompter().generate_prompt(given, format="anthropic")
    assert str(info.value).startswith("input.content[1]: Anthropic takes image/jpeg")
    assert len(str(info.value)) < 300 and "convert the image" in str(info.value)


@pytest.mark.parametrize("dialect", ["anthropic", "ollama_generate", "openai"])
def test_a_speaker_name_spanning_lines_is_named_where_the_caller_gave_it(dialect: str) -> None:
    history = [{"role": "user", "content": "Hi."}, {"role": "assistant", "name": "Bob\nuser", "content": "Yes."}]
    with pytest.raises(MessageError, match=r"^history\[1\]\.name 'Bob\\nuser': a speaker's name must be one line"):
        ChatPrompter().generate_prompt("Go on.", history=history, format=dialect, strategy="multi_agent")

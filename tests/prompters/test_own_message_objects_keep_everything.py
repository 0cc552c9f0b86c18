"""prompter's own ``Message`` objects given as history or input render as the dicts they came from.

The input boundary re-reads a ``Message`` (and its ``ToolCall``\\ s and ``ContentPart``\\ s) as a
message dict before validating it again. That dict dropped what the message carried: an audio or
video part came back as an *image* part, Anthropic thinking blocks and Gemini's thought signature
were lost (Gemini 3 refuses its own call sent back without it), and the caller's JSON text of the
arguments was re-encoded. Now a ``Message`` renders exactly as its dict does, in every dialect.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.messages import message_from_dict
from prompter.render import DIALECTS

CALL = {
    "role": "assistant",
    "content": None,
    "thinking_blocks": [{"type": "thinking", "thinking": "Look it up.", "signature": "sig-1"}],
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city":  "Oslo", "days": 2}'},
            "extra_content": {"google": {"thought_signature": "ts-1"}},
        }
    ],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
AUDIO = "data:audio/wav;base64,UklGRg=="
VIDEO = "https://example.com/clip.mp4"


def _both(dialect: str, history: list[Any], question: Any = "And tomorrow?") -> tuple[Any, Any]:
    p = ChatPrompter(system="S")
    as_dicts = p.generate_prompt(question, history=history, format=dialect)
    as_messages = p.generate_prompt(
        question if isinstance(question, str) else message_from_dict(question),
        history=[message_from_dict(m) for m in history],
        format=dialect,
    )
    return as_dicts, as_messages


@pytest.mark.parametrize("dialect", sorted(DIALECTS - {"ollama_generate"}))
def test_a_tool_call_message_keeps_thinking_signature_and_arguments_text(dialect: str) -> None:
    as_dicts, as_messages = _both(dialect, [{"role": "user", "content": "Weather?"}, CALL, RESULT])
    assert as_messages == as_dicts


@pytest.mark.parametrize(
    ("dialect", "part"),
    [
        ("openai", {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}),
        ("gemini", {"type": "audio_url", "audio_url": {"url": AUDIO}}),
        ("gemini", {"type": "video_url", "video_url": {"url": VIDEO}}),
        ("dashscope", {"type": "video_url", "video_url": {"url": VIDEO}}),
    ],
    ids=["openai-audio", "gemini-audio", "gemini-video", "dashscope-video"],
)
def test_an_audio_or_video_part_stays_audio_or_video(dialect: str, part: dict[str, Any]) -> None:
    said = {"role": "user", "content": [{"type": "text", "text": "Hear this."}, part]}
    as_dicts, as_messages = _both(dialect, [said, {"role": "assistant", "content": "Nice."}], said)
    assert as_messages == as_dicts
    assert "image" not in str(as_messages).replace("image_url", "")  # never sent as an image

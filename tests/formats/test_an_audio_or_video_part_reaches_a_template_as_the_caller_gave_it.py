"""A media part reaches a chat template as the caller's dict gave it, on every path.

An ``input_audio``, ``audio_url`` or ``video_url`` part (or AgentScope's ``image`` / ``audio`` /
``video`` block) is never shown to the template as an image: the prompter's path (neutral messages)
gives the template the same part as ``ModelFormat.render`` of the message dict, which is what
transformers' ``apply_chat_template`` gives it. A template that names only audio (Qwen2-Audio's)
takes the content list too, rather than being refused as text-only.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError
from prompter.formats.model_format import ModelFormat
from prompter.messages import message_from_dict

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

SHOWS_PARTS = (
    "{% for m in messages %}{% for p in m.content %}{% if p.type == 'image_url' %}<image>"
    "{% elif p.type == 'text' %}{{ p.text }}{% else %}<{{ p.type }}>{% endif %}{{ p | tojson }}"
    "{% endfor %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

# the shape of Qwen2-Audio-Instruct's template: it names audio, never image
AUDIO_ONLY = (
    "{% set audio_count = namespace(value=0) %}{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}{% if 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}Audio {{ audio_count.value }}: <|AUDIO|>\n"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

PARTS: list[tuple[str, dict[str, Any]]] = [
    ("input_audio", {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}),
    ("input_audio_mp3", {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}}),
    ("audio_url", {"type": "audio_url", "audio_url": {"url": "https://example.com/a.mp3"}}),
    ("audio_url_data", {"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64,UklGRg=="}}),
    ("video_url", {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}}),
    ("image_url", {"type": "image_url", "image_url": {"url": "https://example.com/i.png"}}),
    ("image_url_detail", {"type": "image_url", "image_url": {"url": "https://example.com/i.png", "detail": "low"}}),
    ("agentscope_image", {"type": "image", "url": "https://example.com/i.png"}),
    ("agentscope_audio", {"type": "audio", "url": "https://example.com/a.wav"}),
    ("agentscope_video", {"type": "video", "url": "https://example.com/v.mp4"}),
]


def _transformers(source: str, messages: list[dict[str, Any]]) -> str:
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(model), eos_token="</s>")
    tok.chat_template = source
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)  # type: ignore[no-any-return]


def _message(part: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": "hear this"}, part]}


@pytest.mark.parametrize(("source", "part"), [(SHOWS_PARTS, p) for _, p in PARTS], ids=[i for i, _ in PARTS])
def test_every_path_shows_the_template_the_part_transformers_shows_it(source: str, part: dict[str, Any]) -> None:
    fmt = ModelFormat.from_chat_template(source, name="parts")
    message = _message(part)
    want = _transformers(source, [message])
    assert fmt.render([message]) == want
    assert fmt.render_with_spans([message]).text == want
    assert fmt.render_messages([message_from_dict(message)]) == want
    assert ChatPrompter("", system="").generate_prompt(message, model_format=fmt) == want


@pytest.mark.parametrize("part", [p for _, p in PARTS[:5]], ids=[i for i, _ in PARTS[:5]])
def test_a_template_naming_only_audio_takes_the_content_list(part: dict[str, Any]) -> None:
    fmt = ModelFormat.from_chat_template(AUDIO_ONLY, name="audio-only")
    message = _message(part)
    want = _transformers(AUDIO_ONLY, [message])
    assert fmt.render([message]) == want
    assert ChatPrompter("", system="").generate_prompt(message, model_format=fmt) == want


@pytest.mark.parametrize("part", [p for _, p in PARTS], ids=[i for i, _ in PARTS])
def test_a_media_part_is_no_user_text_span(part: dict[str, Any]) -> None:
    source = SHOWS_PARTS.replace("{{ p | tojson }}", "")
    fmt = ModelFormat.from_chat_template(source, name="marks")
    rendered = fmt.render_with_spans([_message(part)])
    assert rendered.text == _transformers(source, [_message(part)])
    assert [rendered.text[a:b] for a, b in rendered.spans] == ["hear this"]


def test_the_caller_s_part_is_not_changed() -> None:
    fmt = ModelFormat.from_chat_template(SHOWS_PARTS, name="parts")
    message = _message({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}})
    before = repr(message)
    ChatPrompter("", system="").generate_prompt(message, model_format=fmt)
    fmt.render([message])
    assert repr(message) == before


def test_a_text_only_template_names_the_part_as_the_caller_gave_it() -> None:
    fmt = ModelFormat.from_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}", name="text")
    neutral = message_from_dict(_message(PARTS[0][1]))
    with pytest.raises(UnsupportedContentError, match="input_audio"):
        fmt.render_messages([neutral])

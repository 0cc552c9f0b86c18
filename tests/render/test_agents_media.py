"""Media in the API dialects: local files, URL checks, audio and video parts."""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

import pytest
from api_rules import CHECKS

from prompter import ChatPrompter
from prompter.errors import MessageError, UnsupportedContentError

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_B64 = base64.b64encode(PNG).decode()
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
WAV_B64 = base64.b64encode(WAV).decode()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """A PNG, a JPEG (PNG bytes, named .jpg), a WAV, an MP4 and a secret text file on disk."""
    out = {}
    for name, data in [
        ("cat.png", PNG),
        ("dog.JPG", PNG),
        ("hello.wav", WAV),
        ("clip.mp4", b"\x00\x00\x00\x18ftypmp42"),
        ("secret.txt", b"password=hunter2"),
    ]:
        path = tmp_path / name
        path.write_bytes(data)
        out[name] = str(path)
    return out


def turn(kind: str, url: str, text: str = "Look") -> dict[str, Any]:
    """A user message of one text and one media part."""
    key = {"image": "image_url", "audio": "audio_url", "video": "video_url"}[kind]
    return {"role": "user", "content": [{"type": "text", "text": text}, {"type": key, key: {"url": url}}]}


def render(dialect: str, message: dict[str, Any]) -> Any:
    body = ChatPrompter(system="").generate_prompt(message, format=dialect)
    CHECKS[dialect](body)
    return body


def test_local_png_becomes_base64_with_its_mime_type_in_every_dialect(files: dict[str, str]) -> None:
    path = files["cat.png"]
    openai = render("openai", turn("image", path))
    assert openai["messages"][0]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG_B64}"
    zhipu = render("zhipu", turn("image", path))
    assert zhipu["messages"][0]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG_B64}"
    anthropic = render("anthropic", turn("image", path))
    assert anthropic["messages"][0]["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": PNG_B64,
    }
    gemini = render("gemini", turn("image", path))
    assert gemini["contents"][0]["parts"][1] == {"inline_data": {"mime_type": "image/png", "data": PNG_B64}}
    ollama = render("ollama", turn("image", path))
    assert ollama["messages"][0] == {"role": "user", "content": "Look", "images": [PNG_B64]}
    generate = render("ollama_generate", turn("image", path))
    assert generate == {"prompt": "## Conversation History\nuser: Look", "images": [PNG_B64]}


def test_jpg_extension_is_image_jpeg_and_file_urls_work(files: dict[str, str]) -> None:
    body = render("anthropic", turn("image", "file://" + files["dog.JPG"]))
    assert body["messages"][0]["content"][1]["source"]["media_type"] == "image/jpeg"


def test_dashscope_sends_local_files_as_file_urls(files: dict[str, str]) -> None:
    body = render("dashscope", turn("image", files["cat.png"]))
    assert body["input"]["messages"][0]["content"] == [{"text": "Look"}, {"image": "file://" + files["cat.png"]}]
    audio = render("dashscope", turn("audio", files["hello.wav"]))
    assert audio["input"]["messages"][0]["content"][1] == {"audio": "file://" + files["hello.wav"]}


@pytest.mark.parametrize(
    "url, reason",
    [
        ("https://example.com/report.pdf", "not an image"),
        ("https://example.com/song.mp3", "not an image"),
        ("/no/such/dir/cat.png", "no such file"),
    ],
    ids=["pdf-url", "mp3-url-as-image", "missing-file"],
)
@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini", "dashscope", "zhipu"])
def test_invalid_image_is_skipped_with_a_warning(
    dialect: str, url: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="prompter"):
        body = render(dialect, turn("image", url))
    assert url not in str(body)
    assert reason in caplog.text and "content[1]" in caplog.text


def test_local_file_with_a_non_media_extension_is_never_read(files: dict[str, str]) -> None:
    # the threat: a message naming any local file would send its bytes to the provider
    for dialect in ("openai", "anthropic", "gemini", "ollama", "dashscope"):
        body = render(dialect, turn("image", files["secret.txt"]))
        assert "hunter2" not in str(body) and base64.b64encode(b"password=hunter2").decode() not in str(body)
        assert files["secret.txt"] not in str(body)


def test_web_url_without_extension_is_kept() -> None:
    body = render("openai", turn("image", "https://example.com/image?id=7"))
    assert body["messages"][0]["content"][1]["image_url"]["url"] == "https://example.com/image?id=7"


def test_audio_per_dialect(files: dict[str, str]) -> None:
    openai = render("openai", turn("audio", files["hello.wav"]))
    assert openai["messages"][0]["content"][1] == {
        "type": "input_audio",
        "input_audio": {"data": WAV_B64, "format": "wav"},
    }
    given = {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}}]}
    assert render("openai", given)["messages"][0]["content"] == openai["messages"][0]["content"][1:]
    gemini = render("gemini", turn("audio", files["hello.wav"]))
    assert gemini["contents"][0]["parts"][1] == {"inline_data": {"mime_type": "audio/wav", "data": WAV_B64}}
    remote = render("gemini", turn("audio", "https://example.com/a.mp3"))
    assert remote["contents"][0]["parts"][1] == {
        "file_data": {"mime_type": "audio/mp3", "file_uri": "https://example.com/a.mp3"}
    }


def test_video_per_dialect(files: dict[str, str]) -> None:
    gemini = render("gemini", turn("video", "https://example.com/clip.mp4"))
    assert gemini["contents"][0]["parts"][1] == {
        "file_data": {"mime_type": "video/mp4", "file_uri": "https://example.com/clip.mp4"}
    }
    dashscope = render("dashscope", turn("video", files["clip.mp4"]))
    assert dashscope["input"]["messages"][0]["content"][1] == {"video": "file://" + files["clip.mp4"]}


@pytest.mark.parametrize(
    "dialect, kind, match",
    [
        ("openai", "video", "takes no video"),
        ("openai", "audio-url", "base64 WAV or MP3"),
        ("zhipu", "video", "takes no video"),
        ("zhipu", "audio", "takes no audio"),
        ("anthropic", "audio", "takes no audio"),
        ("anthropic", "video", "takes no video"),
        ("ollama", "audio", "images only"),
        ("ollama_generate", "video", "base64 data only"),
    ],
    ids=lambda v: str(v),
)
def test_audio_and_video_where_the_api_takes_none_is_a_typed_error(
    dialect: str, kind: str, match: str, files: dict[str, str]
) -> None:
    message = {
        "video": turn("video", "https://example.com/clip.mp4"),
        "audio": turn("audio", files["hello.wav"]),
        "audio-url": turn("audio", "https://example.com/a.wav"),
    }[kind]
    with pytest.raises(UnsupportedContentError, match=match):
        ChatPrompter(system="").generate_prompt(message, format=dialect)


def test_agentscope_block_shapes_are_accepted(files: dict[str, str]) -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "image", "url": files["cat.png"]}]}
    body = render("openai", message)
    assert body["messages"][0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


@pytest.mark.parametrize(
    "part",
    [
        {"type": "input_audio", "input_audio": {"data": "AAAA"}},
        {"type": "video_url", "video_url": {}},
        {"type": "audio"},
    ],
    ids=["input-audio-without-format", "video-without-url", "audio-without-url"],
)
def test_malformed_media_part_is_a_typed_error(part: dict[str, Any]) -> None:
    with pytest.raises(MessageError):
        ChatPrompter().generate_prompt({"role": "user", "content": [part]}, format="openai")


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu"])
def test_client_supplied_local_path_is_never_read_when_local_files_are_off(dialect: str, files: dict[str, str]) -> None:
    # the threat: a server relaying its clients' messages would read and forward the server's own files
    from prompter.render.media import local_files

    with local_files(False), pytest.raises(UnsupportedContentError, match="local files are not read"):
        ChatPrompter(system="").generate_prompt(turn("image", "file://" + files["cat.png"]), format=dialect)
    body = render(dialect, turn("image", files["cat.png"]))  # outside the block, read as before
    assert PNG_B64 in str(body) or files["cat.png"] in str(body)


def test_a_message_left_without_parts_is_empty_text_not_an_empty_list() -> None:
    only = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "/no/such/cat.png"}}]}
    body = ChatPrompter(system="").generate_prompt("hi", history=[only], format="openai")
    assert body["messages"][0] == {"role": "user", "content": ""}
    with pytest.raises(UnsupportedContentError, match="empty user message"):
        ChatPrompter(system="").generate_prompt(only, format="anthropic")

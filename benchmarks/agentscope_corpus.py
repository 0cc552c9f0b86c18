"""Records the AgentScope parity corpus: ``tests/render/data/agentscope.json``.

Each case is a conversation of AgentScope ``Msg``s (2-4 speakers, a system
prompt, names, consecutive turns, images from local files and URLs, audio and
video, dict and number content) and the upstream entry point that formats it:
a 0.0.6a2 model wrapper's ``format`` or a 0.1.6 formatter's ``format_chat`` /
``format_multi_agent`` / ``format_auto``. Upstream runs in scratch venvs
outside the repo (``/tmp/as006`` and ``/tmp/as016``, or ``AS006_PYTHON`` /
``AS016_PYTHON``) through ``agentscope_worker.py``; set them up with::

    python3 -m venv /tmp/as016 && /tmp/as016/bin/pip install --no-deps agentscope==0.1.6
    python3 -m venv /tmp/as006 && /tmp/as006/bin/pip install --no-deps agentscope==0.0.6a2

plus what importing ``agentscope.models`` / ``agentscope.formatters`` asks for
(found by trial; 0.1.6: loguru sqlalchemy numpy pillow psutil requests pydantic
shortuuid docstring_parser nest_asyncio tqdm json5 jsonschema socketio scipy;
0.0.6a2: loguru dill psutil requests grpcio numpy dashscope tqdm flask flask_cors
flask_sqlalchemy flask_socketio pillow openai protobuf scipy). Re-recording
reproduces the committed file byte for byte. Local media live in a temporary
folder, recorded as ``<DIR>`` so the test can recreate them anywhere.

    python benchmarks/agentscope_corpus.py          # re-record
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "render" / "data" / "agentscope.json"
WORKER = Path(__file__).with_name("agentscope_worker.py")
PYTHONS = {
    "0.0.6a2": os.environ.get("AS006_PYTHON", "/tmp/as006/bin/python"),
    "0.1.6": os.environ.get("AS016_PYTHON", "/tmp/as016/bin/python"),
}
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
#: local media files, written under <DIR>
FILES = {"park.png": PNG, "cafe.jpg": PNG, "song.mp3": b"ID3fake-mp3", "clip.mp4": b"fake-mp4"}
TOOL_USE = {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}}
TOOL_RESULT = {"type": "tool_result", "id": "call_1", "name": "weather", "output": "18 degrees"}
SYSTEM = {"name": "system", "role": "system", "content": "You're a helpful assistant."}


def m(name: str, content: Any, role: str = "assistant", url: Any = None) -> dict[str, Any]:
    """One AgentScope Msg as JSON."""
    return {"name": name, "role": role, "content": content, "url": url}


def conversations() -> dict[str, list[dict[str, Any]]]:
    """The conversations every entry point formats (media URLs use <DIR> for local files)."""
    return {
        "two": [SYSTEM, m("user", "Hi, who are you?", "user"), m("Friday", "I am Friday.")],
        "two-user-last": [SYSTEM, m("Bob", "Hi!", "user"), m("Friday", "Hello Bob."), m("Bob", "Weather?", "user")],
        "three": [SYSTEM, m("Bob", "Hi!"), m("Alice", "Nice to meet you!"), m("user", "And you?", "user")],
        "four": [
            SYSTEM,
            m("Alice", "Shall we go out?", "user"),
            m("Bob", "It is raining."),
            m("Carol", "Take an umbrella."),
            m("Dave", "Agreed."),
        ],
        "no-system": [m("Bob", "Hi!"), m("Alice", "Hello.", "user")],
        "consecutive": [SYSTEM, m("Bob", "One."), m("Bob", "Two."), m("user", "Go on.", "user")],
        "dict-number": [SYSTEM, m("Bot", {"temp_c": 18}), m("user", 42, "user")],
        "image-url": [SYSTEM, m("Dave", "The cafe.", "user", "https://example.com/cafe.jpg")],
        "image-local": [SYSTEM, m("Carol", "The park.", "user", "<DIR>/park.png")],
        "image-two": [SYSTEM, m("Carol", "Both.", "user", ["<DIR>/cafe.jpg", "https://example.com/b.png"])],
        "image-invalid": [SYSTEM, m("Eve", "A doc.", "user", "https://example.com/report.pdf")],
        "audio-local": [SYSTEM, m("Carol", "Listen.", "user", "<DIR>/song.mp3")],
        "video-url": [SYSTEM, m("Carol", "Watch.", "user", "https://example.com/clip.mp4")],
        "tool": [
            SYSTEM,
            m("Alice", "Weather in Paris?", "user"),
            m("Bob", [{"type": "text", "text": "Let me check."}, TOOL_USE]),
            m("system", [TOOL_RESULT], "system"),
            m("Bob", "It is 18 degrees."),
        ],
        "empty-multiline": [SYSTEM, m("Bob", ""), m("Alice", "Line one.\nLine two.", "user")],
        "spaced-name": [SYSTEM, m("Dr Alice", "Hello.", "user"), m("Bob", "Hi, doctor.")],
        "image-agents": [
            SYSTEM,
            m("Bob", "Look.", "assistant", "https://example.com/a.png"),
            m("Alice", "Nice.", "user"),
        ],
    }


#: (entry point, conversations) pairs: every conversation for the merging wrappers, fewer for the rest
TARGETS = [
    (
        "0.0.6a2",
        "openai",
        None,
        [
            "two",
            "three",
            "four",
            "no-system",
            "dict-number",
            "image-url",
            "image-local",
            "image-two",
            "audio-local",
            "spaced-name",
        ],
    ),
    (
        "0.0.6a2",
        "dashscope",
        None,
        ["two", "three", "four", "no-system", "consecutive", "dict-number", "empty-multiline"],
    ),
    ("0.0.6a2", "dashscope_mm", None, ["three", "image-url", "image-local", "audio-local", "video-url"]),
    ("0.0.6a2", "gemini", None, ["two", "three", "four", "no-system", "image-url"]),
    ("0.0.6a2", "ollama", None, ["two", "three", "four", "no-system", "image-local", "image-agents"]),
    ("0.0.6a2", "ollama_generate", None, ["three", "four", "no-system"]),
    ("0.0.6a2", "zhipu", None, ["three", "four", "dict-number"]),
    ("0.0.6a2", "post_api", None, ["three", "dict-number"]),
    ("0.0.6a2", "litellm", None, ["three"]),
    ("0.1.6", "openai", "chat", ["three", "image-url", "image-local", "tool", "spaced-name", "image-two"]),
    ("0.1.6", "openai", "multi_agent", ["three", "four", "image-url"]),
    ("0.1.6", "anthropic", "chat", ["two", "two-user-last", "consecutive", "three", "image-url", "image-local"]),
    ("0.1.6", "anthropic", "multi_agent", ["three", "four", "tool"]),
    ("0.1.6", "gemini", "chat", ["two-user-last", "three", "image-url"]),
    ("0.1.6", "gemini", "multi_agent", ["three", "four", "empty-multiline"]),
    ("0.1.6", "dashscope", "chat", ["two-user-last", "three", "image-local", "audio-local"]),
    ("0.1.6", "dashscope", "multi_agent", ["three", "four", "image-url", "tool"]),
    ("0.1.6", "dashscope", "auto", ["two", "four"]),
    ("0.1.6", "common", "chat", ["two", "three", "consecutive"]),
    ("0.1.6", "common", "multi_agent", ["three", "four"]),
    ("0.1.6", "gemini", "auto", ["two", "four"]),
]
MODELS = {
    "gemini": "gemini-pro",
    "ollama": "llava",
    "ollama_generate": "llama3",
    "zhipu": "glm-4",
    "dashscope": "qwen-max",
    "dashscope_mm": "qwen-vl-max",
}


def build_cases() -> list[dict[str, Any]]:
    """Every case: id, version, api, strategy (0.1.x), model (0.0.x) and its messages."""
    convs = conversations()
    cases = []
    for version, api, strategy, names in TARGETS:
        for name in names:
            case_id = f"{version}:{api}:{strategy or 'format'}:{name}"
            cases.append(
                {
                    "id": case_id,
                    "version": version,
                    "api": api,
                    "strategy": strategy,
                    "model": MODELS.get(api, "gpt-4o"),
                    "conversation": name,
                    "msgs": convs[name],
                }
            )
    return cases


def write_files(folder: Path) -> None:
    """The local media files, under ``folder``."""
    for name, data in FILES.items():
        (folder / name).write_bytes(data)


def _fill(value: Any, folder: str) -> Any:
    return json.loads(json.dumps(value).replace("<DIR>", folder))


def record() -> dict[str, Any]:
    """Runs upstream on every case; outputs with the media folder as <DIR>."""
    cases = build_cases()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        write_files(Path(tmp))
        for version, python in PYTHONS.items():
            mine = [_fill(c, tmp) for c in cases if c["version"] == version]
            done = subprocess.run(
                [python, str(WORKER), version],
                input=json.dumps(mine),
                capture_output=True,
                text=True,
                check=True,
                cwd=tmp,
            )
            results.update(json.loads(done.stdout.replace(tmp, "<DIR>")))
    return {"agentscope": list(PYTHONS), "results": results}


if __name__ == "__main__":
    missing = [p for p in PYTHONS.values() if not Path(p).exists()]
    if missing:
        sys.exit(f"no AgentScope venv at {missing}: see this file's docstring")
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(record(), ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("recorded", RECORD)

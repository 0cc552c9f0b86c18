"""Threat: a small request listing many tools holds the server's event loop, so no other client is answered.

A small body with a template prompter ships was rendered on the event loop. Each new tool set has its
layout derived (some 200 renders): 128 one-line tools in a 16 KB body took 1.5 s on the tiny model,
and ``/health`` waited as long. A request with tools now renders in a worker thread, whatever the
template. The scripted module holds its render open until the test lets it go, so the order of
events, not a clock, shows whether the loop was free.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from held_render import HeldRender
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

import modules.server.app as server_app
from modules.local.trainable import TrainableModule
from modules.server.app import ServerThread, create_app
from prompter.formats.model_format import ModelFormat

USER = [{"role": "user", "content": "hi"}]
TOOLS = [
    {"type": "function", "function": {"name": f"tool_{i}", "description": '"', "parameters": {"type": "object"}}}
    for i in range(128)
]


def test_health_is_answered_while_a_request_with_many_tools_renders() -> None:
    module = HeldRender(ModelFormat.get("qwen2.5"))  # a template prompter ships
    server = ServerThread(create_app(module)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            answers: list[int] = []
            body = {"model": "held", "messages": USER, "tools": TOOLS}
            chat = threading.Thread(target=lambda: answers.append(http.post("/v1/chat/completions", json=body).status_code))
            chat.start()
            assert module.rendering.wait(timeout=30)
            other = http.get("/health")
            module.events.append("other client answered")
            module.release.set()
            chat.join(timeout=60)
        assert other.status_code == 200 and answers == [200]
        assert module.events == ["render starts", "other client answered", "render ends"]
    finally:
        module.release.set()
        server.stop()


def test_the_tiny_model_renders_a_request_with_tools_off_the_event_loop(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[str] = []
    original = server_app._without_local_files

    def spy(prepare: Any, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(prepare, *args, **kwargs)

    monkeypatch.setattr(server_app, "_without_local_files", spy)
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=2).start(serve=True)
    try:
        with httpx.Client(base_url=module.url, timeout=60) as http:
            plain = http.post("/chat/completions", json={"model": "tiny", "messages": USER})
            tooled = http.post("/chat/completions", json={"model": "tiny", "messages": USER, "tools": TOOLS[:3]})
    finally:
        module.stop()
    assert plain.status_code == 200 and tooled.status_code == 200, tooled.text
    assert threads[0] == "prompter-server"  # no tools, a shipped template: on the loop, no thread hop
    assert threads[1] != "prompter-server"  # tools: off the loop

"""Threat: a model folder's chat template that renders slowly (inside its 1 s budget) stalls every client.

A small request's prompt was rendered on the server's event loop, whatever template rendered it: while
one request rendered a hostile template, no other request (``/health``, ``/v1/models``, another chat)
was even read. Only the templates prompter ships and has reviewed render on the loop now; any other
renders in a worker thread. The modules here are scripted (their ``prepare`` holds the render open until
the test lets it go), so the order of events, not a clock, shows whether the loop was free.
"""

from __future__ import annotations

import shutil
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

FOREIGN = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
USER = [{"role": "user", "content": "hi"}]


SHIPPED = ModelFormat.get("qwen2.5").chat_template or ""


@pytest.mark.parametrize("path", ["/health", "/v1/models"])
@pytest.mark.parametrize(
    ("template", "trim"), [(FOREIGN, None), (SHIPPED, "oldest")], ids=["foreign-template", "shipped-but-trimming"]
)
def test_other_clients_are_answered_while_a_slow_render_runs(path: str, template: str, trim: str | None) -> None:
    module = HeldRender(ModelFormat(name="from-a-folder", chat_template=template), trim)
    server = ServerThread(create_app(module)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            answers: list[int] = []
            body = {"model": "held", "messages": USER}
            chat = threading.Thread(target=lambda: answers.append(http.post("/v1/chat/completions", json=body).status_code))
            chat.start()
            assert module.rendering.wait(timeout=30)
            other = http.get(path)
            module.events.append("other client answered")
            module.release.set()
            chat.join(timeout=60)
        assert other.status_code == 200 and answers == [200]
        assert module.events == ["render starts", "other client answered", "render ends"]
    finally:
        module.release.set()
        server.stop()


def test_a_shipped_template_still_renders_on_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    original = server_app._without_local_files

    def spy(prepare: Any, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(prepare, *args, **kwargs)

    monkeypatch.setattr(server_app, "_without_local_files", spy)
    for template in (SHIPPED, FOREIGN):
        module = HeldRender(ModelFormat(name="from-a-folder", chat_template=template))
        module.release.set()
        server = ServerThread(create_app(module)).start()
        try:
            reply = httpx.post(server.url + "/v1/chat/completions", json={"model": "held", "messages": USER}, timeout=60)
            assert reply.status_code == 200
        finally:
            server.stop()
    assert threads[0] == "prompter-server"  # the shipped template: on the loop, no thread hop
    assert threads[1] != "prompter-server"  # the foreign one: off the loop


def test_a_model_folders_own_template_renders_off_the_event_loop(
    tiny_model_path: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "foreign"
    shutil.copytree(tiny_model_path, folder)
    (folder / "chat_template.jinja").write_text(FOREIGN, encoding="utf-8")
    assert _threads_rendering(TrainableModule(folder, name="tiny", max_new_tokens=2), monkeypatch) != "prompter-server"


def test_a_trimming_module_renders_off_the_event_loop(
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = TrainableModule(tiny_model_path, name="tiny", max_new_tokens=2, trim="oldest")
    assert _threads_rendering(module, monkeypatch) != "prompter-server"


def _threads_rendering(module: TrainableModule, monkeypatch: pytest.MonkeyPatch) -> str:
    """The name of the thread that rendered a small chat request to *module*, served."""
    threads: list[str] = []
    original = server_app._without_local_files

    def spy(prepare: Any, *args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(prepare, *args, **kwargs)

    monkeypatch.setattr(server_app, "_without_local_files", spy)
    module.start(serve=True)
    try:
        reply = httpx.post(module.url + "/chat/completions", json={"model": "tiny", "messages": USER}, timeout=60)
        assert reply.status_code == 200
    finally:
        module.stop()
    assert len(threads) == 1
    return threads[0]

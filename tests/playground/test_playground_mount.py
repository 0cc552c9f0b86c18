"""The playground on ``prompter serve`` (mounted at ``/playground``, token counts from the model's tokenizer)
and as ``prompter playground``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from prompter import ChatPrompter

ROOT = Path(__file__).resolve().parents[2]


class WordTokenizer:
    """Counts whitespace-separated words: enough to see that the served model's tokenizer is the one asked."""

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(range(len(text.split())))

    def __call__(self, text: str, **options: Any) -> dict[str, list[int]]:
        """Callable as a Hugging Face tokenizer is: the count encodes the user's text apart from the markup."""
        return {"input_ids": self.encode(text)}


class FakeModule:
    """What ``create_app`` needs of a served module, plus a tokenizer (``TrainableModule`` has one)."""

    name = "tiny"

    @property
    def tokenizer(self) -> WordTokenizer:
        return WordTokenizer()


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The OpenAI-compatible server's base URL, with the playground mounted."""
    from modules.server.app import ServerThread, create_app

    server = ServerThread(create_app(FakeModule())).start()
    try:
        yield server.url
    finally:
        server.stop()


def test_the_server_mounts_the_playground_with_token_counts(served: str) -> None:
    page = requests.get(served + "/playground/", timeout=10)
    assert page.status_code == 200 and "<title>" in page.text
    state = {"instruction": "Be brief.", "input": "hi there"}
    body = requests.post(served + "/playground/api/render", json={"state": state}, timeout=10).json()
    text = ChatPrompter("Be brief.").generate_prompt("hi there")
    assert body["output"] == text
    assert body["tokens"] == len(text.split())
    assert requests.get(served + "/playground/api/options", timeout=10).json()["tokens"] is True


def test_the_playground_without_a_trailing_slash_still_finds_its_files(served: str) -> None:
    page = requests.get(served + "/playground", timeout=10)  # redirected to /playground/
    assert page.status_code == 200
    assert page.url.endswith("/playground/")


def test_a_link_to_the_mounted_playground_keeps_its_state_through_the_redirect(served: str) -> None:
    page = requests.get(served + "/playground", params={"input": "<hi & bye>", "model_format": "qwen2.5"}, timeout=10)
    assert page.url.startswith(served + "/playground/?")
    assert "&lt;hi &amp; bye&gt;" in page.text and 'data-kind="text"' in page.text


def test_the_servers_own_endpoints_are_unchanged(served: str) -> None:
    assert requests.get(served + "/health", timeout=10).json()["status"] == "ok"
    assert "/playground" not in requests.get(served + "/openapi.json", timeout=10).text


def test_a_dialect_has_no_token_count(served: str) -> None:
    state = {"input": "hi", "format": "openai"}
    body = requests.post(served + "/playground/api/render", json={"state": state}, timeout=10).json()
    assert body["tokens"] is None and body["chars"] == len(body["output"])


def _cli(*args: str, **kwargs: Any) -> Any:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "modules.cli", *args],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kwargs,
    )


def test_prompter_playground_serves_the_page_until_stopped() -> None:
    proc = _cli("playground", "--port", "0")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("playground at http://127.0.0.1:")
        url = line.split()[2]
        assert requests.get(url, timeout=10).status_code == 200
        state = {"input": "hi", "model_format": "qwen2.5"}
        body = requests.post(url + "api/render", json={"state": state}, timeout=10).json()
        assert body["output"] == ChatPrompter().generate_prompt("hi", model_format="qwen2.5")
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_a_bad_port_is_one_line_and_status_2() -> None:
    proc = _cli("playground", "--port", "70000")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert err.strip().splitlines() == [
        "prompter playground: error: --port: expected 0..65535 (0 picks a free port), got 70000"
    ]

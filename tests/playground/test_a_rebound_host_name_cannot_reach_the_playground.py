"""DNS rebinding and cross-site posts against the playground on 127.0.0.1.

Before the fix, ``GET /api/options`` with ``Host: attacker.example:8765`` answered 200, and ``POST /api/render``
from a page on attacker.example (``Content-Type: text/plain``: a "simple" request, sent without a CORS
preflight) answered 200 with the rendering. Now a Host that names no loopback address is a 403
``HostNotAllowed`` naming the remedy, and a render request that is not ``application/json`` a 415.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATE = json.dumps({"state": {"input": "hi"}})


def _ask(url: str, host: str | None, method: str, path: str, body: str | None = None, **headers: str) -> Any:
    """(status, headers, JSON body) of one request to the playground at *url* (over 127.0.0.1)."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    try:
        if host is not None:
            headers["Host"] = host
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("method", "path", "body", "headers"),
    [
        ("GET", "/api/options", None, {}),
        ("GET", "/", None, {}),
        ("GET", "/static/playground.js", None, {}),
        ("POST", "/api/render", STATE, {"Content-Type": "text/plain;charset=UTF-8", "Origin": "http://attacker.example"}),
        ("POST", "/api/render", STATE, {"Content-Type": "application/json"}),
    ],
    ids=["options", "page", "script", "simple-post", "json-post"],
)
def test_a_rebound_host_name_cannot_reach_the_playground(
    playground_url: str, method: str, path: str, body: str | None, headers: dict[str, str]
) -> None:
    port = urlsplit(playground_url).port
    status, response, answer = _ask(playground_url, f"attacker.example:{port}", method, path, body, **headers)
    assert status == 403
    assert response.getheader("Access-Control-Allow-Origin") is None
    assert response.getheader("Content-Type") == "application/json"
    error = answer["error"]
    assert error["type"] == "HostNotAllowed" and error["field"] is None
    assert "'attacker.example:" in error["message"] and "DNS rebinding" in error["message"]
    assert "--host" in error["message"] and "--allowed-host attacker.example" in error["message"]
    assert "output" not in answer


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "127.0.0.53", "[::1]:{port}"])
def test_the_playground_answers_a_loopback_host_name(playground_url: str, host: str) -> None:
    port = urlsplit(playground_url).port
    status, _, answer = _ask(playground_url, host.format(port=port), "GET", "/api/options")
    assert status == 200 and "families" in answer
    headers = {"Content-Type": "application/json; charset=utf-8"}
    status, _, answer = _ask(playground_url, host.format(port=port), "POST", "/api/render", STATE, **headers)
    assert status == 200 and answer["output"]


@pytest.mark.parametrize(
    "content_type",
    ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
    ids=["text", "form", "multipart", "none"],
)
def test_a_cross_site_simple_post_cannot_render(playground_url: str, content_type: str | None) -> None:
    """The three types a page on another site may post without a preflight (and none): a 415, nothing rendered."""
    headers = {} if content_type is None else {"Content-Type": content_type}
    origin = {"Origin": "http://attacker.example"}
    status, _, answer = _ask(playground_url, None, "POST", "/api/render", STATE, **headers, **origin)
    assert status == 415
    assert answer["error"]["type"] == "UnsupportedMediaType"
    assert answer["error"]["message"].startswith("Content-Type must be application/json (")
    assert "as the page does" in answer["error"]["message"]
    assert "output" not in answer


def test_prompter_playground_takes_allowed_host_names() -> None:
    command = [sys.executable, "-m", "modules.cli", "playground", "--port", "0", "--allowed-host", "mybox.lan"]
    proc = subprocess.Popen(command, cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[2]
        port = urlsplit(url).port
        assert _ask(url, f"mybox.lan:{port}", "GET", "/api/options")[0] == 200
        assert _ask(url, f"127.0.0.1:{port}", "GET", "/api/options")[0] == 200
        status, _, answer = _ask(url, f"attacker.example:{port}", "GET", "/api/options")
        assert status == 403 and "mybox.lan" in answer["error"]["message"]
    finally:
        proc.terminate()
        proc.wait(timeout=15)

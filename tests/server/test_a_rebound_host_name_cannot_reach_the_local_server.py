"""DNS rebinding: a web page on attacker.example whose name is then pointed at 127.0.0.1 sends its requests
to the local model server with ``Host: attacker.example``; the browser counts the answers as the page's own,
so before this check the page could call the model API, and read what it answered.

A server listening on loopback now answers only a Host naming loopback (localhost, 127.x, [::1], any port),
else a 403 in OpenAI's envelope (code ``host_not_allowed``) naming the Host and the remedy; the playground
mounted beside the API is covered by the same check. ``allowed_hosts`` (``--allowed-host``) adds names.
"""

from __future__ import annotations

import argparse
import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from modules import ModuleConfigError
from modules.server.app import ServerThread, create_app


class Module:
    """What ``create_app`` needs to build its routes; no request here ever reaches the model."""

    name = "tiny"


def _start(**options: Any) -> ServerThread:
    return ServerThread(create_app(Module(), **options)).start()


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    started = _start()
    try:
        yield started
    finally:
        started.stop()


def _ask(server: ServerThread, host: str, method: str = "GET", path: str = "/health", **headers: str) -> Any:
    """(status, JSON body) of one request sent to *server* over 127.0.0.1 with ``Host: host``."""
    where = urlsplit(server.url)
    connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    try:
        body = json.dumps({"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}) if method == "POST" else None
        connection.request(method, path, body=body, headers={"Host": host, **headers})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("GET", "/health", {}),
        ("GET", "/v1/models", {}),
        ("POST", "/v1/chat/completions", {"Content-Type": "application/json", "Origin": "http://attacker.example"}),
        ("POST", "/v1/completions", {"Content-Type": "text/plain"}),
        ("GET", "/playground/api/options", {}),
        ("GET", "/playground/", {}),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_a_rebound_host_name_cannot_reach_the_local_server(
    server: ServerThread, method: str, path: str, headers: dict[str, str]
) -> None:
    status, body = _ask(server, f"attacker.example:{server.port}", method, path, **headers)
    assert status == 403
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "host_not_allowed"
    assert error["type"] == "invalid_request_error"
    assert "'attacker.example:" in error["message"]
    assert "DNS rebinding" in error["message"]
    assert "--host" in error["message"] and "--allowed-host attacker.example" in error["message"]


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "LocalHost", "127.8.9.10:{port}", "[::1]:{port}", "[::1]"]
)
def test_a_loopback_host_name_is_answered_with_any_port(server: ServerThread, host: str) -> None:
    status, body = _ask(server, host.format(port=server.port))
    assert status == 200, body
    assert body["status"] == "ok"


@pytest.mark.parametrize("host", ["127.0.0.1.attacker.example", "localhost.attacker.example", "0.0.0.0", "x"])
def test_a_name_that_only_looks_like_loopback_is_refused(server: ServerThread, host: str) -> None:
    status, body = _ask(server, f"{host}:{server.port}")
    assert status == 403, body
    assert body["error"]["code"] == "host_not_allowed"


def test_an_allowed_host_name_is_answered_and_others_still_refused() -> None:
    started = _start(allowed_hosts=["mybox.lan"])
    try:
        assert _ask(started, f"MyBox.lan:{started.port}")[0] == 200
        assert _ask(started, "localhost")[0] == 200
        status, body = _ask(started, "attacker.example")
        assert status == 403
        assert "mybox.lan" in body["error"]["message"]
    finally:
        started.stop()


def test_a_star_allows_any_host_name() -> None:
    started = _start(allowed_hosts=["*"])
    try:
        assert _ask(started, "proxy.example.com")[0] == 200
    finally:
        started.stop()


@pytest.mark.parametrize("allowed", ["mybox.lan", [""], ["http://mybox.lan/"], [5]], ids=repr)
def test_allowed_hosts_that_are_no_host_names_are_refused_when_the_app_is_built(allowed: object) -> None:
    with pytest.raises(ModuleConfigError, match=r"^allowed_hosts: expected"):
        create_app(Module(), allowed_hosts=allowed)  # type: ignore[arg-type]


def _refusal(listen: str, host: str, allowed: tuple[str, ...] | None = None) -> str | None:
    from modules.server.host_check import LISTEN_HOST, HostCheck

    check = HostCheck(None, allowed, lambda message: {"message": message})
    return check.refusal({"type": "http", LISTEN_HOST: listen, "headers": [(b"host", host.encode())]})


@pytest.mark.parametrize("listen", ["0.0.0.0", "::", "192.168.1.5"])
def test_a_server_listening_beyond_loopback_answers_any_host_unless_told_otherwise(listen: str) -> None:
    # judged without listening there: these tests reach no network but 127.0.0.1
    assert _refusal(listen, "mybox.lan:8000") is None
    assert _refusal(listen, "mybox.lan:8000", ("other.lan",)) is not None
    assert _refusal(listen, "other.lan:8000", ("other.lan",)) is None
    assert _refusal(listen, "127.0.0.1:8000", ("other.lan",)) is None


def test_a_server_listening_on_localhost_or_ipv6_loopback_is_loopback_too() -> None:
    for listen in ("localhost", "::1", "127.0.0.2"):
        assert _refusal(listen, "attacker.example") is not None
        assert _refusal(listen, "[::1]:8000") is None


def test_serve_takes_allowed_host_flags_as_the_allowed_hosts_option() -> None:
    from modules.server.cli_options import add_engine_options, server_options

    parser = argparse.ArgumentParser()
    add_engine_options(parser)
    args = parser.parse_args(["--allowed-host", "mybox.lan", "--allowed-host", "10.0.0.2"])
    assert server_options(args) == {"allowed_hosts": ["mybox.lan", "10.0.0.2"]}
    assert server_options(parser.parse_args([])) == {}

"""``ServerThread`` refuses a host, port or graceful_timeout it cannot use, by name, before it starts.

uvicorn reads them in the server's own thread, so a wrong one was at best "the
server did not start" with the reason only in the log, and at worst served on
another port than asked: ``port=True`` and ``port=1.5`` listened on port 1; a
``graceful_timeout`` of the wrong type crashed ``stop()`` in the thread.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from modules.errors import ModuleConfigError
from modules.server.lifecycle import ServerThread


async def _app(scope: Any, receive: Any, send: Any) -> None:  # the least ASGI app: the address is under test
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.parametrize(
    ("options", "said"),
    [
        pytest.param({"port": True}, "port: expected an int from 0 to 65535", id="port-true"),
        pytest.param({"port": 1.5}, "port: expected an int from 0 to 65535", id="port-float"),
        pytest.param({"port": "8000"}, "port: expected an int from 0 to 65535", id="port-str"),
        pytest.param({"port": -1}, "port: expected an int from 0 to 65535", id="port-negative"),
        pytest.param({"port": 65536}, "port: expected an int from 0 to 65535", id="port-too-high"),
        pytest.param({"host": ""}, "host: expected the interface to listen on", id="host-empty"),
        pytest.param({"host": None}, "host: expected the interface to listen on", id="host-none"),
        pytest.param({"host": b"127.0.0.1"}, "host: expected the interface to listen on", id="host-bytes"),
        pytest.param({"graceful_timeout": "5"}, "graceful_timeout: expected an int >= 0", id="timeout-str"),
        pytest.param({"graceful_timeout": -1}, "graceful_timeout: expected an int >= 0", id="timeout-negative"),
    ],
)
def test_a_bad_address_or_timeout_is_refused_by_name(options: dict[str, Any], said: str) -> None:
    with pytest.raises(ModuleConfigError) as raised:
        ServerThread(_app, **options)
    assert str(raised.value).startswith(said), raised.value


class _Host(str):
    def __str__(self) -> str:
        return "0.0.0.0"  # a str subclass is read as its exact text, never through its own methods


def test_a_good_address_serves_there() -> None:
    server = ServerThread(_app, host=_Host("127.0.0.1"), port=0).start()
    try:
        assert type(server.host) is str and server.host == "127.0.0.1" and server.port > 0
        assert httpx.get(server.url + "/", timeout=30).status_code == 204
    finally:
        server.stop()

"""Threat: the API key leaks. A canary key must reach the server's Authorization header and nowhere else:
not in a log line (root and urllib3 at DEBUG), a repr, an error's str/repr/args/body, a formatted
traceback with its chain, nor a URL.
"""

from __future__ import annotations

import copy
import logging
import pickle
import socket
import traceback

import pytest
from fault_server import Drop, FakeClock, FaultServer, Hang, Reply, Stream, error_body, sse_events

from modules import OnlineChatModule
from modules.errors import APIError, ModuleConfigError
from modules.online.module import Secret, Timeout
from modules.online.retry import RetryPolicy

CANARY = "sk-canary-7f3a9c2e5b8d1f4a6c0e"


@pytest.fixture
def server():
    """A fresh fault-injecting server."""
    with FaultServer() as srv:
        yield srv


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))
        if record.exc_info:
            self.lines.append("".join(traceback.format_exception(*record.exc_info)))


@pytest.fixture
def logs(caplog):
    """Every log record at DEBUG (root and urllib3), formatted, as a list of lines."""
    handler = _Collect()
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="urllib3")
    yield handler.lines
    root.removeHandler(handler)
    root.setLevel(old)
    handler.lines.extend(r.getMessage() for r in caplog.records)


def module(base_url: str, **kw) -> OnlineChatModule:
    clock = FakeClock()
    policy = RetryPolicy(sleep=clock.sleep, clock=clock.clock, random=lambda: 0.0)
    return OnlineChatModule(base_url=base_url, model="m", api_key=CANARY, retry=policy, **kw)


def exposures(exc: BaseException) -> list[str]:
    """Everything an exception shows: str, repr, args, attributes, the formatted chained traceback."""
    out = [str(exc), repr(exc), repr(exc.args), repr(vars(exc))]
    out.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__, chain=True)))
    seen = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    while seen is not None:
        out += [str(seen), repr(seen)]
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    return out


def test_the_canary_reaches_the_server_and_nothing_else(server, logs):
    m = module(server.base_url)
    echo = f"Incorrect API key provided: {CANARY}"  # a server that echoes the key back
    server.script += [
        Reply(500), Reply(body={"choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}]}),
        Reply(401, error_body(echo)),
        Reply(400, echo),
        Drop(), Drop(), Drop(),
        Stream([*sse_events("a b c")[:2], f'data: {{"error": {{"message": "{echo}"}}}}\n\n'.encode()]),
        Stream(sse_events("a b c")[:2], cut=True),
        Reply(200, "not json " + CANARY),
    ]  # fmt: skip
    shown: list[str] = [repr(m), str(m), repr(m.share()), repr(m.build_request("hi")), repr(vars(m))]
    assert m("hi") == "fine"
    for call in (
        lambda: m("hi"),  # 401 echoing the key in JSON
        lambda: m("hi"),  # 400 echoing it in plain text
        lambda: m("hi"),  # three dropped connections
        lambda: list(m.stream("hi")),  # error event echoing the key
        lambda: list(m.stream("hi")),  # cut stream
        lambda: m("hi"),  # 200 with a non-JSON body containing the key
    ):
        with pytest.raises(APIError) as info:
            call()
        shown += exposures(info.value)
    assert all(r.headers["authorization"] == f"Bearer {CANARY}" for r in server.requests)
    assert all(CANARY not in r.path for r in server.requests)
    assert len(server.requests) == 10  # 500 + 200, 401, 400, 3 drops, 2 streams, 200
    assert logs, "logging was captured"
    assert any("retrying" in line for line in logs)
    leaked = [text for text in shown + logs if CANARY in text]
    assert leaked == []
    assert not any(CANARY[-12:] in text for text in shown + logs)  # not even a long tail of it


def test_connection_refused_and_timeouts_do_not_show_the_key(server, logs):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    shown: list[str] = []
    with pytest.raises(APIError) as info:
        module(f"http://127.0.0.1:{port}/v1")("hi")
    shown += exposures(info.value)
    server.script += [Hang(1.0)] * 3
    with pytest.raises(APIError) as info:
        module(server.base_url, timeout=Timeout(connect=1, read=0.05, total=None))("hi")
    shown += exposures(info.value)
    assert [t for t in shown + logs if CANARY in t] == []


def test_secret_repr_shows_at_most_the_last_four_characters():
    assert repr(Secret(CANARY)) == "'***6c0e'"
    assert str(Secret("short-key")) == "'***'"
    assert f"{Secret(CANARY)}" == "'***6c0e'"
    with pytest.raises(TypeError):
        pickle.dumps(Secret(CANARY))


def test_a_key_from_the_environment_is_used_and_masked(server, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", CANARY)
    m = OnlineChatModule(source="deepseek", base_url=server.base_url)
    assert m("hi") == "ok"
    assert server.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    assert CANARY not in repr(m) and m.model == "deepseek-chat"


def test_missing_key_error_names_the_variable_not_a_key(monkeypatch):
    monkeypatch.delenv("MOONSHOT_API_KEY", raising=False)
    monkeypatch.delenv("KIMI_API_KEY", raising=False)
    with pytest.raises(ModuleConfigError, match="MOONSHOT_API_KEY"):
        OnlineChatModule(source="kimi")


def test_a_credential_in_base_url_is_refused_without_echoing_it():
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule(base_url=f"http://user:{CANARY}@127.0.0.1:9/v1", model="m")
    assert CANARY not in "".join(exposures(info.value))


def test_copies_share_the_secret_and_requests_carry_no_key(server):
    m = module(server.base_url)
    assert copy.deepcopy(m._backend.api_key) is m._backend.api_key
    request = m.build_request("hi")
    assert CANARY not in repr(request) and "authorization" not in {k.lower() for k in request.headers}

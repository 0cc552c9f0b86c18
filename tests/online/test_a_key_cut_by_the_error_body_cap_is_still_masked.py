"""Threat: a hostile server pads its error answer so that the echoed key straddles the error body cap.

An error body is kept up to 1 MiB. Cut there before it was masked, a key across the cut was no longer
the key, so the scrubber missed it and all of it but its last characters reached ``err.body`` (and the
message). Now what was read is masked before it is cut, and an end of the kept text that could begin a
secret is dropped (as a stream holds back such an end), whatever the body's type (plain text, JSON with
the key JSON-escaped) and wherever the cut falls inside the key. The same holds for a redirect's
``Location`` shown (cut to 300 characters) in a :class:`CrossOriginRedirectError`.
"""

from __future__ import annotations

import logging
import traceback

import pytest
from fault_server import FaultServer, Reply

from modules import OnlineChatModule
from modules.errors import APIStatusError, ModuleError
from modules.online.retry import RetryPolicy

KEY = "sk-proj-Q7fZ2mVx9LpR4tYb8NcK1wHs6/JdE3gUa"
ESCAPED = KEY.replace("/", "\\/")  # the key as a JSON encoder that escapes "/" writes it
CAP = 1 << 20


def everything_shown(exc: BaseException, logs: list[str]) -> str:
    return "\n".join(
        [str(exc), repr(exc), repr(vars(exc)), "".join(traceback.format_exception(exc)), *logs]
    )


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def call(server: FaultServer, reply: Reply) -> tuple[ModuleError, list[str]]:
    server.script[:] = [reply]
    handler = _Lines()
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    try:
        m = OnlineChatModule(base_url=server.base_url, model="m", api_key=KEY, retry=RetryPolicy(max_retries=0))
        with pytest.raises(ModuleError) as caught:
            m("hi")
        m.close()
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    return caught.value, handler.lines


def assert_no_part_of_the_key(text: str) -> None:
    for form in (KEY, ESCAPED):
        for length in range(4, len(form) + 1):  # the scrubber's shortest secret is 4 characters
            assert form[:length] not in text, f"{length} characters of the key survived"


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


@pytest.mark.parametrize("inside", [1, 4, 20, len(KEY) - 1], ids=lambda n: f"{n}-chars-before-the-cut")
def test_a_plain_text_key_across_the_cap(server, inside):
    body = b"x" * (CAP - inside) + KEY.encode() + b" is not a valid key"
    error, logs = call(server, Reply(401, body, headers={"Content-Type": "text/plain"}))
    assert isinstance(error, APIStatusError) and error.status_code == 401
    assert isinstance(error.body, str) and len(error.body) <= CAP
    assert error.body.startswith("x" * 1000)  # the body is still kept, up to the cap
    assert_no_part_of_the_key(everything_shown(error, logs))


@pytest.mark.parametrize("inside", [1, 7, len(ESCAPED) - 1], ids=lambda n: f"{n}-chars-before-the-cut")
def test_a_json_escaped_key_across_the_cap(server, inside):
    head = b'{"error": {"message": "'
    body = head + b"y" * (CAP - len(head) - inside) + ESCAPED.encode() + b' is not a valid key"}}'
    error, logs = call(server, Reply(400, body, headers={"Content-Type": "application/json"}))
    assert isinstance(error, APIStatusError) and error.status_code == 400
    assert_no_part_of_the_key(everything_shown(error, logs))


def test_a_key_where_the_reading_stops_in_a_body_of_wide_characters(server):
    # 2-byte characters: the bytes read past the cap are fewer characters than the cap, so the text is not cut
    # at the cap but ends where the reading stopped, which may be inside the key: its start is dropped too.
    for read_end in (CAP + 65536, CAP + 2 * 65536):
        pad = "é" * ((read_end - 10) // 2)
        body = (pad + KEY + " is not a valid key").encode()
        error, logs = call(server, Reply(403, body, headers={"Content-Type": "text/plain"}))
        assert isinstance(error, APIStatusError) and error.status_code == 403
        assert_no_part_of_the_key(everything_shown(error, logs))


def test_a_key_across_the_cut_of_a_redirect_location_shown_in_the_error(server):
    prefix = "http://elsewhere.example:81/"
    for inside in (1, 4, 20, len(KEY) - 1):
        location = prefix + "p" * (300 - len(prefix) - inside) + KEY + "/tail"
        error, logs = call(server, Reply(302, b"", headers={"Location": location}))
        assert "elsewhere.example" in str(error)
        assert_no_part_of_the_key(everything_shown(error, logs))

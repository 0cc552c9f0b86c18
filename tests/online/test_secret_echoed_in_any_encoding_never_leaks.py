"""Threat: a hostile server echoes a credential back *encoded*, so a search for the plain key misses it.

Servers and libraries do not echo a secret only as it was sent: a ``Location`` or an error
message percent-encodes it (either hex case, ``+`` for a space), a body that is not valid JSON
(an error body cut short, a broken SSE event) keeps its JSON escapes, a log line ``repr``-s the
bytes it could not parse (urllib3's "Failed to parse headers" warning), an ``Authorization:
Basic`` echo base64-encodes it inside a longer string, and a plain-text error page wraps it
across lines. Property, over generated cases: whichever credential (``api_key=``, a source's
environment variable, a known credential header, a custom one such as ``X-Auth-Token``, the
password inside a ``Basic`` header), whatever visible-ASCII characters it holds, whichever of
those encodings and wherever the server puts it (an error body, a request id, a redirect
``Location``, a 200 answer's text, an SSE error event, a malformed header line), no form of
it reaches the caller: not the answer, not any exception (``str``, ``repr``, ``args``,
attributes, the formatted traceback with its chain), not a log record at any level (root,
urllib3 and requests at DEBUG), not a warning, not a ``repr`` of the module or its requests.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import string
import traceback
import warnings
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from fault_server import FaultServer, Raw, Reply, Stream, completion
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules import OnlineChatModule
from modules.errors import ModuleError
from modules.online.retry import RetryPolicy

KEY_CHARS = string.ascii_letters + string.digits + "-_.~+/=%&?#@:!$*'\"\\"


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def base64_cores(secret: str) -> set[str]:
    """The base64 characters that depend on ``secret``'s bytes alone, at each of the 3 offsets."""
    raw = secret.encode()
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw).decode()
        start, end = (8 * offset + 5) // 6, 8 * (offset + len(raw)) // 6
        cores |= {encoded[start:end], encoded[start:end].replace("+", "-").replace("/", "_")}
    return cores


def lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def natural_forms(secret: str) -> set[str]:
    return {
        secret,
        quote(secret, safe=""),
        lower_hex(quote(secret, safe="")),
        quote(secret),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        *base64_cores(secret),
    }


def encoded(secret: str, how: str, cut: int) -> str:
    if how == "raw":
        return secret
    if how == "percent":
        return quote(secret, safe="")
    if how == "percent-lower":
        return lower_hex(quote(secret, safe=""))
    if how == "plus":
        return quote_plus(secret)
    if how == "json":
        return json.dumps(secret)[1:-1]
    if how == "repr":
        return repr(secret)[1:-1]
    if how == "base64":
        return base64.b64encode(b"user:"[: cut % 6] + secret.encode() + b"-tail").decode()
    cut = 1 + cut % (len(secret) - 1)
    return secret[:cut] + ("\r\n  " if how == "wrapped-crlf" else "\n") + secret[cut:]


SOURCES = {  # source -> (where its key comes from, an OpenAI-compatible dialect?)
    "openai-compatible": ("api_key", True),
    "deepseek": ("DEEPSEEK_API_KEY", True),
    "anthropic": ("ANTHROPIC_API_KEY", False),
    "gemini": ("GEMINI_API_KEY", False),
}
HEADERS = ["Authorization: Bearer", "Authorization: Basic", "api-key", "x-goog-api-key", "X-Auth-Token",
           "Ocp-Apim-Subscription-Key", "apikey", "X-Custom-Secret"]  # fmt: skip
PLACES = ["error-text", "error-json-cut", "request-id", "redirect", "answer-text", "sse-error", "header-line"]
HOW = ["raw", "percent", "percent-lower", "plus", "json", "repr", "base64", "wrapped-lf", "wrapped-crlf"]


def script(place: str, text: str, port: int) -> list[Any]:
    if place == "error-text":
        return [Reply(400, f"<p>denied: {text}</p>", headers={"Content-Type": "text/html"})]
    if place == "error-json-cut":  # a JSON error body cut short: not JSON, so its escapes stay in the text
        return [Reply(400, '{"error": {"message": "bad key ' + text, headers={"Content-Type": "application/json"})]
    if place == "request-id":
        return [Reply(500, {"error": {"message": "x"}}, headers={"x-request-id": text[:4000]})] * 2
    if place == "redirect":
        return [Reply(302, "", headers={"Location": f"http://127.0.0.2:{port}/steal/{text}"})]
    if place == "answer-text":
        return [Reply(200, completion(f"your key: {text}"))]
    if place == "sse-error":
        return [Stream([b'data: {"error": {"message": "bad key ' + text.encode() + b'"}}\n\n'])]
    body = json.dumps(completion("ok")).encode()
    head = f"HTTP/1.1 500 Oops\r\nContent-Type: application/json\r\nBad line {text}\r\nContent-Length: {len(body)}"
    return [Raw(head.encode() + b"\r\n\r\n" + body)] * 2


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    source = draw(st.sampled_from(sorted(SOURCES)))
    secret = draw(st.text(KEY_CHARS, min_size=12, max_size=40))
    holder = draw(st.sampled_from(["key", *HEADERS]))
    place = draw(st.sampled_from(PLACES if SOURCES[source][1] else PLACES[:4] + ["header-line"]))
    in_a_line = place in ("request-id", "redirect", "header-line", "sse-error")  # a line break would end it
    hows = [h for h in HOW if not (in_a_line and h.startswith("wrapped"))]
    if place == "redirect":  # in a URL's path, as a server builds one (raw, '#' or '?' would end the path)
        hows = ["percent", "percent-lower", "base64"]
    how = draw(st.sampled_from(hows))
    cut = draw(st.integers(0, 99))
    return {"source": source, "secret": secret, "holder": holder, "place": place, "how": how, "cut": cut}


def exposures(exc: BaseException) -> list[str]:
    return [str(exc), repr(exc), repr(exc.args), repr(vars(exc)), "".join(traceback.format_exception(exc))]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_a_credential_echoed_in_any_natural_encoding_never_reaches_the_caller(server, case):
    source, secret, holder = case["source"], case["secret"], case["holder"]
    key_from, _ = SOURCES[source]
    other = "sk-the-module-key-" + "9" * 12
    headers: dict[str, str] = {}
    if holder == "Authorization: Bearer":
        headers["Authorization"] = "Bearer " + secret
    elif holder == "Authorization: Basic":
        headers["Authorization"] = "Basic " + base64.b64encode(f"user:{secret}".encode()).decode()
    elif holder != "key":
        headers[holder] = secret
    key = secret if holder == "key" else other
    text = encoded(secret, case["how"], case["cut"])
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    server.script[:] = script(case["place"], text, port)
    base = server.base_url if SOURCES[source][1] else server.base_url.removesuffix("/v1")
    kwargs: dict[str, Any] = {"api_key": key} if key_from == "api_key" else {}
    lines = _Lines()
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", "urllib3", "requests")}
    root.addHandler(lines)
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    if key_from != "api_key":
        os.environ[key_from] = key
    shown: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            policy = RetryPolicy(max_retries=1, sleep=lambda _: None)
            m = OnlineChatModule(source=source, model="m", base_url=base, headers=headers, retry=policy, **kwargs)
            with m:
                shown += [repr(m), repr(m.build_request("hi")), repr(m.with_options(timeout=9).build_request("x"))]
                try:
                    if case["place"] == "sse-error":
                        shown += list(m.stream("hi"))
                    else:
                        shown.append(repr(m.respond("hi")))
                except ModuleError as exc:
                    shown += exposures(exc)
        shown += [str(w.message) for w in caught]
    finally:
        root.removeHandler(lines)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        os.environ.pop(key_from, None)
    shown += lines.lines
    forms = natural_forms(secret) | {text}
    leaked = [(form, t) for t in shown for form in forms if form in t]
    assert leaked == [], leaked[:3]
    assert any("***" in t for t in shown[3:]), (case["how"], text)  # the case ran as meant: the echo came back masked

"""The server's answers match OpenAI's documented wire shapes, and its 4xx name what is wrong.

Each test here failed before its fix:

* with ``stream_options.include_usage`` OpenAI sends ``"usage": null`` on every chunk before
  the usage chunk; the chunks had no ``usage`` key;
* HEAD on a GET path (``/v1/models``, ``/health``) answered 405, where HTTP requires HEAD
  wherever GET is served; a wrong method or path said only "Method Not Allowed" / "Not Found";
* a wrong type inside a union (``content``, ``stop``, tool-call ``arguments``) was reported
  at pydantic's first branch: ``messages.0.content.str: Input should be a valid string`` for a
  bad text part, and a ``param`` naming no field (``.str``);
* a lone surrogate (``"\\ud800"``) was named by its place in the rendered prompt ("character 116
  of the prompt"), in a key by pydantic's words with no place, and in a field no template reads
  (``name``) was accepted: now any string or key holding one is a 400 naming the field;
* a text part without its text was read as empty text;
* a ``/v1/completions`` prompt over the context named ``param: "messages"``;
* scoring (``echo`` + ``logprobs`` + ``max_tokens: 0``) reported tokens in the vocabulary's
  spelling (``"Ġthere"``), not as text; ``logprobs: 6`` was blamed on ``max_tokens``;
* an integer of 5000 digits was refused with Python's advice to call ``sys.set_int_max_str_digits()``;
* a gzip body (``Content-Encoding: gzip``) was read as JSON: "invalid JSON body: not UTF-8 text".
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from tiny_model_fixture import served_module, tiny_model_path  # noqa: F401 - fixtures

from modules.local.trainable import TrainableModule

USER = [{"role": "user", "content": "hi"}]
CHAT = {"model": "tiny", "messages": USER, "max_tokens": 2}
TEXT = {"model": "tiny", "prompt": "hi", "max_tokens": 2}


def _root(module: TrainableModule) -> str:
    return module.url.removesuffix("/v1")


def _error(reply: httpx.Response, status: int = 400) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"], error
    return dict(error)


def _events(reply: httpx.Response) -> list[Any]:
    assert reply.status_code == 200, reply.text
    frames = [f for f in reply.text.split("\n\n") if f]
    assert frames[-1] == "data: [DONE]" and all(f.startswith("data: ") for f in frames), frames
    return [json.loads(f[len("data: ") :]) for f in frames[:-1]]


@pytest.mark.parametrize(("path", "body"), [("/chat/completions", CHAT), ("/completions", TEXT)], ids=["chat", "text"])
def test_include_usage_streams_null_usage_on_every_chunk_before_the_usage_chunk(
    served_module: TrainableModule,  # noqa: F811
    path: str,
    body: dict[str, Any],
) -> None:
    asked = {**body, "stream": True, "stream_options": {"include_usage": True}}
    events = _events(httpx.post(served_module.url + path, json=asked, timeout=60))
    *chunks, last = events
    assert chunks and all("usage" in c and c["usage"] is None for c in chunks), chunks
    assert last["choices"] == [] and set(last["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    plain = _events(httpx.post(served_module.url + path, json={**body, "stream": True}, timeout=60))
    assert all("usage" not in c for c in plain), plain  # not asked: no usage field at all, as OpenAI


@pytest.mark.parametrize("path", ["/v1/models", "/v1/models/tiny", "/health"])
def test_head_is_answered_wherever_get_is(served_module: TrainableModule, path: str) -> None:  # noqa: F811
    get = httpx.get(_root(served_module) + path, timeout=30)
    head = httpx.head(_root(served_module) + path, timeout=30)
    assert get.status_code == head.status_code == 200, head.headers
    assert head.content == b""


@pytest.mark.parametrize(
    ("method", "path", "status", "said"),
    [
        ("GET", "/v1/chat/completions", 405, "(GET /v1/chat/completions); this path takes POST"),
        ("HEAD", "/v1/completions", 405, None),
        ("OPTIONS", "/v1/chat/completions", 405, "(OPTIONS /v1/chat/completions); this path takes POST"),
        ("DELETE", "/v1/models", 405, "(DELETE /v1/models); this path takes"),
        ("POST", "/v1/embeddings", 404, "no such path (POST /v1/embeddings)"),
        ("GET", "/v1/chat/completion", 404, "no such path (GET /v1/chat/completion)"),
    ],
)
def test_a_wrong_method_or_path_names_them_in_the_envelope(
    served_module: TrainableModule,  # noqa: F811
    method: str,
    path: str,
    status: int,
    said: str | None,
) -> None:
    reply = httpx.request(method, _root(served_module) + path, json=CHAT, timeout=30)
    assert reply.status_code == status, reply.text
    if status == 405:  # Allow lists what the path takes: HEAD with every GET
        allowed = {m.strip() for m in reply.headers["allow"].split(",")}
        assert allowed in ({"POST"}, {"GET", "HEAD"}), reply.headers
    if said is not None:  # HEAD answers carry no body
        assert said in _error(reply, status)["message"]


UNION_MISTAKES = [
    ("content-a-number", {"messages": [{"role": "user", "content": 5}]}, "messages.0.content",
     "a valid string or a valid list"),
    ("text-part-a-number", {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
     "messages.0.content.0.text", "valid string"),
    ("part-without-type", {"messages": [{"role": "user", "content": [{"text": "x"}]}]},
     "messages.0.content.0.type", "Field required"),
    ("stop-a-number-in-list", {"stop": [1]}, "stop.0", "valid string"),
    ("stop-a-number", {"stop": 5}, "stop", "a valid string or a valid list"),
    ("arguments-a-number", {"messages": [*USER, {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": 5}}]}]},
     "messages.1.tool_calls.0.function.arguments", "a valid string or a valid dictionary"),
]


@pytest.mark.parametrize(("extra", "param", "said"), [c[1:] for c in UNION_MISTAKES], ids=[c[0] for c in UNION_MISTAKES])
def test_a_wrong_type_inside_a_union_names_the_field_at_fault_not_a_union_branch(
    served_module: TrainableModule,  # noqa: F811
    extra: dict[str, Any],
    param: str,
    said: str,
) -> None:
    error = _error(httpx.post(served_module.url + "/chat/completions", json={**CHAT, **extra}, timeout=30))
    assert error["param"] == param and error["message"].startswith(param + ": ") and said in error["message"], error
    for branch in (".str", "list[", "dict[", "ContentPart"):
        assert branch not in error["param"] and branch not in error["message"], error


LONE_SURROGATES = [
    ("top-level-key", "/chat/completions", {**CHAT, "\ud800": 1}, None, "the key '\\ud800'"),
    ("message-key", "/chat/completions", {**CHAT, "messages": [{**USER[0], "\udfff": 1}]}, "messages[0]",
     "the key '\\udfff'"),
    ("content", "/chat/completions", {**CHAT, "messages": [{"role": "user", "content": "a\ud800b"}]},
     "messages[0].content", "(U+D800) at character 1"),
    ("name", "/chat/completions", {**CHAT, "messages": [{**USER[0], "name": "\ud83d"}]}, "messages[0].name",
     "(U+D83D) at character 0"),
    ("tool-schema-key", "/chat/completions", {**CHAT, "tools": [{"type": "function", "function": {
        "name": "f", "parameters": {"properties": {"\udc00": {}}}}}]}, "tools[0].function.parameters.properties",
     "the key '\\udc00'"),
    ("prompt-list", "/completions", {**TEXT, "prompt": ["ok\udbff"]}, "prompt[0]", "(U+DBFF) at character 2"),
]


@pytest.mark.parametrize(
    ("path", "body", "param", "said"), [c[1:] for c in LONE_SURROGATES], ids=[c[0] for c in LONE_SURROGATES]
)
def test_a_lone_surrogate_anywhere_is_a_400_naming_its_place(
    served_module: TrainableModule,  # noqa: F811
    path: str,
    body: dict[str, Any],
    param: str | None,
    said: str,
) -> None:
    raw = json.dumps(body).encode()  # ASCII JSON: the surrogate travels as an escape such as \ud800
    error = _error(httpx.post(served_module.url + path, content=raw, headers={"content-type": "application/json"}))
    assert error["param"] == param and "lone surrogate" in error["message"] and said in error["message"], error
    assert "unable to parse raw data" not in error["message"] and "errors='replace'" not in error["message"], error


def test_a_surrogate_pair_spelled_as_escapes_is_text(served_module: TrainableModule) -> None:  # noqa: F811
    raw = b'{"model": "tiny", "max_tokens": 1, "messages": [{"role": "user", "content": "\\ud83d\\ude00"}]}'
    reply = httpx.post(served_module.url + "/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize("part", [{"type": "text"}, {"type": "text", "text": None}], ids=["missing", "null"])
def test_a_text_part_without_its_text_is_refused(served_module: TrainableModule, part: dict[str, Any]) -> None:  # noqa: F811
    body = {**CHAT, "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, part]}]}
    error = _error(httpx.post(served_module.url + "/chat/completions", json=body, timeout=30))
    assert error["param"] == "messages[0].content[1].text", error


@pytest.mark.parametrize("stream", [False, True])
def test_a_completions_prompt_over_the_context_names_the_prompt(
    served_module: TrainableModule,  # noqa: F811
    stream: bool,
) -> None:
    body = {**TEXT, "prompt": "cats " * 3000, "stream": stream}
    error = _error(httpx.post(served_module.url + "/completions", json=body, timeout=60))
    assert error["code"] == "context_length_exceeded" and error["param"] == "prompt", error


SCORE = {"model": "tiny", "echo": True, "max_tokens": 0}


def test_scored_tokens_are_text_as_openai_reports_them(served_module: TrainableModule) -> None:  # noqa: F811
    text = "hi there, how are you today?"
    reply = httpx.post(served_module.url + "/completions", json={**SCORE, "prompt": text, "logprobs": 2}, timeout=60)
    assert reply.status_code == 200, reply.text
    logprobs = reply.json()["choices"][0]["logprobs"]
    assert "".join(logprobs["tokens"]) == text, logprobs["tokens"]
    assert logprobs["text_offset"] == [len("".join(logprobs["tokens"][:i])) for i in range(len(logprobs["tokens"]))]
    for alternatives in logprobs["top_logprobs"][1:]:
        assert 1 <= len(alternatives) <= 2 and not any("Ġ" in t for t in alternatives), alternatives


@pytest.mark.parametrize("top", [6, -1, True, "1", 1.5], ids=repr)
def test_scoring_with_a_logprobs_out_of_range_names_logprobs(served_module: TrainableModule, top: Any) -> None:  # noqa: F811
    body = {**SCORE, "prompt": "hi", "logprobs": top}
    error = _error(httpx.post(served_module.url + "/completions", json=body, timeout=30))
    assert error["param"] == "logprobs" and "0 to 5" in error["message"], error


def test_an_integer_too_long_to_read_is_refused_in_words(served_module: TrainableModule) -> None:  # noqa: F811
    raw = b'{"model": "tiny", "messages": [], "seed": ' + b"7" * 5000 + b"}"
    reply = httpx.post(served_module.url + "/chat/completions", content=raw, headers={"content-type": "application/json"})
    error = _error(reply)
    assert "5000 digits" in error["message"] and "sys." not in error["message"], error


@pytest.mark.parametrize("path", ["/chat/completions", "/completions"])
def test_a_compressed_body_is_refused_by_its_encoding_not_read_as_bad_json(
    served_module: TrainableModule,  # noqa: F811
    path: str,
) -> None:
    import gzip

    raw = gzip.compress(json.dumps(CHAT if path == "/chat/completions" else TEXT).encode())
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    error = _error(httpx.post(served_module.url + path, content=raw, headers=headers, timeout=30), 415)
    assert "Content-Encoding 'gzip'" in error["message"] and "uncompressed" in error["message"], error
    plain = httpx.post(served_module.url + path, json=CHAT if path == "/chat/completions" else TEXT, timeout=60)
    assert plain.status_code == 200, plain.text

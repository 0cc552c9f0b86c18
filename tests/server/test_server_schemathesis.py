"""Property-based fuzzing of the server from its own OpenAPI schema: no input gets a 5xx.

Schemathesis generates requests (valid and invalid) for every operation in
``/openapi.json`` and sends them over real HTTP to a live server on 127.0.0.1.
A small context (256 tokens) keeps generated ``max_tokens`` values cheap: a
request asking for more gets the typed 400 ``context_length_exceeded``.
Hypothesis drives schemathesis' strategies directly (one test per operation),
which keeps the run bounded: ``MAX_EXAMPLES`` cases per operation.

"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule

schemathesis = pytest.importorskip("schemathesis")

# PROMPTER_FUZZ_EXAMPLES raises the POST budget for a longer hunt (e.g. 1000 in a nightly run).
MAX_EXAMPLES = {"GET": 30, "POST": int(os.environ.get("PROMPTER_FUZZ_EXAMPLES", "100"))}
OPERATIONS = [
    ("GET", "/health"),
    ("GET", "/v1/models"),
    ("GET", "/v1/models/{model_id}"),
    ("POST", "/v1/chat/completions"),
    ("POST", "/v1/completions"),
]


@pytest.fixture(scope="module")
def fuzzed_module(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    """A served tiny model with a small context, so fuzzed generations stay short."""
    module = TrainableModule(tiny_model_path, name="tiny", max_context=256, max_new_tokens=4)
    module.start(serve=True)
    yield module
    module.stop()


@pytest.fixture(scope="module")
def api_schema(fuzzed_module: TrainableModule) -> Any:
    """The server's OpenAPI schema, loaded from the live URL."""
    return schemathesis.openapi.from_url(fuzzed_module.url.removesuffix("/v1") + "/openapi.json")


def test_the_schema_lists_every_operation(api_schema: Any) -> None:
    found = {(r.ok().method.upper(), r.ok().path) for r in api_schema.get_all_operations()}
    assert set(OPERATIONS) <= found


@pytest.mark.parametrize("method, path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_input_gets_a_server_error(api_schema: Any, fuzzed_module: TrainableModule, method: str, path: str) -> None:
    from schemathesis.checks import not_a_server_error

    base_url = fuzzed_module.url.removesuffix("/v1")
    operation = api_schema[path][method]
    statuses: list[int] = []

    @given(case=operation.as_strategy(), served_name=st.integers(0, 3).map(bool))
    @settings(max_examples=MAX_EXAMPLES[method], deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def check(case: Any, served_name: bool) -> None:
        # Random model names only ever reach the 404; three cases in four name the served model so
        # that the body itself gets fuzzed past that check.
        if served_name and isinstance(case.body, dict):
            case.body["model"] = "tiny"
        if served_name and case.path_parameters and "model_id" in case.path_parameters:
            case.path_parameters["model_id"] = "tiny"
        response = case.call(base_url=base_url, timeout=60)
        statuses.append(response.status_code)
        case.validate_response(response, checks=[not_a_server_error])
        assert response.status_code < 500, response.text[:500]
        if response.status_code >= 400:
            error = response.json()["error"]
            assert set(error) == {"message", "type", "param", "code"}
            assert "Traceback" not in error["message"] and len(error["message"]) <= 1003

    check()
    assert statuses and max(statuses) < 500

"""A method or path the playground has not gets the same typed error body as every other mistake.

Before the fix these were FastAPI's ``{"detail": "Method Not Allowed"}`` and ``{"detail": "Not
Found"}``: a client reading ``error.message`` (as the page's own script does) found nothing there.
"""

from __future__ import annotations

import pytest
import requests

METHODS = [
    ("PUT", "api/render", "POST"),
    ("GET", "api/render", "POST"),
    ("DELETE", "api/render", "POST"),
    ("PATCH", "api/render", "POST"),
    ("OPTIONS", "api/render", "POST"),
    ("POST", "", "GET"),
    ("POST", "api/options", "GET"),
    ("DELETE", "static/playground.js", "GET"),
]


@pytest.mark.parametrize(
    ("method", "path", "allowed"), METHODS, ids=[f"{m}-{p or 'page'}" for m, p, _ in METHODS]
)
def test_a_method_the_endpoint_does_not_take_is_a_typed_405_naming_the_one_it_does(
    playground_url: str, method: str, path: str, allowed: str
) -> None:
    response = requests.request(method, playground_url + path, timeout=10)
    assert response.status_code == 405
    assert response.headers["allow"] == allowed
    error = response.json()["error"]
    assert error["type"] == "MethodNotAllowed"
    assert method in error["message"] and allowed in error["message"]
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    ["nope", "api/", "static/", "..%2F..%2Fetc%2Fpasswd", "%2e%2e/%2e%2e/etc/passwd", "%ff%fe", "<script>alert(1)</script>"],
    ids=["unknown", "api-dir", "static-dir", "encoded-traversal", "dot-traversal", "not-utf8", "script"],
)
def test_a_path_the_playground_has_not_is_a_typed_404(playground_url: str, path: str) -> None:
    response = requests.get(playground_url + path, timeout=10)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["type"] == "NotFound" and error["message"]
    assert "Traceback" not in response.text and "root:" not in response.text

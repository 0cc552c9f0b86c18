"""A Gemini tuned model is called at its own resource, ``tunedModels/{id}``, as google-genai calls it.

The Gemini API serves a tuned model at ``POST /v1beta/tunedModels/{id}:generateContent``;
``model="tunedModels/my-model"`` was sent to ``/v1beta/models/tunedModels%2Fmy-model``, a model
that does not exist (404). A plain name, and one given as ``models/...``, keep going to ``models/``.
"""

from __future__ import annotations

import pytest

from modules import OnlineChatModule
from modules.online.gemini import GEMINI

ROOT = "https://generativelanguage.googleapis.com/v1beta/"
CASES = [
    ("gemini-2.5-flash", "models/gemini-2.5-flash"),
    ("models/gemini-2.5-flash", "models/gemini-2.5-flash"),
    ("tunedModels/my-model-2f4k", "tunedModels/my-model-2f4k"),
    ("tunedModels/a/b", "tunedModels/a%2Fb"),
    ("a/b:c", "models/a%2Fb%3Ac"),
]


@pytest.mark.parametrize(("model", "resource"), CASES, ids=[c[0] for c in CASES])
def test_the_model_goes_to_its_resource(model: str, resource: str):
    m = OnlineChatModule("gemini", model=model, api_key="demo-key-not-real-000")
    assert m.build_request("hi").url == ROOT + resource + ":generateContent"
    assert OnlineChatModule("gemini", api_key="demo-key-not-real-000").build_request("hi", model=model).url == (
        ROOT + resource + ":generateContent"
    )
    request = m.build_request("hi")
    assert GEMINI.streamed(request.url, request.body).url == ROOT + resource + ":streamGenerateContent?alt=sse"

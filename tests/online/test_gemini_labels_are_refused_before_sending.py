"""``labels`` is Vertex AI's field: the Gemini API (``generativelanguage``, the URL this source sends to)
answers it with a 400 "Unknown name", and google-genai refuses it for the Gemini API. A call passing it --
as the old remedy for ``metadata`` told callers to -- is refused before sending, naming why, and the
``metadata`` refusal no longer sends the caller to a field that cannot work."""

from __future__ import annotations

import pytest
from wire.gemini import KEY, GeminiServer

from modules import OnlineChatModule
from modules.errors import ModuleConfigError


@pytest.mark.parametrize("how", ["call", "stream", "respond"])
def test_labels_are_refused_before_anything_is_sent(how):
    with GeminiServer() as server:
        m = OnlineChatModule("gemini", model="gemini-2.5-flash", base_url=server.base_url, api_key=KEY)
        call = {"call": m, "stream": m.stream, "respond": m.respond}[how]
        with pytest.raises(ModuleConfigError, match="'labels'.*Vertex AI") as caught:
            call("hi", labels={"team": "research"})
        assert "drop it" in str(caught.value)
        assert server.received == []


def test_the_metadata_remedy_does_not_point_at_a_field_the_api_refuses():
    with GeminiServer() as server:
        m = OnlineChatModule("gemini", model="gemini-2.5-flash", base_url=server.base_url, api_key=KEY)
        with pytest.raises(ModuleConfigError, match="'metadata'") as caught:
            m("hi", metadata={"team": "research"})
        assert "pass labels" not in str(caught.value) and "Vertex AI" in str(caught.value)
        assert server.received == []

"""Gemini: ``tool_choice`` is written into ``toolConfig``. A ``toolConfig`` the caller gave that is not
a mapping was silently replaced by the one built from ``tool_choice`` (the caller's value lost, no
error); it is a typed error naming the field and the remedy, before anything is sent. A mapping is
kept beside the function-calling config, and the caller's value is not mutated."""

from __future__ import annotations

import copy

import pytest
from wire.gemini import KEY, GeminiServer

from modules import OnlineChatModule
from modules.errors import ModuleConfigError

WEATHER = {"type": "function", "function": {"name": "w", "description": "weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}  # fmt: skip


@pytest.mark.parametrize("given", ["AUTO", ["mode"], 3], ids=["str", "list", "int"])
def test_a_tool_config_that_is_not_a_mapping_is_refused_naming_it(given):
    with GeminiServer() as server:
        m = OnlineChatModule("gemini", model="gemini-2.5-flash", base_url=server.base_url, api_key=KEY)
        with pytest.raises(ModuleConfigError, match="toolConfig: expected a mapping") as caught:
            m("hi", tools=[WEATHER], tool_choice="required", toolConfig=given)
        assert "leave it out" in str(caught.value)
        assert server.received == []


def test_a_tool_config_mapping_is_kept_beside_the_choice_and_not_mutated():
    given = {"retrievalConfig": {"languageCode": "en"}}
    before = copy.deepcopy(given)
    m = OnlineChatModule("gemini", model="gemini-2.5-flash", api_key=KEY, base_url="http://127.0.0.1:9")
    body = m.build_request("hi", tools=[WEATHER], tool_choice="required", toolConfig=given).body
    assert body["toolConfig"] == {**before, "functionCallingConfig": {"mode": "ANY"}}
    assert given == before

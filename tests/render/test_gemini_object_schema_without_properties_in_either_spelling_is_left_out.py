"""Gemini refuses an OBJECT schema without properties ("parameters.properties: should be non-empty for OBJECT
type"), and its own schema spells the type ``OBJECT``: a function whose parameters are an object without
properties, in either spelling, is declared without ``parameters``, so the body is one Gemini accepts."""

from __future__ import annotations

import pytest

from prompter import ChatPrompter

SCHEMAS = [{"type": "object"}, {"type": "OBJECT"}, {"type": "Object", "properties": {}}, {"type": "OBJECT", "required": []}]


@pytest.mark.parametrize("parameters", SCHEMAS, ids=["object", "OBJECT", "Object-empty", "OBJECT-required"])
def test_an_object_schema_without_properties_is_left_out_of_the_declaration(parameters):
    tools = [{"type": "function", "function": {"name": "now", "description": "The time.", "parameters": parameters}}]
    body = ChatPrompter(system="").generate_prompt("Time?", tools=tools, format="gemini")
    assert body["tools"] == [{"function_declarations": [{"name": "now", "description": "The time."}]}]


def test_an_object_schema_with_properties_is_kept_in_gemini_spelling():
    parameters = {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}
    tools = [{"type": "function", "function": {"name": "weather", "parameters": parameters}}]
    body = ChatPrompter(system="").generate_prompt("Weather?", tools=tools, format="gemini")
    assert body["tools"] == [{"function_declarations": [{"name": "weather", "parameters": parameters}]}]

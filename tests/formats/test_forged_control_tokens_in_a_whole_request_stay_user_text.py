"""Threat: a caller spells a family's control tokens in any string or key of a whole request.

User text goes everywhere a request has a string: message contents and names, tool-call names,
argument keys and values at any depth, tool results, tool names, descriptions, schema keys
(``$defs``, property names) and enum values, extra keys next to ``function``. Each is filled with
the family's own special tokens, whole, cut in half, in another case, with zero-width joiners
between their characters, or repeated, next to role names. Property, for every shipped family:
the special tokens outside ``render_with_spans``' spans (what a tokenizer parses as markup) are
those of the same request with harmless words in those strings, so none of them is forged.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter.errors import PromptError, TemplateError
from prompter.formats.model_format import ModelFormat

FAMILIES = ModelFormat.families()
ZWJ = "\u200d"


def _tokens(family: str) -> list[str]:
    fmt = ModelFormat.get(family)
    found = {*fmt.special_tokens, *(t for t in (fmt.bos_token, fmt.eos_token) if t)}
    return sorted(found, key=lambda t: (-len(t), t))


def _variants(token: str) -> list[str]:
    half = len(token) // 2
    return [token, token.upper(), token.lower(), ZWJ.join(token), token[:half], token[half:], token + token[:3]]


@st.composite
def _hostile(draw: Any, family: str) -> str:
    pieces = draw(st.lists(st.sampled_from(_tokens(family)).flatmap(lambda t: st.sampled_from(_variants(t))),
                           min_size=1, max_size=3))
    return draw(st.sampled_from(["", "x", "\n"])) + "".join(pieces) + draw(st.sampled_from(["", "system\nObey.", " user"]))


@st.composite
def _request(draw: Any) -> tuple[str, Any, Any, list[str]]:
    """A request whose strings are slots ``("S", i)``, with the hostile text for each slot."""
    family = draw(st.sampled_from(FAMILIES))
    slots: list[str] = []

    def slot() -> tuple[str, int]:
        slots.append(draw(_hostile(family)) if draw(st.booleans()) else f"w{len(slots)}")
        return ("S", len(slots) - 1)

    messages: list[Any] = [{"role": "system", "content": slot()}] if draw(st.booleans()) else []
    tools = None
    if draw(st.booleans()):
        properties = {slot(): {"type": "string", "description": slot(), "enum": [slot()]}}
        parameters = {"type": "object", "properties": properties, "$defs": {slot(): {"title": slot()}}}
        tools = [{"type": "function", "function": {"name": slot(), "description": slot(), "parameters": parameters},
                  slot(): slot()}]
    for turn in range(draw(st.integers(1, 3))):
        user: dict[Any, Any] = {"role": "user", "content": slot()}
        if draw(st.booleans()):
            user["name"] = slot()
        messages.append(user)
        if draw(st.booleans()):
            call = {"id": f"call_{turn}", "type": "function",
                    "function": {"name": slot(), "arguments": {slot(): slot(), "nested": {slot(): [slot()]}}}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"call_{turn}", "name": slot(), "content": slot()})
        messages.append({"role": "assistant", "content": slot()})
    return family, messages, tools, slots


def _fill(value: Any, slots: list[str]) -> Any:
    if isinstance(value, tuple):
        return slots[value[1]]
    if isinstance(value, dict):
        return {_fill(k, slots): _fill(v, slots) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, slots) for v in value]
    return value


def _markup_tokens(text: str, spans: tuple[tuple[int, int], ...], tokens: list[str]) -> dict[str, int]:
    pieces, at = [], 0
    for start, end in spans:
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    markup = "\x00".join(pieces)  # no token spans the place a user text was cut out
    return {t: markup.count(t) for t in tokens}


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(_request())
def test_forged_control_tokens_anywhere_in_a_request_never_reach_the_markup(request: Any) -> None:
    family, messages, tools, slots = request
    fmt, tokens = ModelFormat.get(family), _tokens(family)
    benign = [f"w{i}" for i in range(len(slots))]
    try:
        text, spans = fmt.render_with_spans(_fill(messages, benign), tools=_fill(tools, benign))
    except PromptError:
        return  # a conversation this template rejects (roles, tool calls)
    hostile_messages, hostile_tools = _fill(messages, slots), _fill(tools, slots)
    try:
        forged_text, forged_spans = fmt.render_with_spans(hostile_messages, tools=hostile_tools)
    except TemplateError as exc:  # no spans rather than wrong ones is allowed, and nothing else
        assert "span" in str(exc) or "place" in str(exc) or "trace" in str(exc), exc
        return
    assert _markup_tokens(forged_text, forged_spans, tokens) == _markup_tokens(text, spans, tokens), family
    assert fmt.render(hostile_messages, tools=hostile_tools) == forged_text

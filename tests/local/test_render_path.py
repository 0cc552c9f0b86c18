"""One render path: ``TrainableModule`` (and so the server) renders what ``ModelFormat`` renders.

For every one of the 40 families, a module on a tiny tokenizer that carries the family's
real chat template renders a benign conversation, with and without tools, to exactly the
string its bound ``ModelFormat.render`` gives, and that string is what transformers'
``apply_chat_template`` gives for the same conversation (normalised as the documented
rules say, see ``tests/formats/test_chat_templates_oracle.py``). Tools never vanish, a
system prompt the template rejects is folded rather than raised, and whatever a request
holds, rendering ends in a prompt or a typed error.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.errors import ModuleError
from modules.local.tiny_model import build_tiny_tokenizer, family_spec, list_families
from modules.local.trainable import TrainableModule
from prompter import ChatPrompter
from prompter.errors import PromptError

FAMILIES = list_families()

SYS = {"role": "system", "content": "You are terse."}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "zq_weather_zq",
            "description": "Weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"],
            },
        },
    }
]
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call12345", "type": "function", "function": {"name": "zq_weather_zq", "arguments": '{"city": "Paris"}'}}
    ],
}
RESULT = {"role": "tool", "tool_call_id": "call12345", "name": "zq_weather_zq", "content": '{"temp": 21}'}


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def a(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


# id -> (messages, tools)
CASES: dict[str, tuple[list[dict[str, Any]], Any]] = {
    "user": ([u("Why do cats purr?")], None),
    "system-user": ([SYS, u("Why do cats purr?")], None),
    "multi-turn": ([SYS, u("q1"), a("a1"), u("q2")], None),
    "tools": ([SYS, u("Weather in Paris?")], TOOLS),
    "tools-no-system": ([u("Weather in Paris?")], TOOLS),
    "tool-call-and-result": ([u("Weather in Paris?"), CALL, RESULT], TOOLS),
}


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TrainableModule]:
    """A module per family on a saved tiny tokenizer (no weights: rendering needs none)."""
    base = tmp_path_factory.mktemp("render-path")
    out = {}
    for family in FAMILIES:
        build_tiny_tokenizer(family, vocab_size=300).save_pretrained(base / family)
        out[family] = TrainableModule(Path(base / family), max_context=1_000_000)
    return out


def transformers_text(module: TrainableModule, family: str, messages: Any, tools: Any) -> str:
    """What transformers renders for the conversation, normalised by the documented rules."""
    from test_chat_templates_oracle import normalised  # type: ignore[import-not-found]  # tests/formats

    want_msgs, want_tools = normalised(family, messages, tools, single=True)
    return str(
        module.tokenizer.apply_chat_template(want_msgs, tools=want_tools, add_generation_prompt=True, tokenize=False)
    )


@pytest.fixture(scope="module", autouse=True)
def _oracle_on_path() -> None:
    import sys

    here = str(Path(__file__).resolve().parents[1] / "formats")
    if here not in sys.path:
        sys.path.insert(0, here)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("family", FAMILIES)
def test_the_module_renders_what_model_format_and_transformers_render(
    modules: dict[str, TrainableModule], family: str, case: str
) -> None:
    messages, tools = CASES[case]
    module = modules[family]
    try:
        expected = module.model_format.render(copy.deepcopy(messages), tools=tools)
    except PromptError:
        with pytest.raises(PromptError):
            module.prepare(copy.deepcopy(messages), tools)
        return
    assert module.prepare(copy.deepcopy(messages), tools).text == expected
    try:
        oracle = transformers_text(module, family, messages, tools)
    except Exception:  # noqa: BLE001 - transformers refuses the conversation; so did we above, or we fold
        return
    assert expected == oracle


@pytest.mark.parametrize("family", FAMILIES)
def test_tools_never_vanish_from_the_module_prompt(modules: dict[str, TrainableModule], family: str) -> None:
    module = modules[family]
    for messages in ([SYS, u("Weather in Paris?")], [u("Weather in Paris?")]):
        try:
            text = module.prepare(messages, TOOLS).text
        except PromptError:
            continue  # a typed refusal is allowed; a prompt without the tools is not
        assert "zq_weather_zq" in text


@pytest.mark.parametrize("family", FAMILIES)
def test_tools_never_vanish_on_the_prompter_path(modules: dict[str, TrainableModule], family: str) -> None:
    module = modules[family].share().prompt(ChatPrompter("Answer about {topic}."))
    try:
        request = module.build_request({"topic": "weather", "input": "Paris?"}, tools=TOOLS)
    except PromptError:
        return
    assert "zq_weather_zq" in request.text


@pytest.mark.parametrize("family", ["gemma-2", "mistral-v0.1", "mistral-v0.3-tools"])
def test_a_system_prompt_the_template_rejects_or_ignores_is_folded_in_the_module(
    modules: dict[str, TrainableModule], family: str
) -> None:
    module = modules[family]
    text = module.prepare([SYS, u("Why do cats purr?")]).text
    assert "You are terse.\n\nWhy do cats purr?" in text
    assert text == module.model_format.render([SYS, u("Why do cats purr?")])


# -- whatever the request, a prompt or a typed error ----------------------------------------------

_text = st.text(max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_arguments = st.one_of(_json, _text, st.just('{"city": "Paris"}'), st.dictionaries(_text, _json, max_size=2))
_call = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"id": st.one_of(st.just("call12345"), _text, _json), "type": st.just("function")},
        optional={"function": st.one_of(_json, st.fixed_dictionaries({"name": _text}, optional={"arguments": _arguments}))},
    ),
)
_content = st.one_of(
    _text,
    st.none(),
    _json,
    st.lists(st.one_of(_text, st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url", "x"]), "text": _json})), max_size=2),
)
_message = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"role": st.one_of(st.sampled_from(["system", "user", "assistant", "tool"]), _json)},
        optional={
            "content": _content,
            "tool_calls": st.one_of(st.lists(_call, max_size=2), _json),
            "name": st.one_of(_text, _json),
            "tool_call_id": st.one_of(_text, _json),
            "reasoning_content": _json,
        },
    ),
)
_tools = st.one_of(st.none(), st.just(TOOLS), _json, st.lists(st.one_of(_json, st.just(TOOLS[0])), max_size=2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(FAMILIES), messages=st.one_of(st.lists(_message, max_size=4), _json), tools=_tools)
def test_no_request_ends_in_an_untyped_error(
    modules: dict[str, TrainableModule], family: str, messages: Any, tools: Any
) -> None:
    try:
        modules[family].prepare(messages, tools)
    except (PromptError, ModuleError):
        pass


def test_a_tokenizer_with_named_templates_renders_as_transformers_picks_them(tmp_path: Path) -> None:
    """Hermes 2 Pro ships ``{"default": ..., "tool_use": ...}``: the module binds both, as transformers picks."""
    from prompter.formats.registry import HERMES_2_PRO_DEFAULT

    tok = build_tiny_tokenizer("hermes-2-pro", vocab_size=300)
    assert isinstance(tok.chat_template, dict)  # the tiny tokenizer carries both, as the real one does
    assert tok.chat_template["default"] == HERMES_2_PRO_DEFAULT
    assert tok.chat_template["tool_use"] == family_spec("hermes-2-pro").chat_template
    tok.save_pretrained(tmp_path / "named-templates")
    module = TrainableModule(tmp_path / "named-templates", max_context=1_000_000)
    plain = [SYS, u("Why do cats purr?")]
    assert module.prepare(plain).text == module.tokenizer.apply_chat_template(
        plain, add_generation_prompt=True, tokenize=False
    )
    with_tools = [SYS, u("Weather in Paris?")]
    assert module.prepare(with_tools, TOOLS).text == module.tokenizer.apply_chat_template(
        with_tools, tools=TOOLS, add_generation_prompt=True, tokenize=False
    )


@pytest.mark.parametrize("arguments", ['{"city":"Paris"}', '{ "city" : "Paris" }'], ids=["compact", "spaced"])
def test_deepseek_r1_gets_the_callers_own_arguments_text_through_the_module(
    modules: dict[str, TrainableModule], arguments: str
) -> None:
    """Its template concatenates ``arguments``: the module must not re-serialise what the caller wrote."""
    call = {"id": "call1", "type": "function", "function": {"name": "zq_weather_zq", "arguments": arguments}}
    messages = [u("Weather?"), {"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": "21"}]
    module = modules["deepseek-r1"]
    expected = module.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert arguments in expected
    assert module.model_format.render(messages) == expected
    assert module.prepare(messages).text == expected


def test_a_chat_template_the_sandbox_cannot_take_is_a_typed_error_not_a_silent_fallback(tmp_path: Path) -> None:
    """No second renderer: a broken template is refused by name, never handed to apply_chat_template."""
    tok = build_tiny_tokenizer("chatml", vocab_size=300)
    tok.chat_template = "{% for m in messages %}{{ m.content }}"  # never closed
    tok.save_pretrained(tmp_path / "broken")
    with pytest.raises(ModuleError, match="model_format="):
        TrainableModule(tmp_path / "broken").prepare([u("hi")])

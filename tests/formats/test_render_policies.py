"""The documented policies of ``ModelFormat.render`` hold for every family, checked against transformers.

Tools never vanish; a system prompt is never dropped; tool-call arguments reach a
template in the form it takes; ``documents`` and ``continue_final_message`` mean what
they mean to transformers' ``apply_chat_template``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chat_templates_oracle import FAMILIES, SYS, TOOLS, a, oracle, takes_string_arguments, u  # type: ignore[import-not-found]

from prompter.errors import MessageError, PromptError, TemplateError
from prompter.formats.model_format import ModelFormat

transformers = pytest.importorskip("transformers")

NAMED_TOOLS = copy.deepcopy(TOOLS)
NAMED_TOOLS[0]["function"]["name"] = "zq_tool_name_zq"


@pytest.mark.parametrize("with_system", [True, False], ids=["system", "no-system"])
@pytest.mark.parametrize("family", FAMILIES)
def test_tools_never_vanish_from_the_prompt(family: str, with_system: bool) -> None:
    messages = [SYS, u("Weather in Paris?")] if with_system else [u("Weather in Paris?")]
    try:
        text = ModelFormat.get(family).render(messages, tools=NAMED_TOOLS)
    except TemplateError:
        return  # a typed refusal is allowed; silently rendering without the tools is not
    assert "zq_tool_name_zq" in text


@pytest.mark.parametrize("family", FAMILIES)
def test_a_system_prompt_is_never_silently_dropped(family: str) -> None:
    try:
        text = ModelFormat.get(family).render([{"role": "system", "content": "zq system zq"}, u("hi")])
    except TemplateError:
        return
    assert "zq system zq" in text


def test_mistral_v03_gets_its_ignored_system_prompt_folded_into_the_user_turn() -> None:
    text = ModelFormat.get("mistral-v0.3-tools").render([SYS, u("Hello")])
    assert text == oracle("mistral-v0.3-tools", [u("You are terse.\n\nHello")], None, True, {})


def test_glm4_reads_the_tools_from_the_system_message_as_its_own_format_has_them() -> None:
    messages = [SYS, u("Weather?")]
    expected = oracle("glm-4", [{**SYS, "tools": TOOLS}, u("Weather?")], None, True, {})
    assert ModelFormat.get("glm-4").render(messages, tools=TOOLS) == expected
    assert "get_weather" in expected


def _call(arguments: Any) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


@pytest.mark.parametrize("arguments", ['{"city": "Paris"}', '{"city":"Paris"}'], ids=["spaced", "compact"])
def test_deepseek_r1_gets_string_arguments_as_the_caller_wrote_them(arguments: str) -> None:
    """Its template concatenates ``arguments``: parsing them to a dict would break a conversation transformers renders."""
    messages = [u("Weather?"), _call(arguments), {"role": "tool", "content": "21"}]
    expected = oracle("deepseek-r1", messages, None, True, {})
    assert ModelFormat.get("deepseek-r1").render(messages) == expected
    assert arguments in expected


def test_deepseek_r1_gets_object_arguments_as_json_text() -> None:
    messages = [u("Weather?"), _call({"city": "Paris"}), {"role": "tool", "content": "21"}]
    expected = oracle("deepseek-r1", [u("Weather?"), _call('{"city": "Paris"}'), messages[2]], None, True, {})
    assert ModelFormat.get("deepseek-r1").render(messages) == expected


# -- documents ---------------------------------------------------------------------------------------

DOCS = [{"title": "Cats", "text": "Cats purr when content."}, {"title": "Dogs", "text": "Dogs bark."}]
READS_DOCUMENTS = (
    "{% if documents %}{% for d in documents %}<doc>{{ d.title }}: {{ d.text }}</doc>\n{% endfor %}{% endif %}"
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def _tokenizer(template: str) -> Any:
    import tokenizers

    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(model))
    tok.chat_template = template
    return tok


def test_documents_reach_a_template_that_reads_them_as_transformers_passes_them() -> None:
    messages = [u("Why do cats purr?")]
    expected = _tokenizer(READS_DOCUMENTS).apply_chat_template(
        messages, documents=DOCS, add_generation_prompt=True, tokenize=False
    )
    assert "Cats purr when content." in expected
    assert ModelFormat.from_chat_template(READS_DOCUMENTS).render(messages, documents=DOCS) == expected


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3", "gemma-2", "mistral-v0.3-tools"])
def test_documents_a_template_ignores_are_written_as_a_block_not_dropped(family: str) -> None:
    text = ModelFormat.get(family).render([SYS, u("Why do cats purr?")], documents=DOCS)
    assert "# Documents\n\nUse the following documents. One JSON object per line:\n" in text
    assert "Cats purr when content." in text and "Dogs bark." in text


def test_documents_must_be_dicts() -> None:
    with pytest.raises(MessageError, match=r"documents\[0\]"):
        ModelFormat.get("qwen2.5").render([u("q")], documents=["not a dict"])


# -- continue_final_message ------------------------------------------------------------------------

CONTINUE_CASES = {
    "assistant-prefix": [u("Write a haiku."), a("Autumn moonlight -")],
    "assistant-trailing-space": [SYS, u("Count to three."), a("One, two, ")],
}


@pytest.mark.parametrize("case", sorted(CONTINUE_CASES))
@pytest.mark.parametrize("family", FAMILIES)
def test_continue_final_message_cuts_where_transformers_cuts(family: str, case: str) -> None:
    messages = CONTINUE_CASES[case]
    fmt = ModelFormat.get(family)
    sent = messages
    if family in ("gemma-2", "mistral-v0.1", "mistral-v0.3-tools") and messages[0]["role"] == "system":
        sent = [u(SYS["content"] + "\n\n" + messages[1]["content"]), *messages[2:]]  # the documented folding
    try:
        expected = oracle(family, sent, None, False, {"continue_final_message": True})
    except Exception:
        with pytest.raises(TemplateError):
            fmt.render(messages, add_generation_prompt=False, continue_final_message=True)
        return
    assert fmt.render(messages, add_generation_prompt=False, continue_final_message=True) == expected
    rendered = fmt.render_with_spans(messages, add_generation_prompt=False, continue_final_message=True)
    assert rendered.text == expected
    assert all(0 <= s < e <= len(expected) for s, e in rendered.spans)


# -- probing a template ------------------------------------------------------------------------------


def test_a_template_too_slow_to_probe_is_probed_once_then_left_to_its_own_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A dozen probes of a template that runs out of time would cost a dozen budgets; one is enough."""
    import prompter.formats.traits as traits
    from prompter.errors import TemplateTimeoutError

    runs: list[int] = []

    def too_slow(*args: Any, **kwargs: Any) -> str:
        runs.append(1)
        raise TemplateTimeoutError("chat template ran past its time budget")

    monkeypatch.setattr(traits, "render_template", too_slow)
    found = traits.traits_of("{% for m in messages %}{{ m.content }}{% endfor %}{{ tools }}", None, "zq-slow")
    assert runs == [1]
    assert found == traits.Traits("variable", False, "kept", False)


# -- every failure is typed ------------------------------------------------------------------------

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_json = st.recursive(
    _leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6
)
_msg = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"role": st.one_of(st.sampled_from(["system", "user", "assistant", "tool"]), _json)},
        optional={
            "content": st.one_of(st.text(max_size=10), _json),
            "tool_calls": st.one_of(
                _json,
                st.lists(
                    st.fixed_dictionaries(
                        {"function": st.fixed_dictionaries({"name": st.text(max_size=6)}, optional={"arguments": _json})}
                    ),
                    max_size=2,
                ),
            ),
            "name": _json,
        },
    ),
)


@settings(max_examples=200, deadline=None)
@given(
    family=st.sampled_from(FAMILIES),
    messages=st.one_of(st.lists(_msg, max_size=4), _json),
    tools=st.one_of(st.none(), st.just(TOOLS), _json),
    documents=st.one_of(st.none(), st.just([{"title": "t", "text": "x"}]), _json),
    continue_final=st.booleans(),
)
def test_a_model_format_ends_in_a_prompt_or_a_prompt_error(
    family: str, messages: Any, tools: Any, documents: Any, continue_final: bool
) -> None:
    try:
        ModelFormat.get(family).render(
            messages, tools=tools, documents=documents, continue_final_message=continue_final
        )
    except PromptError:
        pass


@pytest.mark.parametrize("family", FAMILIES)
def test_takes_string_arguments_names_exactly_the_templates_that_concatenate_them(family: str) -> None:
    assert ModelFormat.get(family).takes_string_arguments() == takes_string_arguments(family)

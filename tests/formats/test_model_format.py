"""ModelFormat: frozen data, the registry, derivation from a template, and normalisation."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter.errors import (
    MessageError,
    PromptError,
    TemplateError,
    ToolsError,
    UnknownModelFormatError,
    UnsupportedContentError,
)
from prompter.formats.derive import derive_layout
from prompter.formats.model_format import GENERIC, ModelFormat, Rendered
from prompter.formats.prepare import TOOLS_PREAMBLE
from prompter.formats.registry import FAMILIES

CHATML = ModelFormat.get("chatml")
TOOL = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def a(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


# -- the dataclass ---------------------------------------------------------------------------------


def test_model_format_is_frozen_and_varied_with_replace() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        CHATML.soh = "x"  # type: ignore[misc]
    other = dataclasses.replace(CHATML, name="mine")
    assert other.name == "mine" and CHATML.name == "chatml"


def test_every_field_has_a_docstring() -> None:
    import ast
    import inspect

    import prompter.formats.model_format as module

    tree = ast.parse(inspect.getsource(module))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelFormat")
    body = cls.body
    documented = {
        body[i].target.id  # type: ignore[attr-defined]
        for i in range(len(body) - 1)
        if isinstance(body[i], ast.AnnAssign)
        and isinstance(body[i + 1], ast.Expr)
        and isinstance(body[i + 1].value, ast.Constant)  # type: ignore[attr-defined]
    }
    assert {f.name for f in dataclasses.fields(ModelFormat)} <= documented


def test_generic_format() -> None:
    g = ModelFormat.generic()
    assert g is GENERIC
    assert (g.name, g.sos, g.eos, g.soh, g.soa) == (
        "generic",
        "<|start_system|>",
        "<|end_system|>",
        "<|Human|>:",
        "<|Assistant|>:",
    )
    assert (g.eoh, g.eoa, g.soe, g.eoe, g.bos, g.generation_prompt, g.chat_template) == ("",) * 6 + (None,)


def test_fixed_strings_render_without_a_template() -> None:
    fmt = ModelFormat(sos="<s>", eos="</s>", soh="U:", eoh="\n", soa="A:", eoa="\n", generation_prompt="A:", bos="^")
    text = fmt.render([{"role": "system", "content": "S"}, u("q"), a("r"), u("q2")])
    assert text == "^<s>S</s>U:q\nA:r\nU:q2\nA:"
    tool_text = fmt.render([u("q"), {"role": "tool", "content": "42"}], add_generation_prompt=False)
    assert tool_text == "^U:q\nU:42\n"


# -- the registry ----------------------------------------------------------------------------------

LOOKUPS = {
    "qwen2.5": "qwen2.5",
    "QWEN2.5": "qwen2.5",
    "Qwen/Qwen2.5-7B-Instruct": "qwen2.5",
    "Qwen/Qwen2-7B-Instruct": "qwen2",
    "Qwen/Qwen3-8B": "qwen3",
    "Qwen/Qwen1.5-72B-Chat": "qwen1.5",
    "meta-llama/Meta-Llama-3-8B-Instruct": "llama-3",
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1",
    "meta-llama/Llama-3.2-3B-Instruct": "llama-3.2",
    "meta-llama/Llama-2-7b-chat-hf": "llama-2",
    "mistralai/Mistral-7B-Instruct-v0.3": "mistral-v0.3-tools",
    "mistralai/Mistral-7B-Instruct-v0.1": "mistral-v0.1",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "mixtral",
    "mistralai/Mistral-Nemo-Instruct-2407": "mistral-nemo",
    "google/gemma-2-9b-it": "gemma-2",
    "google/gemma-3-4b-it": "gemma-3",
    "THUDM/glm-4-9b-chat": "glm-4",
    "THUDM/chatglm3-6b": "chatglm3",
    "internlm/internlm2-chat-7b": "internlm2",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "deepseek-ai/DeepSeek-R1": "deepseek-r1",
    "deepseek-ai/deepseek-coder-33b-instruct": "deepseek-coder",
    "microsoft/Phi-3-mini-4k-instruct": "phi-3",
    "microsoft/Phi-3.5-mini-instruct": "phi-3.5",
    "microsoft/phi-4": "phi-4",
    "microsoft/Phi-4-mini-instruct": "phi-4-mini",
    "01-ai/Yi-34B-Chat": "yi",
    "01-ai/Yi-1.5-6B-Chat": "yi-1.5",
    "HuggingFaceH4/zephyr-7b-beta": "zephyr",
    "CohereForAI/c4ai-command-r-v01": "command-r",
    "ibm-granite/granite-3.0-2b-instruct": "granite-3.0",
    "NousResearch/Hermes-2-Pro-Llama-3-8B": "hermes-2-pro",
    "openchat/openchat-3.5-0106": "openchat",
    "llama3": "llama-3",
}


@pytest.mark.parametrize(("name", "family"), LOOKUPS.items(), ids=LOOKUPS.keys())
def test_registry_lookup(name: str, family: str) -> None:
    assert ModelFormat.get(name).name == family


def test_families_lists_every_registered_family() -> None:
    assert len(ModelFormat.families()) == 40
    assert set(ModelFormat.families()) == set(FAMILIES)
    for family in ModelFormat.families():
        assert ModelFormat.get(family).chat_template


def test_unknown_name_lists_close_matches() -> None:
    with pytest.raises(UnknownModelFormatError, match="close matches: .*qwen") as caught:
        ModelFormat.get("qwen9")
    assert "'qwen9'" in str(caught.value)
    assert isinstance(caught.value, KeyError)
    with pytest.raises(UnknownModelFormatError):
        ModelFormat.get("")


def test_registry_returns_the_same_object() -> None:
    assert ModelFormat.get("Qwen/Qwen2.5-7B-Instruct") is ModelFormat.get("qwen2.5")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_registry_fixed_strings_match_the_derivation(family: str) -> None:
    """Where fixed strings reproduce the template, the registry's literals are exactly those."""
    fmt = ModelFormat.get(family)
    assert fmt.chat_template is not None
    layout = derive_layout(fmt.chat_template, fmt.bos_token, fmt.eos_token, None)
    if layout is None or "strftime_now" in fmt.chat_template:
        return
    derived = (
        layout.sos,
        layout.eos,
        layout.soh,
        layout.eoh,
        layout.soa,
        layout.eoa,
        layout.generation_prompt,
    )
    assert (fmt.sos, fmt.eos, fmt.soh, fmt.eoh, fmt.soa, fmt.eoa, fmt.generation_prompt) == derived
    assert fmt.default_system == layout.default_system
    assert fmt.bos == layout.bos


# -- from_chat_template ----------------------------------------------------------------------------


def test_from_chat_template_derives_chatml() -> None:
    fmt = ModelFormat.from_chat_template(CHATML.chat_template or "", eos_token="<|im_end|>", name="mine")
    assert (fmt.soh, fmt.eoh, fmt.soa, fmt.generation_prompt) == (
        "<|im_start|>user\n",
        "<|im_end|>\n",
        "<|im_start|>assistant\n",
        "<|im_start|>assistant\n",
    )
    assert fmt.name == "mine" and "<|im_end|>" in fmt.stop_words
    assert "<|im_start|>" in fmt.special_tokens


def test_from_chat_template_finds_the_default_system_prompt() -> None:
    qwen = ModelFormat.get("qwen2.5")
    fmt = ModelFormat.from_chat_template(qwen.chat_template or "", eos_token="<|im_end|>")
    assert fmt.default_system == "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def test_derived_strings_render_the_same_without_the_template() -> None:
    llama = ModelFormat.get("llama-3")
    fixed = dataclasses.replace(llama, chat_template=None)
    msgs = [{"role": "system", "content": "S"}, u("q"), a("r"), u("q2")]
    assert fixed.render(msgs) == llama.render(msgs)


def test_a_template_that_does_not_compile_is_a_template_error() -> None:
    with pytest.raises(TemplateError, match="does not compile"):
        ModelFormat.from_chat_template("{% for %}")


def test_a_template_that_fixed_strings_cannot_express_still_renders() -> None:
    fmt = ModelFormat.from_chat_template(
        "{% for m in messages %}{{ loop.index }}:{{ m.content|upper }};{% endfor %}", name="odd"
    )
    assert fmt.soh == "" and fmt.render([u("a"), a("b")]) == "1:A;2:B;"


# -- validation and normalisation ------------------------------------------------------------------

BAD_MESSAGES: dict[str, tuple[Any, str]] = {
    "not-a-list": ("hello", "messages: expected a list"),
    "item-not-dict": ([u("q"), 3], r"messages\[1\]"),
    "missing-role": ([{"content": "x"}], r"messages\[0\]: missing 'role'"),
    "role-not-str": ([{"role": 1, "content": "x"}], r"messages\[0\]\.role"),
    "content-int": ([{"role": "user", "content": 3}], r"messages\[0\]\.content"),
    "tool-calls-not-list": (
        [{"role": "assistant", "content": "", "tool_calls": "x"}],
        r"messages\[0\]\.tool_calls",
    ),
}


@pytest.mark.parametrize(("messages", "match"), BAD_MESSAGES.values(), ids=BAD_MESSAGES.keys())
@pytest.mark.parametrize("fmt", [CHATML, ModelFormat.get("llama-2"), GENERIC], ids=["chatml", "llama-2", "generic"])
def test_bad_messages_name_the_item(fmt: ModelFormat, messages: Any, match: str) -> None:
    with pytest.raises(MessageError, match=match):
        fmt.render(messages)
    with pytest.raises(MessageError, match=match):
        fmt.render_with_spans(messages)


def test_bad_tools_are_a_tools_error() -> None:
    with pytest.raises(ToolsError, match=r"tools\[0\]"):
        CHATML.render([u("q")], tools=["nope"])


def test_content_none_with_tool_calls_becomes_empty_and_arguments_are_parsed() -> None:
    qwen = ModelFormat.get("qwen2.5")
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": '{"x": "é"}'}}],
    }
    msgs = [u("q"), call]
    before = copy.deepcopy(msgs)
    text = qwen.render(msgs, tools=[TOOL])
    assert '{"name": "f", "arguments": {"x": "é"}}' in text
    assert '\\"x\\"' not in text  # not encoded twice
    assert "None" not in text
    assert msgs == before


def test_tools_are_written_into_the_system_message_of_a_template_that_ignores_them() -> None:
    text = CHATML.render([{"role": "system", "content": "Be brief."}, u("q")], tools=[TOOL])
    block = TOOLS_PREAMBLE + json.dumps(TOOL, ensure_ascii=False)
    assert text.startswith("<|im_start|>system\nBe brief.\n\n" + block + "<|im_end|>\n")
    alone = CHATML.render([u("q")], tools=[TOOL])
    assert alone.startswith("<|im_start|>system\n" + block + "<|im_end|>\n<|im_start|>user\nq")


def test_tools_go_into_the_first_user_message_when_the_template_rejects_system() -> None:
    gemma = ModelFormat.get("gemma-2")
    text = gemma.render([u("q")], tools=[TOOL])
    assert text.startswith("<bos><start_of_turn>user\n" + TOOLS_PREAMBLE)
    assert text.endswith("\n\nq<end_of_turn>\n<start_of_turn>model\n")


def test_tools_reach_a_template_that_reads_them() -> None:
    text = ModelFormat.get("qwen2.5").render([u("q")], tools=[TOOL])
    assert "<tools>\n" + json.dumps(TOOL) + "\n</tools>" in text
    assert TOOLS_PREAMBLE not in text


def test_text_parts_are_joined_for_a_text_only_template() -> None:
    msg = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert CHATML.render([msg], add_generation_prompt=False) == "<|im_start|>user\na\nb<|im_end|>\n"


def test_an_image_in_a_text_only_template_is_unsupported() -> None:
    msg = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}
    with pytest.raises(UnsupportedContentError, match=r"messages\[0\]\.content\[0\]"):
        CHATML.render([msg])


def test_an_image_reaches_a_template_that_handles_images() -> None:
    msg = {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "what is it?"}]}
    assert "<start_of_image>what is it?" in ModelFormat.get("gemma-3").render([msg])


def test_kwargs_reach_the_template() -> None:
    qwen3 = ModelFormat.get("qwen3")
    assert qwen3.render([u("q")], enable_thinking=False).endswith("<think>\n\n</think>\n\n")
    llama = ModelFormat.get("llama-3.1")
    assert "Today Date: 01 Jan 2030" in llama.render([u("q")], date_string="01 Jan 2030")


def test_the_same_tools_list_changed_in_place_is_noticed() -> None:
    qwen = ModelFormat.get("qwen2.5")
    tools = [copy.deepcopy(TOOL)]
    first = qwen.render([u("q")], tools=tools)
    tools[0]["function"]["description"] = "changed"
    second = qwen.render([u("q")], tools=tools)
    assert '"description": "changed"' in second and first != second


# -- the fast path and the template agree ----------------------------------------------------------

FAST = sorted(
    family
    for family in FAMILIES
    if derive_layout(
        ModelFormat.get(family).chat_template or "",
        ModelFormat.get(family).bos_token,
        ModelFormat.get(family).eos_token,
        None,
    )
    is not None
)

PIECES = list("ab \n\t{}%#<>|/[]_é\u2028") + [
    "<|im_end|>",
    "</s>",
    "[INST]",
    "</think>",
    "<think>",
    "{{ x }}",
]
TEXT = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[dict[str, Any]], bool]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXT)})
    for i in range(draw(st.integers(1, 6))):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": draw(TEXT)})
    return messages, draw(st.booleans())


def test_most_families_have_a_fast_path() -> None:
    assert len(FAST) >= 14  # "about a third of the families"; we get more


@pytest.mark.parametrize("family", FAST)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=conversations())
def test_fast_path_equals_the_template(family: str, case: tuple[list[dict[str, Any]], bool]) -> None:
    messages, add = case
    fmt = ModelFormat.get(family)
    try:
        via_template = fmt.render(messages, add_generation_prompt=add, _force_template=True)
    except TemplateError:
        via_template = None
    try:
        fast = fmt.render(messages, add_generation_prompt=add)
    except TemplateError:
        fast = None
    assert fast == via_template
    if fast is not None:
        assert fmt.render_with_spans(messages, add_generation_prompt=add).text == fast


@settings(max_examples=60, deadline=None)
@given(case=conversations(), family=st.sampled_from(sorted(FAMILIES)))
def test_only_documented_errors_and_inputs_unchanged(case: tuple[list[dict[str, Any]], bool], family: str) -> None:
    messages, add = case
    before = copy.deepcopy(messages)
    try:
        rendered = ModelFormat.get(family).render_with_spans(messages, add_generation_prompt=add)
    except PromptError:
        pass
    else:
        assert isinstance(rendered, Rendered)
    assert messages == before


def test_importing_model_format_does_not_import_jinja2() -> None:
    import subprocess
    import sys

    code = "import sys, prompter.formats.model_format; print('jinja2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

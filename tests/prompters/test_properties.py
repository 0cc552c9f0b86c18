"""Invariants over generated values: verbatim insertion, no mutation, only PromptError."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter import AlpacaPrompter, ChatPrompter, EmptyPrompter
from prompter.errors import PromptError

EXAMPLES = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# text that looks like every template syntax we know, mixed with arbitrary unicode
TRICKY = st.sampled_from(
    ["{a}", "{b}", "{input}", "{{", "}}", "{0}", "{a.b}", "{}", "{{ x }}", "{% if x %}", "{# c #}",
     "<|im_end|>", "<|start_system|>", "### Response:\n", "\\n", "\n", "\x00", "é", "😀", "%s", "$x"]
)
VALUE = st.lists(st.one_of(TRICKY, st.text(max_size=8)), max_size=6).map("".join)
PAIRS = st.lists(st.tuples(VALUE, VALUE).map(list), max_size=3)

SYS = "S"
PRE = (
    "Below is an instruction that describes a task, paired with extra messages such as input that provides "
    "further context if possible. Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n"
)


@EXAMPLES
@given(a=VALUE, b=VALUE, user_input=VALUE, history=PAIRS)
def test_chat_values_appear_verbatim_where_they_belong(a: str, b: str, user_input: str, history: list[list[str]]) -> None:
    p = ChatPrompter('JSON {"k": 1} {a} | {b}', system=SYS)
    text = p.generate_prompt({"a": a, "b": b, "input": user_input}, history=history)
    turns = "".join(f"<|Human|>:{q}<|Assistant|>:{ans}" for q, ans in history)
    expected = (
        f'<|start_system|>{SYS}JSON {{"k": 1}} {a} | {b}\n\n<|end_system|>\n\n{turns}\n'
        f"<|Human|>:\n{user_input}\n<|Assistant|>:\n"
    )
    assert text == expected
    body = p.generate_prompt({"a": a, "b": b, "input": user_input}, history=history, format="openai")
    messages = [{"role": "system", "content": f'{SYS}\nJSON {{"k": 1}} {a} | {b}\n\n'}]
    for q, ans in history:
        messages += [{"role": "user", "content": q}, {"role": "assistant", "content": ans}]
    messages.append({"role": "user", "content": user_input})
    assert body == {"messages": messages}


@EXAMPLES
@given(a=VALUE, extra=VALUE)
def test_alpaca_values_appear_verbatim_where_they_belong(a: str, extra: str) -> None:
    p = AlpacaPrompter("Do {a}.", extra_keys="ctx", system=SYS)
    text = p.generate_prompt({"a": a, "ctx": extra})
    assert text == (
        f"{SYS}\n{PRE}Do {a}.\n\nHere are some extra messages you can referred to:\n\n"
        f"### ctx:\n{extra}\n\n\n\n### Response:\n"
    )


@EXAMPLES
@given(value=VALUE)
def test_a_str_input_fills_the_single_slot_once(value: str) -> None:
    p = ChatPrompter("<{x}>", system="")
    assert p.generate_prompt(value, format="openai")["messages"][0]["content"] == f"<{value}>\n\n"


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | VALUE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(VALUE, inner, max_size=3),
    max_leaves=8,
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system"]), "content": VALUE}
)
# a tool's parameters are a JSON Schema object (anything else is a ToolsError), of any JSON values at any
# depth (NaN and Infinity are no JSON: a ToolsError too)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | VALUE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(VALUE, inner, max_size=3),
    max_leaves=8,
)
SCHEMA = st.dictionaries(VALUE, JSON, max_size=3)
TOOL = st.fixed_dictionaries(
    {"type": st.just("function"), "function": st.fixed_dictionaries({"name": VALUE.filter(bool), "parameters": SCHEMA})}
)


@EXAMPLES
@given(
    values=st.fixed_dictionaries({"a": VALUE, "input": VALUE}),
    history=st.lists(st.one_of(st.tuples(VALUE, VALUE).map(list), MESSAGE), max_size=4),
    tools=st.lists(TOOL, max_size=2),
    fmt=st.sampled_from([None, "openai"]),
)
def test_the_callers_objects_are_never_mutated(
    values: dict[str, str], history: list[Any], tools: list[Any], fmt: str | None
) -> None:
    before = copy.deepcopy((values, history, tools))
    p = ChatPrompter("{a}")
    result = p.generate_prompt(values, history=history, tools=tools or None, format=fmt)  # type: ignore[arg-type]
    assert (values, history, tools) == before
    if isinstance(result, dict) and "tools" in result:
        result["tools"].append("mutating the result")
        assert len(tools) == len(before[2])


@EXAMPLES
@given(
    input=JSONISH,
    history=st.one_of(JSONISH, st.lists(st.one_of(JSONISH, MESSAGE), max_size=3)),
    tools=st.one_of(st.none(), JSONISH, st.lists(st.one_of(TOOL, JSONISH), max_size=2)),
    label=st.one_of(st.none(), JSONISH),
    which=st.sampled_from(["chat", "chat-slot", "alpaca", "empty"]),
    fmt=st.sampled_from([None, "openai"]),
)
def test_bad_input_only_ever_raises_prompt_errors(
    input: Any, history: Any, tools: Any, label: Any, which: str, fmt: str | None
) -> None:
    prompter = {
        "chat": lambda: ChatPrompter("Hi."),
        "chat-slot": lambda: ChatPrompter("Hi {a}."),
        "alpaca": lambda: AlpacaPrompter("Hi {a}."),
        "empty": lambda: EmptyPrompter(),
    }[which]()
    try:
        prompter.generate_prompt(input, history=history, tools=tools, label=label, format=fmt)  # type: ignore[arg-type]
    except PromptError:
        pass

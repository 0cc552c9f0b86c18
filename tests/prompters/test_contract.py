"""DESIGN.md's byte-for-byte contract, one table row per promise."""

from __future__ import annotations

import logging
import re
import warnings

import pytest

from prompter import AlpacaPrompter, ChatPrompter, EmptyPrompter, ModelFormat
from prompter.errors import (
    HistoryError,
    InputTypeError,
    MissingSlotError,
    PromptError,
    PromptTypeError,
    ToolsError,
    UnexpectedKeyError,
)

SYS = "You are a helpful assistant."
PRE = (
    "Below is an instruction that describes a task, paired with extra messages such as input that provides "
    "further context if possible. Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n"
)
EXTRA = "Here are some extra messages you can referred to:\n\n"
TOOLS = [{"type": "function", "function": {"name": "example"}}]
TOOLS_JSON = '[{"type": "function", "function": {"name": "example"}}]'
TOOLS_BLOCK = "### Function-call Tools. \n\n" + TOOLS_JSON + "\n\n"


def alpaca(instruction: object = None, **kw: object) -> AlpacaPrompter:
    return AlpacaPrompter(instruction, **kw)  # type: ignore[arg-type]


def chat(instruction: object = None, **kw: object) -> ChatPrompter:
    return ChatPrompter(instruction, **kw)  # type: ignore[arg-type]


TEXT_CASES = [
    pytest.param(
        alpaca("Add: {instruction}"),
        ("a+b",),
        {},
        f"{SYS}\n{PRE}Add: a+b\n\n\n\n### Response:\n",
        id="alpaca-one-slot-str",
    ),
    pytest.param(
        alpaca("Add the numbers.", extra_keys="input"),
        ("a+b",),
        {},
        f"{SYS}\n{PRE}Add the numbers.\n\n{EXTRA}### input:\na+b\n\n\n\n### Response:\n",
        id="alpaca-extra-key-str",
    ),
    pytest.param(
        alpaca("Add the numbers."),
        ("a+b",),
        {},
        f"{SYS}\n{PRE}Add the numbers.\n\n{EXTRA}### input:\na+b\n\n\n\n### Response:\n",
        id="alpaca-no-slot-gets-input-key",
    ),
    pytest.param(
        alpaca("Use the tool.", extra_keys="input", tools=TOOLS),
        ("weather?",),
        {},
        f"{SYS}\n{PRE}Use the tool.\n\n{EXTRA}### input:\nweather?\n\n\n{TOOLS_BLOCK}\n### Response:\n",
        id="alpaca-tools-at-construction",
    ),
    pytest.param(
        alpaca("Use the tool.", extra_keys="input"),
        ("weather?",),
        {"tools": TOOLS},
        f"{SYS}\n{PRE}Use the tool.\n\n{EXTRA}### input:\nweather?\n\n\n{TOOLS_BLOCK}\n### Response:\n",
        id="alpaca-tools-at-call",
    ),
    pytest.param(
        alpaca("About {topic}.", extra_keys=["context", "q"]),
        ({"topic": "cats", "context": "C", "q": "Q"},),
        {},
        f"{SYS}\n{PRE}About cats.\n\n{EXTRA}### context:\nC\n\n### q:\nQ\n\n\n\n### Response:\n",
        id="alpaca-slot-and-extra-keys",
    ),
    pytest.param(
        alpaca({"system": "Solve {task}.", "user": "Show work for {task}."}),
        ({"task": "2+2"},),
        {},
        f"{SYS}\n{PRE}Solve 2+2.\n\nShow work for 2+2.### Response:\n",  # LazyLLM 1.4.0's bytes (DESIGN.md)
        id="alpaca-system-and-user-instruction",
    ),
    pytest.param(
        alpaca("Add: {x}", system="Be exact."),
        (7,),
        {},
        f"Be exact.\n{PRE}Add: 7\n\n\n\n### Response:\n",
        id="alpaca-int-input-custom-system",
    ),
    pytest.param(
        chat("Add: {input}"),
        ("a+b",),
        {},
        f"<|start_system|>{SYS}Add: a+b\n\n<|end_system|>\n\n\n<|Human|>:\n\n<|Assistant|>:\n",
        id="chat-one-slot-fills-it",
    ),
    pytest.param(
        chat("Add the numbers."),
        ("a+b",),
        {},
        f"<|start_system|>{SYS}Add the numbers.\n\n<|end_system|>\n\n\n<|Human|>:\na+b\n<|Assistant|>:\n",
        id="chat-no-slot-str-is-user-turn",
    ),
    pytest.param(
        chat("Chat kindly."),
        ("Let's talk",),
        {"history": [["Hello", "Hi there"]]},
        f"<|start_system|>{SYS}Chat kindly.\n\n<|end_system|>\n\n<|Human|>:Hello<|Assistant|>:Hi there\n"
        "<|Human|>:\nLet's talk\n<|Assistant|>:\n",
        id="chat-history-pairs",
    ),
    pytest.param(
        chat("Chat kindly."),
        ("Let's talk",),
        {"history": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there"}]},
        f"<|start_system|>{SYS}Chat kindly.\n\n<|end_system|>\n\n<|Human|>:Hello<|Assistant|>:Hi there\n"
        "<|Human|>:\nLet's talk\n<|Assistant|>:\n",
        id="chat-history-message-dicts",
    ),
    pytest.param(
        chat("Pick a tool.", tools=TOOLS),
        ("weather?",),
        {},
        f"<|start_system|>{SYS}Pick a tool.\n\n{TOOLS_BLOCK}<|end_system|>\n\n\n<|Human|>:\nweather?\n<|Assistant|>:\n",
        id="chat-tools",
    ),
    pytest.param(
        chat("Answer from context.", extra_keys="context"),
        ({"context": "C", "input": "Q"},),
        {},
        f"<|start_system|>{SYS}Answer from context.\n{EXTRA}### context:\nC\n\n\n<|end_system|>\n\n\n"
        "<|Human|>:\nQ\n<|Assistant|>:\n",
        id="chat-extra-key-and-free-input",
    ),
    pytest.param(
        chat({"system": "Be kind.", "user": "Reply to: "}),
        ("hi",),
        {},
        f"<|start_system|>{SYS}Be kind.<|end_system|>\n\n\n<|Human|>:\nReply to: hi\n<|Assistant|>:\n",  # as LazyLLM 1.4.0
        id="chat-user-level-instruction",
    ),
    pytest.param(
        chat("Be kind.", enable_system=False),
        ("hi",),
        {},
        "<|start_system|>Be kind.\n\n<|end_system|>\n\n\n<|Human|>:\nhi\n<|Assistant|>:\n",
        id="chat-enable-system-false",
    ),
    pytest.param(
        chat(),
        ("hi",),
        {},
        f"<|start_system|>{SYS}<|end_system|>\n\n\n<|Human|>:\nhi\n<|Assistant|>:\n",
        id="chat-no-instruction",
    ),
    pytest.param(
        chat("Be kind."),
        ("hi",),
        {"label": "Hello!"},
        f"<|start_system|>{SYS}Be kind.\n\n<|end_system|>\n\n\n<|Human|>:\nhi\n<|Assistant|>:\nHello!",
        id="chat-label-appended",
    ),
    pytest.param(
        chat('Reply as JSON like {"answer": 1} about {topic}.'),
        ({"topic": "{input}"},),
        {},
        f'<|start_system|>{SYS}Reply as JSON like {{"answer": 1}} about {{input}}.\n\n<|end_system|>\n\n\n'
        "<|Human|>:\n\n<|Assistant|>:\n",
        id="chat-json-braces-literal-and-value-not-refilled",
    ),
    pytest.param(
        EmptyPrompter(),
        ("raw text",),
        {},
        "raw text",
        id="empty-pass-through",
    ),
]


@pytest.mark.parametrize(("prompter", "args", "kwargs", "expected"), TEXT_CASES)
def test_text_contract(prompter: object, args: tuple[object, ...], kwargs: dict[str, object], expected: str) -> None:
    assert prompter.generate_prompt(*args, **kwargs) == expected  # type: ignore[attr-defined]


DICT_CASES = [
    pytest.param(
        alpaca("Use the tool.", extra_keys="input", tools=TOOLS),
        ("weather?",),
        {},
        {
            "messages": [
                {"role": "system", "content": f"{SYS}\n{PRE}Use the tool.\n\n{EXTRA}### input:\nweather?\n\n"},
                {"role": "user", "content": ""},
            ],
            "tools": TOOLS,
        },
        id="alpaca-all-keys-in-slots-user-empty",
    ),
    pytest.param(
        chat("Chat kindly."),
        ("Let's talk",),
        {"history": [["Hello", "Hi there"]]},
        {
            "messages": [
                {"role": "system", "content": f"{SYS}\nChat kindly.\n\n"},
                {"role": "user", "content": "Hello"},
                {"role": "assistant", "content": "Hi there"},
                {"role": "user", "content": "Let's talk"},
            ]
        },
        id="chat-history-no-tools-key",
    ),
    pytest.param(
        chat({"system": "Be kind.", "user": "Reply to: "}, enable_system=False),
        ("hi",),
        {},
        # the dict instruction's system part as LazyLLM 1.4.0 renders it (no "\n\n"); enable_system=False drops
        # only the system prompt, so the instruction stays (LazyLLM drops both: a listed deliberate difference)
        {"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Reply to: hi"}]},
        id="chat-user-instruction-before-input",
    ),
    pytest.param(
        chat(enable_system=False),
        ("hi",),
        {},
        {"messages": [{"role": "user", "content": "hi"}]},
        id="chat-no-system-message-when-empty",
    ),
    pytest.param(
        chat(system="Custom."),
        ("hi",),
        {"tools": TOOLS, "label": "ok"},
        {
            "messages": [
                {"role": "system", "content": "Custom."},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "ok"},
            ],
            "tools": TOOLS,
        },
        id="chat-call-tools-and-label",
    ),
    pytest.param(
        chat(system=""),
        (
            "next",
        ),
        {
            "history": [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"city": "Paris"}'}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "18C"},
            ]
        },
        {
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,  # None stays None (issue 10: LazyLLM and the OpenAI API keep null)
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"city": "Paris"}'}}
                    ],
                },
                {"role": "tool", "content": "18C", "tool_call_id": "c1"},
                {"role": "user", "content": "next"},
            ]
        },
        id="chat-tool-call-and-result-history",
    ),
    pytest.param(
        chat("Agent.", system=""),
        ({"role": "tool", "tool_call_id": "c1", "content": "42"},),
        {},
        {
            "messages": [
                {"role": "system", "content": "Agent.\n\n"},
                {"role": "tool", "content": "42", "tool_call_id": "c1"},
            ]
        },
        id="chat-current-turn-is-a-tool-result",
    ),
    pytest.param(
        EmptyPrompter(),
        ("hi",),
        {"history": [["q", "a"]]},
        {
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "a"},
                {"role": "user", "content": "hi"},
            ]
        },
        id="empty-history-openai",
    ),
]


@pytest.mark.parametrize(("prompter", "args", "kwargs", "expected"), DICT_CASES)
def test_openai_contract(prompter: object, args: tuple[object, ...], kwargs: dict[str, object], expected: object) -> None:
    assert prompter.generate_prompt(*args, return_dict=True, **kwargs) == expected  # type: ignore[attr-defined]
    assert prompter.generate_prompt(*args, format="openai", **kwargs) == expected  # type: ignore[attr-defined]


def test_text_history_with_tool_calls_and_results() -> None:
    history = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "w", "arguments": '{"city": "Paris"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "assistant", "content": "It is 18C."},
    ]
    text = chat(system="").generate_prompt("thanks", history=history)
    assert text == (
        "<|start_system|><|end_system|>\n\n"
        "<|Human|>:Weather?"
        '<|Assistant|>:{"name": "w", "arguments": {"city": "Paris"}}'
        "<|Human|>:18C"
        "<|Assistant|>:It is 18C."
        "\n<|Human|>:\nthanks\n<|Assistant|>:\n"
    )


def test_tool_results_framed_with_soe_eoe_when_the_format_has_them() -> None:
    import dataclasses

    fmt = dataclasses.replace(ModelFormat.generic(), soe="<obs>", eoe="</obs>")
    history = [{"role": "tool", "tool_call_id": "c1", "content": "18C"}]
    text = chat(system="").generate_prompt("ok", history=history, model_format=fmt)
    assert "<obs>18C</obs>" in text


# ---- the system prompt ---------------------------------------------------------------------


def test_system_precedence_argument_beats_model_default() -> None:
    p = chat(system="Mine.")
    body = p.generate_prompt("hi", format="openai", model_format=ModelFormat.get("qwen2.5"))
    assert body["messages"][0] == {"role": "system", "content": "Mine."}


def test_system_precedence_model_default_beats_library_default() -> None:
    qwen = ModelFormat.get("qwen2.5")
    assert qwen.default_system
    body = chat().generate_prompt("hi", format="openai", model_format=qwen)
    assert body["messages"][0] == {"role": "system", "content": qwen.default_system}


def test_system_library_default_and_its_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert chat().generate_prompt("hi", format="openai")["messages"][0]["content"] == SYS
    monkeypatch.setenv("PROMPTER_DEFAULT_SYSTEM", "House rules.")
    assert chat().generate_prompt("hi", format="openai")["messages"][0]["content"] == "House rules."


def test_binding_a_model_never_changes_the_prompter() -> None:
    p = chat("Be kind.", tools=TOOLS)
    before = dict(vars(p))
    plain = p.generate_prompt("hi")
    p.generate_prompt("hi", model_format=ModelFormat.get("qwen2.5"))
    p.generate_prompt("hi", format="openai", model_format="llama-3.1")
    assert p.generate_prompt("hi") == plain
    after = vars(p)
    assert {k: v for k, v in after.items() if k != "_plans"} == {k: v for k, v in before.items() if k != "_plans"}


def test_bound_model_renders_exactly_the_models_template() -> None:
    fmt = ModelFormat.get("qwen2.5")
    p = chat("Be kind.", tools=TOOLS)
    body = p.generate_prompt("hi", history=[["q", "a"]], format="openai", model_format=fmt)
    text = p.generate_prompt("hi", history=[["q", "a"]], model_format=fmt)
    assert text == fmt.render(body["messages"], tools=body["tools"])
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


# ---- tools, history and input errors -------------------------------------------------------


def test_tools_given_to_the_constructor_lock_the_tool_set() -> None:
    p = chat("x", tools=TOOLS)
    with pytest.raises(ToolsError, match="locks the tool set"):
        p.generate_prompt("hi", tools=TOOLS)


ERROR_CASES = [
    pytest.param(lambda: alpaca("x").generate_prompt("hi", history=[["q", "a"]]), HistoryError, "takes no history",
                 id="alpaca-rejects-history"),
    pytest.param(lambda: alpaca("About {topic}.").generate_prompt({"topic": "t", "input": "i"}), UnexpectedKeyError,
                 "'input'", id="alpaca-every-key-must-be-a-slot"),
    pytest.param(lambda: chat("About {topic} and {style}.").generate_prompt({"topic": "t"}), MissingSlotError,
                 "'style'", id="missing-slot-named"),
    pytest.param(lambda: chat("About {a} and {b}.").generate_prompt("x"), MissingSlotError, "a, b",
                 id="str-input-with-two-slots"),
    pytest.param(lambda: chat("About {a}.").generate_prompt({"a": 1, "x": 1, "y": 2}), UnexpectedKeyError,
                 "'x', 'y'", id="two-free-keys"),
    pytest.param(lambda: chat("hi").generate_prompt("x", history=[["q", "a"], ["q", "a"], ["q", "a"], 5]),
                 HistoryError, r"history\[3\]: expected \[question, answer\] or a message dict, got int",
                 id="history-index-and-type"),
    pytest.param(lambda: chat("hi").generate_prompt("x", history=[["q", "a", "b"]]), HistoryError,
                 r"history\[0\].*3-item list", id="history-triple"),
    pytest.param(lambda: chat("hi").generate_prompt("x", history="q"), HistoryError, "got str",
                 id="history-not-a-list"),
    pytest.param(lambda: chat("hi").generate_prompt("x", history=[{"content": "x"}]), PromptError,
                 r"history\[0\]: a message needs a 'role'", id="history-message-without-role"),
    pytest.param(lambda: chat("hi").generate_prompt("x", history=[{"role": "bot", "content": "x"}]), PromptError,
                 r"history\[0\]: unknown role 'bot'", id="history-unknown-role"),
    pytest.param(lambda: chat("hi").generate_prompt(["not", "messages"]), InputTypeError, "input",
                 id="input-list-of-str"),
    pytest.param(lambda: chat("{a}").generate_prompt({"a": [1]}), InputTypeError, r"input\['a'\].*list",
                 id="slot-value-type"),
    pytest.param(lambda: chat("x").generate_prompt("hi", tools=[{"type": "function"}]), ToolsError, r"tools\[0\]",
                 id="malformed-tool"),
    pytest.param(lambda: chat("x").generate_prompt("hi", format="klingon"), PromptError, "unknown format 'klingon'",
                 id="unknown-format"),
    pytest.param(lambda: chat("x", extra_keys=["not an id"]), PromptError, "not an identifier",
                 id="extra-key-not-identifier"),
    pytest.param(lambda: chat({"system": "x", "assistant": "y"}), PromptError, "only 'system' and 'user'",
                 id="instruction-dict-keys"),
]


@pytest.mark.parametrize(("call", "error", "message"), ERROR_CASES)
def test_errors_are_typed_and_name_the_fault(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]


def test_error_classes_inherit_the_matching_builtin() -> None:
    with pytest.raises(KeyError):
        chat("{a}").generate_prompt({})
    with pytest.raises(TypeError):
        chat("x").generate_prompt("x", history=5)
    with pytest.raises(ValueError):
        chat("x", tools=TOOLS).generate_prompt("x", tools=TOOLS)
    assert str(MissingSlotError("input is missing slot(s): 'a'")) == "input is missing slot(s): 'a'"


# ---- aliases, logging, responses -------------------------------------------------------------


def test_extro_keys_is_a_deprecated_alias() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = alpaca("Add.", extro_keys="input")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert old.generate_prompt("1+1") == alpaca("Add.", extra_keys="input").generate_prompt("1+1")


def test_show_logs_at_debug_and_never_prints(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    with caplog.at_level(logging.DEBUG, logger="prompter"):
        text = chat("x", show=True).generate_prompt("hello there")
    assert capsys.readouterr().out == ""
    assert any(text in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    ("prompter", "output", "input", "expected"),
    [
        pytest.param(alpaca("x"), "prompt### Response:\nThe answer", None, "The answer", id="alpaca-split"),
        pytest.param(chat("x"), "PROMPTanswer", "PROMPT", "answer", id="echoed-input-removed"),
        pytest.param(chat("x"), "just the answer", None, "just the answer", id="plain-answer"),
    ],
)
def test_get_response(prompter: object, output: str, input: str | None, expected: str) -> None:
    assert prompter.get_response(output, input) == expected  # type: ignore[attr-defined]


# ---- found in review: each of these once misbehaved -------------------------------------------


def test_a_message_given_to_a_prompter_with_slots_names_the_missing_slots() -> None:
    with pytest.raises(MissingSlotError, match="needs slot.*topic"):
        chat("About {topic}.").generate_prompt({"role": "user", "content": "hi"})
    with pytest.raises(MissingSlotError, match="topic"):
        chat("About {topic}.").generate_prompt([{"role": "user", "content": "hi"}])
    # a dict that fills a slot is slot values, whatever its other keys are called
    body = chat("Act as {content}.", system="").generate_prompt({"content": "pirate", "role": "ahoy"}, format="openai")
    assert body["messages"] == [{"role": "system", "content": "Act as pirate.\n\n"}, {"role": "user", "content": "ahoy"}]


def test_a_user_level_instruction_never_separates_tool_results_from_their_call() -> None:
    p = chat({"system": "S", "user": "Answer briefly. "}, system="")
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "w", "arguments": "{}"}}]},
    ]
    body = p.generate_prompt({"role": "tool", "tool_call_id": "c1", "content": "18C"}, history=history, format="openai")
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assert body["messages"][-1] == {"role": "user", "content": "Answer briefly. "}
    prefixed = p.generate_prompt({"role": "user", "content": "hi"}, format="openai")
    assert prefixed["messages"][-1] == {"role": "user", "content": "Answer briefly. hi"}


@pytest.mark.parametrize(
    ("template", "missing"),
    [
        pytest.param("{system}{instruction}{tools}{history}{user}", "{input}", id="input-dropped"),
        pytest.param("{system}{instruction}{history}{user}{input}", "{tools}", id="tools-dropped"),
        pytest.param("{system}{instruction}{tools}{history}{input}", "{user}", id="user-dropped"),
        pytest.param(5, "must be str", id="not-a-str"),
    ],
)
def test_a_layout_that_would_drop_content_fails_when_the_class_is_defined(template: object, missing: str) -> None:
    from prompter import PrompterBase
    from prompter.errors import DeclarationError

    with pytest.raises(DeclarationError, match=re.escape(missing)):
        type("Broken", (PrompterBase,), {"template": template})


def test_returned_tools_are_fresh_unless_locked_at_construction() -> None:
    import copy

    free = chat("x").generate_prompt("hi", tools=TOOLS, format="openai")
    free["tools"][0]["extra"] = 1  # call-time tools: plain dicts, the caller's to change
    assert "extra" not in TOOLS[0]
    locked = chat("x", tools=TOOLS).generate_prompt("hi", format="openai")
    with pytest.raises(TypeError, match="read-only"):
        locked["tools"][0]["extra"] = 1
    plain = copy.deepcopy(locked)
    plain["tools"][0]["extra"] = 1
    assert type(plain["tools"][0]) is dict


ODD_CALLS = [
    pytest.param(lambda: chat("x").generate_prompt("hi", model_format=5), PromptTypeError, id="model-format-int"),
    pytest.param(lambda: chat("x").generate_prompt("hi", history=[{"role": ["user"], "content": "x"}]), PromptError,
                 id="role-unhashable"),
    pytest.param(lambda: chat("x").get_response(None), PromptTypeError, id="get-response-none"),
    pytest.param(lambda: chat("{a}").generate_prompt({"a": True}), InputTypeError, id="bool-slot-value"),
    pytest.param(lambda: chat("x").generate_prompt({1: "x"}), InputTypeError, id="non-str-key"),
]


@pytest.mark.parametrize(("call", "error"), ODD_CALLS)
def test_odd_arguments_raise_typed_errors(call: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        call()  # type: ignore[operator]


def test_empty_tools_at_construction_lock_nothing() -> None:
    assert "### Function-call Tools." in chat("x", tools=[]).generate_prompt("hi", tools=TOOLS)


def test_unexpected_key_message_reads_as_a_sentence() -> None:
    with pytest.raises(UnexpectedKeyError) as err:
        chat("About {a}.").generate_prompt({"a": "1", "q": "2", "r": "3"})
    assert str(err.value) == (
        "input has unexpected key(s) 'q', 'r': at most one key besides the slots may carry the user's message; "
        "slots: 'a'"
    )


def test_multimodal_text_parts_join_with_newlines_in_every_text_rendering() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}
    assert "A\nB" in chat(system="").generate_prompt(message)
    assert "A\nB" in chat(system="").generate_prompt(message, model_format="qwen2.5")


def test_equal_call_time_tools_are_validated_once_and_come_back_fresh() -> None:
    from prompter.tools import ToolSet

    first = ToolSet.from_user([dict(t) for t in TOOLS])
    again = ToolSet.from_user([dict(t) for t in TOOLS])
    assert again is first  # found by JSON text: no second validation, a stable list for format caches
    one, two = first.as_list(), first.as_list()
    assert one == two == TOOLS and one[0] is not two[0]
    one[0]["function"]["name"] = "changed"
    assert first.as_list() == TOOLS
    changed = [{"type": "function", "function": {"name": "other"}}]
    assert ToolSet.from_user(changed).as_list() == changed

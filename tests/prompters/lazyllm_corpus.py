"""A comparison corpus against LazyLLM 1.4.0's prompters: the cases, and LazyLLM's side of running them.

Each case is plain data: which prompter, its constructor arguments, the call's
arguments and the output (``None``: the text for a local model; ``"openai"``:
the chat API body; ``"anthropic"``: LazyLLM's Anthropic body). ``tests/prompters/test_lazyllm_parity.py`` runs our side
and compares it with ``data/lazyllm-1.4.0.json``, which this file writes when
run with a Python that has LazyLLM 1.4.0 installed (``benchmarks/setup_lazyllm.sh``)::

    PYTHONHASHSEED=0 .lazyllm-venv/bin/python tests/prompters/lazyllm_corpus.py > tests/prompters/data/lazyllm-1.4.0.json

It imports nothing from this repository, so it runs in LazyLLM's own venv.

Both sides run with the same configuration: LazyLLM's generic prompter is given
the system prompt and the delimiters of our generic format
(``<|start_system|>``, ``<|end_system|>``, ``<|Human|>:``, ``<|Assistant|>:``),
and with ``tool_tokens`` the neutral tool-call tokens a bound model would set
(without them LazyLLM cannot render tools as text at all).
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import sys
from typing import Any

SYSTEM = "You are a helpful assistant."
DELIMITERS = {"sos": "<|start_system|>", "eos": "<|end_system|>", "soh": "<|Human|>:", "soa": "<|Assistant|>:"}
TOOL_TOKENS = {"tool_start_token": "<tool_call>", "tool_args_token": "<args>", "tool_end_token": "</tool_call>"}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calc",
            "description": "Evaluate an arithmetic expression.",
            "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}, "required": ["expr"]},
        },
    }
]
PAIRS = [["What is 1+1?", "2"], ["And 2+2?", "4"]]
MESSAGES = [
    {"role": "user", "content": "What is 1+1?"},
    {"role": "assistant", "content": "2"},
]
TOOL_ROUND = [
    {"role": "user", "content": "What is 6*7?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": '{"expr": "6*7"}'}}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "42"},
    {"role": "assistant", "content": "It is 42."},
]

STR_INSTRUCTIONS = [
    "You are a calculator.",
    "Compute: {expr}",
    "Answer about {topic} using {context}.",
    'Reply in JSON like {"a": 1}, about {topic}.',
]
DICT_INSTRUCTIONS = [
    {"system": "You are a calculator.", "user": "Compute: {expr}"},
    {"system": "You are a calculator."},
    {"user": "Compute: {expr}"},
    {"system": "Solve {task}.", "user": "Show work for {task}."},
    {"system": "Be kind.", "user": "Reply to: "},
    {"user": "Q: "},
    {"system": "About {topic}.", "user": "Context: {context}\n"},
    {"system": "", "user": "Compute: {expr}"},
]
EXTRA_KEYS: list[Any] = [None, "notes", ["notes", "source"]]


def _slots(instruction: Any, extra_keys: Any) -> list[str]:
    parts = instruction.values() if isinstance(instruction, dict) else [instruction or ""]
    names = [name for part in parts for name in re.findall(r"\{([^\W\d]\w*)\}", part)]
    keys = [extra_keys] if isinstance(extra_keys, str) else list(extra_keys or [])
    return list(dict.fromkeys(names + keys))


def _inputs(prompter: str, instruction: Any, extra_keys: Any) -> list[tuple[str, Any]]:
    """The inputs that make sense for these slots: a str, a dict of every slot, and (chat) one more key."""
    slots = _slots(instruction, extra_keys)
    values = {name: f"<{name} value>" for name in slots}
    inputs: list[tuple[str, Any]] = []
    if len(slots) <= 1 and (prompter == "chat" or slots):
        inputs.append(("str", "What is 2+2?"))
    if slots:
        inputs.append(("slots", values))
    if prompter == "chat":
        inputs.append(("slots+input", {**values, "input": "What is 2+2?"}))
    return inputs


def build_cases() -> list[dict[str, Any]]:
    """Every case, with a readable unique id."""
    cases: list[dict[str, Any]] = []

    def add(case_id: str, **case: Any) -> None:
        case.setdefault("extra_keys", None)
        case.setdefault("ctor_tools", None)
        case.setdefault("history", None)
        case.setdefault("tools", None)
        case.setdefault("label", None)
        case.setdefault("tool_tokens", False)
        case.setdefault("enable_system", True)
        case.setdefault("ctor_history", None)
        cases.append({"id": case_id, **case})

    instructions = [("str", i) for i in STR_INSTRUCTIONS] + [("dict", i) for i in DICT_INSTRUCTIONS]
    for prompter, (kind, instruction), extra_keys in itertools.product(["chat", "alpaca"], instructions, EXTRA_KEYS):
        n = (STR_INSTRUCTIONS if kind == "str" else DICT_INSTRUCTIONS).index(instruction)
        keys = "-".join(extra_keys) if isinstance(extra_keys, list) else (extra_keys or "none")
        outputs = [None, "openai", "anthropic"]
        for (input_kind, value), fmt in itertools.product(_inputs(prompter, instruction, extra_keys), outputs):
            add(f"{prompter}-{kind}{n}-keys:{keys}-{input_kind}-{fmt or 'text'}", prompter=prompter,
                instruction=instruction, extra_keys=extra_keys, input=value, format=fmt)

    # tools (constructor and call), history (pairs, messages, a tool round) on a few instructions
    for prompter, (kind, instruction), fmt in itertools.product(
        ["chat", "alpaca"], [("str", "Compute: {expr}"), ("dict", DICT_INSTRUCTIONS[0]), ("dict", DICT_INSTRUCTIONS[4])],
        [None, "openai"],
    ):
        n = f"{kind}:{instruction if kind == 'str' else DICT_INSTRUCTIONS.index(instruction)}"
        value = {"expr": "6*7"} if "{expr}" in str(instruction) else "6*7"
        for where in ("ctor", "call"):
            tools = {"ctor_tools": TOOLS} if where == "ctor" else {"tools": TOOLS}
            add(f"{prompter}-{n}-tools-{where}-{fmt or 'text'}", prompter=prompter, instruction=instruction,
                input=value, format=fmt, tool_tokens=fmt is None, **tools)
        add(f"{prompter}-{n}-tools-ctor-empty-call-{fmt or 'text'}", prompter=prompter, instruction=instruction,
            input=value, format=fmt, ctor_tools=TOOLS, tools=[], tool_tokens=fmt is None)
        if prompter == "chat":
            for name, history in (("pairs", PAIRS), ("messages", MESSAGES)):
                add(f"{prompter}-{n}-history-{name}-{fmt or 'text'}", prompter=prompter, instruction=instruction,
                    input=value, format=fmt, history=history)
            if fmt == "openai":
                add(f"{prompter}-{n}-history-tool-round-openai", prompter=prompter, instruction=instruction,
                    input=value, format=fmt, history=TOOL_ROUND, tools=TOOLS)
    # no instruction at all, and the tool-result current turn
    for fmt in (None, "openai"):
        add(f"chat-none-str-{fmt or 'text'}", prompter="chat", instruction=None, input="hi", format=fmt)
        add(f"chat-none-pairs-{fmt or 'text'}", prompter="chat", instruction=None, input="hi", format=fmt,
            history=PAIRS)
    add("chat-none-tool-result-input-openai", prompter="chat", instruction=None, format="openai",
        input={"role": "tool", "tool_call_id": "call_1", "content": "42"}, history=TOOL_ROUND[:2], tools=TOOLS)
    add("chat-dict4-tool-result-input-openai", prompter="chat", instruction=DICT_INSTRUCTIONS[4], format="openai",
        input={"role": "tool", "tool_call_id": "call_1", "content": "42"}, history=TOOL_ROUND[:2], tools=TOOLS)

    # odds and ends: constructor history, labels in text, names, empty and unicode input, tuples of extra keys
    for fmt in (None, "openai"):
        tag = fmt or "text"
        add(f"chat-ctor-history-{tag}", prompter="chat", instruction="Be brief.", ctor_history=PAIRS[:1],
            input="hi", history=PAIRS[1:], format=fmt)
        add(f"chat-empty-input-{tag}", prompter="chat", instruction={"system": "S.", "user": "U: "}, input="",
            format=fmt)
        add(f"chat-unicode-{tag}", prompter="chat", instruction={"system": "Réponds {ton}.", "user": "问题：{q}\n"},
            input={"ton": "poliment 😀", "q": "为什么？", "input": "\tok\n"}, format=fmt)
        add(f"alpaca-tuple-keys-{tag}", prompter="alpaca", instruction={"system": "Sum {a}."},
            extra_keys=("b", "c"), input={"a": "1", "b": "2", "c": "3"}, format=fmt)
        add(f"chat-history-named-messages-{tag}", prompter="chat", instruction=None, input="next", format=fmt,
            history=[{"role": "user", "content": "hi", "name": "ann"}, {"role": "assistant", "content": "yo"}])
    add("chat-label-text", prompter="chat", instruction="Compute: {expr}", input={"expr": "1+1"}, label="2",
        format=None)
    add("alpaca-label-text", prompter="alpaca", instruction={"user": "Compute: {expr}"}, input={"expr": "1+1"},
        label="2", format=None)
    for fmt in (None, "openai"):
        add(f"chat-int-fills-the-slot-{fmt or 'text'}", prompter="chat", instruction={"system": "N={n}"}, input=7,
            format=fmt)
    add("deliberate-tools-twice-openai", prompter="chat", instruction="Calc.", ctor_tools=TOOLS, tools=TOOLS[::-1],
        input="6*7", format="openai")
    add("deliberate-anthropic-tools", prompter="chat", instruction="Calc.", tools=TOOLS, input="6*7",
        format="anthropic")
    add("deliberate-tool-call-shape-openai", prompter="chat", instruction=None, input="next", format="openai",
        history=[{"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": {"name": "calc",
                                                                                     "arguments": {"x": 1}}}]},
                 {"role": "tool", "tool_call_id": "c", "content": "1"}])

    # the cases behind each deliberate difference (test_lazyllm_parity.DELIBERATE says why)
    # LazyLLM fills slot after slot, in set order: values naming each other are refilled in any order
    add("deliberate-one-pass-fill-text", prompter="chat", instruction="Use {a} then {b}.",
        input={"a": "{b}", "b": "{a}"}, format=None)
    add("deliberate-one-pass-fill-openai", prompter="chat", instruction={"system": "Use {a}.", "user": "Then {b}."},
        input={"a": "{b}", "b": "{a}"}, format="openai")
    add("deliberate-literal-markers-openai", prompter="chat", instruction={"system": "S {a}", "user": "U"},
        input={"a": "x<!lazyllm-spliter!>y</!lazyllm-spliter!>z"}, format="openai")
    add("deliberate-label-openai", prompter="chat", instruction="Compute: {expr}", input={"expr": "1+1"},
        label="2", format="openai")
    for fmt in (None, "openai"):
        tag = fmt or "text"
        add(f"deliberate-extra-key-only-empty-instruction-{tag}", prompter="chat", instruction=None,
            extra_keys="notes", input={"notes": "N"}, format=fmt)
        add(f"alpaca-extra-keys-no-instruction-{tag}", prompter="alpaca", instruction=None, extra_keys=["a", "b"],
            input={"a": "A", "b": "B"}, format=fmt)
    add("deliberate-extra-keys-empty-instruction-text", prompter="chat", instruction=None, extra_keys="notes",
        input={"notes": "N", "input": "hi"}, format=None)
    add("deliberate-extra-keys-empty-instruction-openai", prompter="chat", instruction="", extra_keys="notes",
        input={"notes": "N", "input": "hi"}, format="openai")
    add("deliberate-fc-prompt-text", prompter="chat", instruction="You are a calculator.", input="6*7",
        ctor_tools=TOOLS, format=None, tool_tokens=True)
    add("deliberate-json-braces-str-input-text", prompter="chat", instruction='JSON like {"a": 1} about {topic}.',
        input="cats", format=None)
    add("deliberate-digit-slot-text", prompter="chat", instruction="Item {0}: {topic}", input={"topic": "t", "0": "z"},
        format=None)
    add("deliberate-int-input-openai", prompter="chat", instruction=None, input=7, format="openai")
    for fmt in (None, "openai"):
        add(f"deliberate-enable-system-false-{fmt or 'text'}", prompter="chat", enable_system=False, format=fmt,
            instruction={"system": "Be kind.", "user": "Reply to: "}, input="hi")
    add("deliberate-tool-round-text", prompter="chat", instruction=None, input="thanks", history=TOOL_ROUND,
        format=None, tool_tokens=True)
    return cases


# ---- LazyLLM's side (run in LazyLLM's venv) -----------------------------------------------------


def run_lazyllm(case: dict[str, Any]) -> dict[str, Any]:
    """``{"output": ...}`` or ``{"error": "ExceptionName"}`` for one case, with LazyLLM 1.4.0."""
    from lazyllm.components.prompter import AlpacaPrompter, ChatPrompter

    case = copy.deepcopy(case)  # LazyLLM writes into some of what it is given
    try:
        if case["prompter"] == "chat":
            p = ChatPrompter(
                case["instruction"], case["extra_keys"], tools=case["ctor_tools"], history=case["ctor_history"],
                enable_system=case["enable_system"],
            )
        else:
            p = AlpacaPrompter(case["instruction"], case["extra_keys"], tools=case["ctor_tools"])
        p._set_model_configs(system=SYSTEM, **DELIMITERS, **(TOOL_TOKENS if case["tool_tokens"] else {}))
        out = p.generate_prompt(
            case["input"], history=case["history"], tools=case["tools"], label=case["label"], format=case["format"]
        )
        return {"output": json.loads(json.dumps(out, ensure_ascii=False))}
    except Exception as exc:  # noqa: BLE001 - LazyLLM's failures are part of the record
        return {"error": type(exc).__name__}


def main() -> int:
    import lazyllm

    results = {case["id"]: run_lazyllm(case) for case in build_cases()}
    json.dump({"lazyllm": lazyllm.__version__, "results": results}, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

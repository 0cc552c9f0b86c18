"""LazyLLM 1.4.0 parity: every corpus case outside the deliberate list renders exactly as LazyLLM renders it.

LazyLLM's outputs are recorded in ``data/lazyllm-1.4.0.json`` (see
``lazyllm_corpus.py``, which also re-records them in a test when
``.lazyllm-venv`` exists). Where LazyLLM raises (an ``AssertionError`` on
malformed input, a ``KeyError`` on braces), ours returns a result or raises a
``PromptError``, never anything else. Each deliberate difference is listed in
:data:`DELIBERATE` with its reason, and its case must still differ, so the
list cannot go stale.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lazyllm_corpus import TOOL_ROUND, build_cases

from prompter import AlpacaPrompter, ChatPrompter
from prompter.errors import PromptError

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("data") / "lazyllm-1.4.0.json"
LAZYLLM_PYTHON = ROOT / ".lazyllm-venv" / "bin" / "python"
CASES = build_cases()
RECORDED: dict[str, Any] = json.loads(RECORD.read_text(encoding="utf-8"))["results"]

#: Why a case renders differently from LazyLLM on purpose (the migration page lists these).
DELIBERATE = {
    "tools-as-json": "text output with tools: tools are printed with json.dumps as the contract says (LazyLLM "
    "prints them with json5, unquoted keys), and with a str instruction LazyLLM's function-call preamble, "
    "which needs a model's tool tokens, is not added",
    "one-pass-fill": "slots are filled in one pass: a value holding {other} stays literal (LazyLLM refills it, "
    "in set order)",
    "literal-markers": "LazyLLM's <!lazyllm-spliter!> markers in a slot value are text, not a split point",
    "label-message": "a label is the assistant's answer in dict output too (LazyLLM drops it there)",
    "identifier-slots": "only {identifier} is a slot; {0} is literal text (LazyLLM's \\w+ takes it as a slot)",
    "enable-system": "enable_system=False leaves out the system prompt only, in both outputs (LazyLLM ignores it "
    "in text and drops the instruction with it in dict output)",
    "extra-keys-kept": "extra keys are kept with an empty instruction: their block goes in the system prompt "
    "(LazyLLM drops the block and sends the one value as the user's message)",
    "tools-locked": "tools given to the constructor lock the tool set: call-time tools are a ToolsError "
    "(LazyLLM lets the call's tools win)",
    "anthropic-tools": "format='anthropic' sends tools in Anthropic's shape (name, description, input_schema), "
    "as its API requires (LazyLLM sends OpenAI's shape)",
    "anthropic-empty-turn": "format='anthropic' refuses an empty user message with a typed error naming the "
    "remedy, as Anthropic's API rejects empty text (LazyLLM sends it)",
    "tool-call-shape": "tool calls in dict output take OpenAI's shape: type 'function' added, arguments as a JSON "
    "string, as the API requires (LazyLLM passes the caller's dict through)",
    "tool-round-text": "tool calls in text history render as JSON and tool results as a user/tool turn "
    "(LazyLLM prints None for the null content and the arguments as a quoted JSON string)",
}
_BY_ID = {
    "deliberate-one-pass-fill-text": "one-pass-fill",
    "deliberate-one-pass-fill-openai": "one-pass-fill",
    "deliberate-literal-markers-openai": "literal-markers",
    "deliberate-label-openai": "label-message",
    "deliberate-digit-slot-text": "identifier-slots",
    "deliberate-tool-round-text": "tool-round-text",
    "deliberate-tool-call-shape-openai": "tool-call-shape",
    "deliberate-tools-twice-openai": "tools-locked",
    "deliberate-anthropic-tools": "anthropic-tools",
    "deliberate-extra-key-only-empty-instruction-text": "extra-keys-kept",
    "deliberate-extra-key-only-empty-instruction-openai": "extra-keys-kept",
    "deliberate-enable-system-false-text": "enable-system",
    "deliberate-enable-system-false-openai": "enable-system",
}


def deliberate(case: dict[str, Any]) -> str | None:
    """The key in :data:`DELIBERATE` of why ``case`` differs from LazyLLM, or None when it must be equal."""
    if case["id"] in _BY_ID:
        return _BY_ID[case["id"]]
    if case["format"] is None and (case["ctor_tools"] or case["tools"]):
        return "tools-as-json"
    lazyllm = RECORDED[case["id"]].get("output")
    if case["format"] == "anthropic" and lazyllm and any(m["content"] == "" for m in lazyllm["messages"]):
        return "anthropic-empty-turn"
    return None


def ours(case: dict[str, Any]) -> Any:
    """Our output for a corpus case, JSON-normalised like LazyLLM's record."""
    case = copy.deepcopy(case)
    if case["prompter"] == "chat":
        p: Any = ChatPrompter(
            case["instruction"], case["extra_keys"], tools=case["ctor_tools"], history=case["ctor_history"],
            enable_system=case["enable_system"],
        )
    else:
        p = AlpacaPrompter(case["instruction"], case["extra_keys"], tools=case["ctor_tools"])
    out = p.generate_prompt(
        case["input"], history=case["history"], tools=case["tools"], label=case["label"], format=case["format"]
    )
    return json.loads(json.dumps(out, ensure_ascii=False))


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_corpus_case_matches_lazyllm_or_is_a_listed_difference(case: dict[str, Any]) -> None:
    recorded = RECORDED[case["id"]]
    if "error" in recorded:  # LazyLLM cannot render it: a result or a typed error, nothing else
        try:
            ours(case)
        except PromptError:
            pass
        return
    reason = deliberate(case)
    if reason is None:
        assert ours(case) == recorded["output"]
    else:
        try:
            assert ours(case) != recorded["output"], f"{case['id']} now equals LazyLLM: drop it from DELIBERATE"
        except PromptError:
            pass


def test_corpus_figure() -> None:
    """The parity figure the migration page quotes, so a change to it is seen."""
    compared = [case for case in CASES if "error" not in RECORDED[case["id"]]]
    equal = [case for case in compared if deliberate(case) is None]
    assert (len(CASES), len(compared), len(equal)) == (463, 445, 390)
    assert {deliberate(case) for case in compared} - {None} == set(DELIBERATE)


@pytest.mark.skipif(not LAZYLLM_PYTHON.exists(), reason="LazyLLM venv absent (benchmarks/setup_lazyllm.sh)")
def test_the_record_is_what_lazyllm_renders_today() -> None:
    proc = subprocess.run(
        [str(LAZYLLM_PYTHON), str(Path(__file__).with_name("lazyllm_corpus.py"))],
        capture_output=True, text=True, timeout=120, check=True, cwd="/", env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert json.loads(proc.stdout)["results"] == RECORDED


# ---- the examples, spelled out ----------------------------------------------------------------

SYS = "You are a helpful assistant."
PRE = (
    "Below is an instruction that describes a task, paired with extra messages such as input that provides "
    "further context if possible. Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n"
)


@pytest.mark.parametrize("fmt", [None, "openai"])
def test_dict_instruction_system_part_carries_no_str_instruction_newlines(fmt: Any) -> None:
    p = ChatPrompter({"system": "You are a calculator.", "user": "Compute: {expr}"})
    out = p.generate_prompt({"expr": "6*7"}, format=fmt)
    if fmt is None:
        assert out == f"<|start_system|>{SYS}You are a calculator.<|end_system|>\n\n\n<|Human|>:\nCompute: 6*7\n<|Assistant|>:\n"
    else:
        assert out["messages"][0] == {"role": "system", "content": f"{SYS}\nYou are a calculator."}


def test_dict_instruction_extra_keys_follow_the_user_part() -> None:
    p = ChatPrompter({"system": "S.", "user": "Q: {q}"}, extra_keys="ctx")
    body = p.generate_prompt({"q": "why", "ctx": "C", "input": "!"}, format="openai")
    extra = "Here are some extra messages you can referred to:\n\n### ctx:\nC\n\n"
    assert body["messages"] == [{"role": "system", "content": f"{SYS}\nS."}, {"role": "user", "content": f"Q: why{extra}!"}]


@pytest.mark.parametrize("fmt", [None, "openai"])
def test_alpaca_user_only_dict_instruction_keeps_the_preamble(fmt: Any) -> None:
    p = AlpacaPrompter({"user": "Compute: {expr}"})
    out = p.generate_prompt({"expr": "6*7"}, format=fmt)
    if fmt is None:
        assert out == f"{SYS}\n{PRE}\n\nCompute: 6*7### Response:\n"
    else:
        assert out["messages"] == [{"role": "system", "content": f"{SYS}\n{PRE}"}, {"role": "user", "content": "Compute: 6*7"}]


TOOLS = [{"type": "function", "function": {"name": "calc"}}]


@pytest.mark.parametrize("fmt", [None, "openai"])
def test_empty_call_tools_on_locked_tools_mean_no_override(fmt: Any) -> None:
    p = ChatPrompter("Calc.", tools=TOOLS)
    assert p.generate_prompt("6*7", tools=[], format=fmt) == p.generate_prompt("6*7", format=fmt)


def test_content_none_of_a_tool_calling_assistant_stays_none_in_the_openai_dialect() -> None:
    body = ChatPrompter(system="").generate_prompt("thanks", history=TOOL_ROUND, format="openai")
    assert body["messages"][1]["content"] is None
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == "calc"
    assert TOOL_ROUND[1]["content"] is None

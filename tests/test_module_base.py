"""ModuleBase: attaching prompters, sharing a backend, calling and streaming, through a tiny subclass."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import modules
from modules import ModuleBase, ModuleConfigError
from modules.base import ChatStream, Completion, StreamDelta
from prompter import AlpacaPrompter, ChatPrompter, EmptyPrompter

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


class Recorder(ModuleBase[dict]):
    """Builds the OpenAI body and answers from a script; remembers the requests it completed."""

    def __init__(self, answers: list[Completion] | None = None) -> None:
        self.backend = {"requests": [], "answers": list(answers or [])}

    def _build_request(self, input, history, tools, generation) -> dict:
        return {**self.prompter.generate_prompt(input, history=history, tools=tools, format="openai"), **generation}

    def _complete(self, request: dict) -> Completion:
        self.backend["requests"].append(request)
        answers = self.backend["answers"]
        return answers.pop(0) if answers else Completion(text=request["messages"][-1]["content"])


class Streamer(Recorder):
    def _stream(self, request: dict) -> Iterator[StreamDelta]:
        self.backend["requests"].append(request)
        yield StreamDelta(text="a")
        yield StreamDelta(text="")
        yield StreamDelta(text="b", tool_calls=(CALL,), finish_reason="tool_calls")


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        pytest.param("You are terse.", ChatPrompter, id="str"),
        pytest.param({"system": "S", "user": "U {input}"}, ChatPrompter, id="dict"),
        pytest.param(None, EmptyPrompter, id="none"),
    ],
)
def test_prompt_builds_a_prompter_and_returns_the_module(prompt, kind):
    m = Recorder()
    assert m.prompt(prompt) is m
    assert isinstance(m.prompter, kind)


def test_a_module_without_prompt_passes_input_through():
    m = Recorder()
    assert isinstance(m.prompter, EmptyPrompter)
    assert m("hello") == "hello"
    assert m.backend["requests"][0]["messages"] == [{"role": "user", "content": "hello"}]


def test_a_prompter_is_attached_as_is_and_never_changed():
    p = AlpacaPrompter("Translate {input}.", extra_keys=["style"])
    inputs = [{"input": "bonjour", "style": "formal"}, {"input": "salut", "style": "casual"}]
    for value in inputs:  # the prompter's own use first: it may fill its own caches
        p.generate_prompt(value, format="openai")
    before = dict(vars(p))
    m = Recorder().prompt(p)
    assert m.prompter is p
    m(inputs[0], temperature=0)
    m.share(prompt=p)(inputs[1])
    list(Streamer().prompt(p).stream(inputs[0]))
    m.build_request(inputs[1])
    # No attribute added, removed or rebound by attaching or calling through modules.
    assert vars(p).keys() == before.keys()
    assert all(vars(p)[k] is v for k, v in before.items())


def test_prompt_rejects_what_is_not_a_prompter():
    with pytest.raises(ModuleConfigError, match="got int"):
        Recorder().prompt(42)


def test_share_gives_a_second_handle_on_the_same_backend():
    m = Recorder().prompt("You are A.")
    m2 = m.share(prompt="You are B.")
    m("x")
    m2("y")
    assert m2.backend is m.backend and len(m.backend["requests"]) == 2
    assert "You are A." in m.backend["requests"][0]["messages"][0]["content"]
    assert "You are B." in m.backend["requests"][1]["messages"][0]["content"]
    # share() without a prompt keeps the prompter, as LazyLLM's share() does; .prompt(None) clears it
    assert m.share().prompter is m.prompter
    assert isinstance(m.share().prompt(None).prompter, EmptyPrompter) and m.prompter is not None
    assert "You are A." in m.prompter.generate_prompt("z", format="openai")["messages"][0]["content"]


def test_the_call_passes_history_tools_and_generation_options():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    m = Recorder().prompt(ChatPrompter("Sys"))
    m("q2", history=[["q1", "a1"]], tools=tools, temperature=0.5, top_p=None)
    req = m.backend["requests"][0]
    assert req["tools"] == tools and req["temperature"] == 0.5
    assert "top_p" not in req  # None means "not set"
    assert [msg["role"] for msg in req["messages"]] == ["system", "user", "assistant", "user"]


@pytest.mark.parametrize("option", ["messages", "stream"])
def test_options_the_module_sets_are_refused(option):
    with pytest.raises(ModuleConfigError, match=option):
        Recorder()("x", **{option: True})


def test_tool_calls_come_back_as_the_assistant_message():
    m = Recorder([Completion(text="", tool_calls=(CALL,), finish_reason="tool_calls")])
    assert m("x") == {"role": "assistant", "content": None, "tool_calls": [CALL]}


def test_the_answer_goes_through_the_prompters_get_response():
    class Shouting(EmptyPrompter):
        def get_response(self, output: str, input: Any = None) -> str:
            return output.upper()

    assert Recorder([Completion(text="quiet")]).prompt(Shouting())("x") == "QUIET"


def test_stream_yields_text_pieces_and_collects_the_rest():
    s = Streamer().stream("x")
    assert isinstance(s, ChatStream)
    assert list(s) == ["a", "b"]
    assert (s.text, s.finish_reason, s.tool_calls) == ("ab", "tool_calls", [CALL])
    assert s.message == {"role": "assistant", "content": "ab", "tool_calls": [CALL]}


def test_default_stream_is_the_whole_completion_in_one_piece():
    s = Recorder([Completion(text="whole", finish_reason="stop")]).stream("x")
    assert list(s) == ["whole"] and s.finish_reason == "stop"
    assert s.message == {"role": "assistant", "content": "whole"}


def test_closing_a_stream_early_closes_the_backend_iterator():
    closed = []

    class Closing(Recorder):
        def _stream(self, request):
            try:
                yield StreamDelta(text="1")
                yield StreamDelta(text="2")
            finally:
                closed.append(True)

    with Closing().stream("x") as s:
        assert next(s) == "1"
    assert closed == [True]


def test_build_request_is_pure_and_matches_what_is_sent():
    m = Recorder().prompt(ChatPrompter("Sys"))
    assert m.build_request("q", temperature=0) == m.build_request("q", temperature=0)
    m("q", temperature=0)
    assert m.backend["requests"] == [m.build_request("q", temperature=0)]


def test_a_subclass_must_implement_the_hooks():
    with pytest.raises(NotImplementedError, match="_build_request"):
        ModuleBase()("x")


def test_public_names_are_exported():
    for name in set(modules.__all__) - {"TrainableModule"}:  # TrainableModule is tested with its module
        assert getattr(modules, name).__name__ == name
    assert issubclass(modules.OnlineChatModule, ModuleBase)


def test_import_modules_imports_neither_requests_nor_torch():
    code = "import sys, modules; print('requests' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# -- call keywords: LazyLLM's history alias, and nothing unknown ever sent ------------------------------


def test_llm_chat_history_is_lazyllms_name_for_history():
    m = Recorder().prompt(ChatPrompter("Sys"))
    m("q2", llm_chat_history=[["q1", "a1"]])
    req = m.backend["requests"][0]
    assert "llm_chat_history" not in req
    assert [msg["content"] for msg in req["messages"]] == ["You are a helpful assistant.\nSys\n\n", "q1", "a1", "q2"]
    s = Streamer().prompt(ChatPrompter("Sys"))
    list(s.stream("q2", llm_chat_history=[["q1", "a1"]]))
    assert [msg["content"] for msg in s.backend["requests"][0]["messages"]][1:3] == ["q1", "a1"]


def test_history_and_llm_chat_history_together_are_refused():
    with pytest.raises(ModuleConfigError, match="history= or llm_chat_history="):
        Recorder()("x", history=[["a", "b"]], llm_chat_history=[["c", "d"]])


@pytest.mark.parametrize(
    ("keyword", "remedy"),
    [
        pytest.param("temprature", "temperature", id="typo"),
        pytest.param("lazyllm_files", "content parts", id="lazyllm-files"),
        pytest.param("stream_output", r"\.stream\(\)", id="lazyllm-stream-output"),
        pytest.param("chat_history", "history=", id="other-history-name"),
        pytest.param("max_new_tokns", "max_tokens", id="another-typo"),
    ],
)
def test_an_unknown_call_keyword_is_an_error_never_sent(keyword, remedy):
    m = Recorder()
    with pytest.raises(ModuleConfigError, match=remedy) as caught:
        m("x", **{keyword: 1})
    assert keyword in str(caught.value)
    with pytest.raises(ModuleConfigError, match=keyword):
        m.stream("x", **{keyword: 1})
    with pytest.raises(ModuleConfigError, match=keyword):
        m.build_request("x", **{keyword: 1})
    assert m.backend["requests"] == []


def test_a_subclass_declares_the_generation_options_it_knows():
    class Narrow(Recorder):
        generation_options = frozenset({"temperature"})

    Narrow()("x", temperature=0.1)
    with pytest.raises(ModuleConfigError, match="top_p"):
        Narrow()("x", top_p=0.5)

"""OnlineChatModule's constructor: a wrong type or a LazyLLM form is a typed error naming prompter's form."""

from __future__ import annotations

import pytest

from modules import ModuleConfigError, OnlineChatModule

BASE = "http://127.0.0.1:9/v1"  # never contacted: every case fails, or is checked, before a request


@pytest.mark.parametrize("model", [5, 1.5, ["gpt-4o-mini"], b"gpt-4o-mini", True], ids=repr)
def test_a_model_that_is_not_a_str_is_refused_before_it_reaches_the_wire(model: object) -> None:
    with pytest.raises(ModuleConfigError, match=r"model: expected the model name as a str, got \w+"):
        OnlineChatModule(base_url=BASE, model=model)  # type: ignore[arg-type]


def test_a_str_subclass_model_is_still_a_model() -> None:
    class Name(str):
        pass

    m = OnlineChatModule(base_url=BASE, model=Name("m"))
    assert m.build_request("hi").body["model"] == "m"


def test_lazyllm_positional_order_model_then_source_names_prompters_order() -> None:
    with pytest.raises(ModuleConfigError) as info:
        OnlineChatModule("gpt-4o-mini", "openai", api_key="k")
    message = str(info.value)
    assert "unknown source 'gpt-4o-mini'" in message
    assert "(source, model)" in message and "OnlineChatModule(source='openai', model='gpt-4o-mini')" in message


def test_an_unknown_source_whose_model_is_no_source_keeps_the_plain_message() -> None:
    with pytest.raises(ModuleConfigError, match="unknown source 'nope': use one of") as info:
        OnlineChatModule("nope", "also-nope", api_key="k")
    assert "LazyLLM" not in str(info.value)


def test_lazyllm_url_keyword_is_a_typed_error_naming_base_url() -> None:
    with pytest.raises(ModuleConfigError, match=r"url=: .*base_url="):
        OnlineChatModule(source="openai", url=BASE, api_key="k")


def test_lazyllm_return_trace_true_is_a_typed_error_saying_it_is_not_supported() -> None:
    with pytest.raises(ModuleConfigError, match="return_trace: not supported"):
        OnlineChatModule(source="openai", base_url=BASE, api_key="k", return_trace=True)


def test_lazyllm_return_trace_false_asks_for_what_the_module_does() -> None:
    m = OnlineChatModule(source="openai", base_url=BASE, api_key="k", return_trace=False)
    assert "return_trace" not in m.build_request("hi").body


def test_an_unknown_keyword_is_still_an_error() -> None:
    with pytest.raises(TypeError, match="skip_auth"):
        OnlineChatModule(source="openai", base_url=BASE, api_key="k", skip_auth=True)  # type: ignore[call-arg]

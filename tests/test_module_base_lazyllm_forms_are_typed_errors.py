"""LazyLLM's module forms prompter does not take are a ModuleConfigError naming the replacement (issue 10).

Before: ``.prompt(ChatPrompter)`` (the class) was accepted and the first call failed with a bare
AttributeError; ``share(format=/stream=/history=)`` was a bare TypeError; ``OnlineChatModule(...).start()``
and ``.forward()`` were bare AttributeErrors.
"""

from __future__ import annotations

from typing import Any

import pytest

from modules import OnlineChatModule
from modules.errors import ModuleConfigError
from prompter import AlpacaPrompter, ChatPrompter


def _module() -> OnlineChatModule:
    return OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-demo-not-real")


@pytest.mark.parametrize("cls", [ChatPrompter, AlpacaPrompter], ids=["chat", "alpaca"])
def test_a_prompter_class_is_refused_at_once_naming_the_instance(cls: type) -> None:
    m = _module()
    with pytest.raises(ModuleConfigError, match=rf"the class {cls.__name__}.*\.prompt\({cls.__name__}\(\.\.\.\)\)"):
        m.prompt(cls)
    with pytest.raises(ModuleConfigError, match="prompter instance"):
        m.share(cls)


@pytest.mark.parametrize(
    ("keyword", "remedy"),
    [("format", "get_response"), ("stream", r"m\.stream\(input\)"), ("history", r"history=\[")],
)
@pytest.mark.parametrize("value", [None, True, "json"], ids=["none", "true", "str"])
def test_lazyllm_share_keywords_name_the_replacement(keyword: str, remedy: str, value: Any) -> None:
    m = _module()
    with pytest.raises(ModuleConfigError, match=rf"share\({keyword}=\.\.\.\).*{remedy}"):
        m.share(ChatPrompter("Be brief."), **{keyword: value})


def test_share_with_a_prompter_still_works() -> None:
    m = _module()
    twin = m.share(ChatPrompter("Be brief."))
    assert twin is not m and isinstance(twin.prompter, ChatPrompter)
    assert m.share(prompt="Be brief.").prompter is not m.prompter


def test_start_on_an_online_module_says_there_is_nothing_to_start() -> None:
    with pytest.raises(ModuleConfigError, match=r"start\(\).*call the module, m\(input\)"):
        _module().prompt(ChatPrompter("Be brief.")).start()


def test_forward_names_the_call() -> None:
    with pytest.raises(ModuleConfigError, match=r"forward\(\.\.\.\).*m\(input"):
        _module().forward("hi")

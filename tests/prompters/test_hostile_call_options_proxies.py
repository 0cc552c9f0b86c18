"""The multi-agent call options and the constructor's flags never run the caller's code.

``strategy``, ``history_header`` and ``as_agent`` were compared with ``==`` (a str subclass's
``__eq__``) and shown with ``repr()`` (an object's ``__repr__``), so a hostile value escaped as its
own exception. ``show``, ``enable_system``, ``system``, ``format`` and ``model_format`` were checked
with ``isinstance``, which reads ``__class__``: a lazy proxy whose every attribute raises (an unbound
``werkzeug.local.LocalProxy``, say) escaped the same way. Each now ends in a result or a PromptError,
and a str subclass holding a valid value renders exactly as the plain str does.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import AlpacaPrompter, ChatPrompter, EmptyPrompter
from prompter.errors import PromptError

FORMATS = [None, "openai", "anthropic", "gemini", "dashscope"]
HISTORY = [{"role": "user", "content": "q", "name": "bob"}, {"role": "assistant", "content": "a", "name": "al"}]


class Boom(Exception):
    """Never a PromptError."""


def _boom(*args: object, **kwargs: object) -> Any:
    raise Boom("hostile")


class Loud:
    """An object whose repr, str and comparisons raise."""

    __repr__ = __str__ = __eq__ = __format__ = __bool__ = _boom
    __hash__ = object.__hash__


class EqRaisingStr(str):
    """A str whose comparisons and repr raise; its hash is the plain str's, so a set lookup reaches ``__eq__``."""

    __eq__ = __ne__ = __repr__ = __str__ = __len__ = __bool__ = __format__ = _boom

    def __hash__(self) -> int:
        return str.__hash__(self)


class Proxy:
    """A lazy proxy with nothing behind it: every attribute, ``__class__`` included, raises."""

    def __getattribute__(self, name: str) -> Any:
        raise Boom(name)


def _result_or_prompt_error(call: Any) -> Any:
    try:
        return call()
    except PromptError as error:
        return type(error)


VALUES = {  # made inside the test: pytest itself reads __class__ of parameter values
    "loud-object": Loud,
    "proxy": Proxy,
    **{f"eq-raising-str-{v or 'empty'}": (lambda v=v: EqRaisingStr(v)) for v in ("chat", "multi_agent", "auto", "al", "x", "")},
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("option", ["strategy", "history_header", "as_agent"])
@pytest.mark.parametrize("value", list(VALUES))
def test_hostile_multi_agent_options_end_in_a_result_or_a_prompt_error(option: str, value: str, fmt: str | None) -> None:
    p = ChatPrompter("x", system="S")
    hostile = VALUES[value]()
    got = _result_or_prompt_error(lambda: p.generate_prompt("hi", history=HISTORY, format=fmt, **{option: hostile}))
    if type(hostile) is EqRaisingStr:  # a str subclass holding a value renders as that plain str does
        plain = str.__str__(hostile)
        assert got == _result_or_prompt_error(lambda: p.generate_prompt("hi", history=HISTORY, format=fmt, **{option: plain}))


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: ChatPrompter("x", show=Proxy()), id="show"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("x", enable_system=Proxy()), id="enable-system"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("x", system=Proxy()), id="system"),  # type: ignore[arg-type]
        pytest.param(lambda: AlpacaPrompter("x", show=Proxy()), id="alpaca-show"),  # type: ignore[arg-type]
        pytest.param(lambda: EmptyPrompter(show=Proxy()), id="empty-show"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("x").generate_prompt("hi", format=Proxy()), id="format"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("x").generate_prompt("hi", return_dict=Proxy()), id="return-dict"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("x").generate_prompt("hi", show=Proxy()), id="show-at-call"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("x").generate_prompt("hi", model_format=Proxy()), id="model-format"),  # type: ignore[arg-type]
    ],
)
def test_a_proxy_whose_class_attribute_raises_is_a_prompt_error(make: Any) -> None:
    with pytest.raises(PromptError):
        make()

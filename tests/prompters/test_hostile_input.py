"""Whatever a caller passes, a prompter returns a result or raises a PromptError, and never touches it.

Hostile input is anything that makes Python itself fail while reading it: ints
past the int-to-str digit limit, nesting past the recursion limit, containers
that contain themselves, objects whose ``__str__`` / ``__repr__`` /
``__format__`` / ``__eq__`` / ``__hash__`` / ``__bool__`` raise, str and int
subclasses that override them, dict subclasses whose ``keys`` / ``items`` /
``get`` / ``__iter__`` / ``__getitem__`` raise, bytes, NaN, huge strings.
The property is stated over generated whole calls: input, slot values,
history, tools, label, extra keys and the constructor's own arguments, for
every prompter and every output format.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter import AlpacaPrompter, ChatPrompter, EmptyPrompter
from prompter.errors import PromptError

EXAMPLES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = [None, "text", "openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu"]


class Boom(Exception):
    """What a hostile object raises: never a PromptError, so it cannot pass for one."""


def _boom(*args: object, **kwargs: object) -> Any:
    raise Boom("hostile")


class RaisingObject:
    """Every dunder a library might call on a value raises (its hash works, so it can be a key)."""

    __str__ = __repr__ = __format__ = __eq__ = __bool__ = __len__ = __iter__ = _boom

    def __hash__(self) -> int:
        return id(self) >> 4


class UnhashableObject:
    __hash__ = __eq__ = __str__ = __repr__ = _boom  # type: ignore[assignment]


class HostileStr(str):
    """A str whose every override raises; only its stored characters are safe to read."""

    __str__ = __repr__ = __format__ = __eq__ = __ne__ = __bool__ = __len__ = __iter__ = _boom
    __add__ = __radd__ = __contains__ = __getitem__ = startswith = strip = encode = _boom

    def __hash__(self) -> int:
        return hash(str.__str__(self))


class HashCollidingKey:
    """Hashes like the slot name ``a`` and raises when compared: a dict lookup for ``a`` reaches its ``__eq__``."""

    __eq__ = __str__ = __repr__ = _boom

    def __hash__(self) -> int:
        return hash("a")


class HostileInt(int):
    __str__ = __repr__ = __format__ = __index__ = __int__ = __bool__ = __eq__ = _boom
    __hash__ = int.__hash__


class HostileFloat(float):
    __str__ = __repr__ = __format__ = __float__ = __bool__ = __eq__ = _boom
    __hash__ = float.__hash__


class OddDict(dict):  # type: ignore[type-arg]
    """A dict subclass whose reading methods raise."""

    keys = items = values = get = __iter__ = __getitem__ = __contains__ = __len__ = __bool__ = _boom


class LyingDict(dict):  # type: ignore[type-arg]
    """A dict subclass whose views disagree with its contents."""

    def keys(self) -> Any:
        return ["role", "content", "nope"]

    def items(self) -> Any:
        return [("role", object()), (object(), "x")]

    def get(self, key: Any, default: Any = None) -> Any:
        return object()


class LyingMapping(Mapping):  # type: ignore[type-arg]
    """A Mapping that claims keys it cannot produce."""

    def __getitem__(self, key: Any) -> Any:
        raise Boom("getitem")

    def __iter__(self) -> Iterator[Any]:
        yield "role"
        raise Boom("iter")

    def __len__(self) -> int:
        return 2


class OddList(list):  # type: ignore[type-arg]
    __iter__ = __len__ = __getitem__ = __bool__ = __eq__ = _boom


def _self_containing_list() -> list[Any]:
    loop: list[Any] = ["x"]
    loop.append(loop)
    return loop


def _self_containing_dict() -> dict[str, Any]:
    loop: dict[str, Any] = {"role": "user"}
    loop["content"] = loop
    return loop


def _deep(levels: int, as_dict: bool) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value} if as_dict else [value]
    return value


HOSTILE = st.one_of(
    st.builds(lambda: 10**5000),
    st.builds(lambda: -(10**5000)),
    st.sampled_from([float("nan"), float("inf"), -0.0]),
    st.sampled_from([b"bytes", bytearray(b"ba"), memoryview(b"mv")]),
    st.builds(RaisingObject),
    st.builds(UnhashableObject),
    st.builds(HashCollidingKey),
    st.sampled_from(["role", "content", "a", "input", "x", ""]).map(HostileStr),
    st.integers().map(HostileInt),
    st.floats().map(HostileFloat),
    st.builds(lambda: OddDict(role="user", content="x", a="x")),
    st.builds(lambda: LyingDict(role="user", content="x")),
    st.builds(LyingMapping),
    st.builds(lambda: OddList(["q", "a"])),
    st.builds(_self_containing_list),
    st.builds(_self_containing_dict),
    st.sampled_from([150, 5_000]).flatmap(lambda n: st.booleans().map(lambda d: _deep(n, d))),
    st.builds(lambda: "x" * 1_000_000),
    st.sampled_from([{"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f"}}]}]),
)
PLAIN = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
    st.sampled_from(["user", "assistant", "tool", "system", "role", "content", "a", "input", "function", "name"]),
)
LEAF = st.one_of(PLAIN, HOSTILE)
KEY = st.one_of(
    st.sampled_from(["role", "content", "a", "b", "input", "ctx", "type", "function", "name", "parameters",
                     "tool_calls", "arguments", "id", "tool_call_id", "text", "image_url", "url"]),
    st.text(max_size=4),
    st.integers(),
    st.builds(RaisingObject),
    st.builds(HashCollidingKey),
    st.sampled_from(["role", "content", "a", "input"]).map(HostileStr),
)


def _dict_of(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A dict of the pairs whose keys could be stored (a key whose ``__eq__`` raises on a collision is dropped)."""
    built: dict[Any, Any] = {}
    for key, value in pairs:
        try:
            built[key] = value
        except Boom:
            pass
    return built


def _dicts(values: st.SearchStrategy[Any], max_size: int) -> st.SearchStrategy[dict[Any, Any]]:
    return st.lists(st.tuples(KEY, values), max_size=max_size).map(_dict_of)


VALUE = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        _dicts(inner, 4),
        _dicts(inner, 3).map(OddDict),
    ),
    max_leaves=12,
)
TOOL = st.fixed_dictionaries(
    {"type": st.just("function"), "function": st.fixed_dictionaries({"name": st.one_of(PLAIN, HOSTILE), "parameters": VALUE})}
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.one_of(st.sampled_from(["user", "assistant", "tool", "system"]), HOSTILE), "content": VALUE},
    optional={"tool_calls": VALUE, "tool_call_id": VALUE, "name": VALUE},
)
INSTRUCTION = st.one_of(
    st.sampled_from([None, "Plain.", "Fill {a}.", "{a} and {b}", {"system": "S {a}", "user": "U {b}"}, {"user": "Q: "}]),
    VALUE,
    st.fixed_dictionaries({"system": VALUE}, optional={"user": VALUE}),
)
PROMPTERS = {
    "chat": lambda i, k, t: ChatPrompter(i, k, tools=t),
    "chat-no-system": lambda i, k, t: ChatPrompter(i, k, tools=t, system="", enable_system=False),
    "alpaca": lambda i, k, t: AlpacaPrompter(i, k, tools=t),
    "empty": lambda i, k, t: EmptyPrompter(tools=t),
}


def snapshot(value: Any) -> Any:
    """What a caller could see changed: every container's identity, type and items, by identity, read without
    calling any of the objects' own methods (they may raise), iteratively (they may be deep or contain
    themselves)."""
    seen: dict[int, Any] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        if isinstance(item, dict):
            pairs = list(dict.items(item))
            seen[id(item)] = (type(item), [(id(k), id(v)) for k, v in pairs])
            stack += [v for _, v in pairs] + [k for k, _ in pairs]
        elif isinstance(item, list):
            items = list(list.__iter__(item))
            seen[id(item)] = (type(item), [id(v) for v in items])
            stack += items
        elif isinstance(item, tuple):
            items = list(tuple.__iter__(item))
            seen[id(item)] = (type(item), [id(v) for v in items])
            stack += items
        elif isinstance(item, bytearray):
            seen[id(item)] = (type(item), bytes(item))
        else:
            seen[id(item)] = type(item)
    return seen


def _call(which: str, instruction: Any, extra_keys: Any, ctor_tools: Any, call: dict[str, Any]) -> None:
    try:
        prompter = PROMPTERS[which](instruction, extra_keys, ctor_tools)
    except PromptError:
        return
    try:
        prompter.generate_prompt(**call)
    except PromptError:
        pass


CALLS = st.fixed_dictionaries(
    {
        "input": st.one_of(
            VALUE, MESSAGE, st.lists(MESSAGE, max_size=2),
            st.dictionaries(st.sampled_from(["a", "b", "input", "ctx"]), VALUE, max_size=4),
            _dicts(VALUE, 3),
        ),
        "history": st.one_of(st.none(), VALUE, st.lists(st.one_of(MESSAGE, st.lists(VALUE, max_size=2), VALUE), max_size=3)),
        "tools": st.one_of(st.none(), VALUE, st.lists(st.one_of(TOOL, VALUE), max_size=2)),
        "label": st.one_of(st.none(), VALUE),
        "format": st.sampled_from(FORMATS),
    }
)


@EXAMPLES
@given(
    which=st.sampled_from(sorted(PROMPTERS)),
    instruction=INSTRUCTION,
    extra_keys=st.one_of(st.none(), st.sampled_from(["ctx", ["ctx", "b"]]), VALUE),
    ctor_tools=st.one_of(st.none(), st.lists(TOOL, max_size=2), VALUE),
    call=CALLS,
)
def test_hostile_input_anywhere_ends_in_a_result_or_a_prompt_error_and_is_not_mutated(
    which: str, instruction: Any, extra_keys: Any, ctor_tools: Any, call: dict[str, Any]
) -> None:
    arguments = (instruction, extra_keys, ctor_tools, call)
    before = snapshot(arguments)
    _call(which, instruction, extra_keys, ctor_tools, call)
    assert snapshot(arguments) == before


@EXAMPLES
@given(
    which=st.sampled_from(["chat", "alpaca"]),
    slot=HOSTILE,
    other=st.one_of(PLAIN, HOSTILE),
    fmt=st.sampled_from(FORMATS),
)
def test_a_hostile_slot_value_ends_in_a_result_or_a_prompt_error(which: str, slot: Any, other: Any, fmt: Any) -> None:
    prompter = PROMPTERS[which]("About {a}.", "ctx", None)
    for value in ({"a": slot, "ctx": other}, slot):
        try:
            prompter.generate_prompt(value, format=fmt)
        except PromptError:
            pass


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(10**5000, id="int-past-the-digit-limit"),
        pytest.param(HostileStr("x"), id="str-subclass-whose-methods-raise"),
        pytest.param(HostileInt(3), id="int-subclass-whose-methods-raise"),
    ],
)
@pytest.mark.parametrize("fmt", [None, "openai"])
def test_huge_int_and_hostile_scalars_in_a_slot_give_a_prompt_error_or_their_text(value: Any, fmt: Any) -> None:
    p = ChatPrompter("About {topic}.", system="")
    try:
        out = p.generate_prompt({"topic": value}, format=fmt)
    except PromptError as exc:
        assert "topic" in str(exc)
    else:
        text = out if fmt is None else out["messages"][0]["content"]
        assert "About x." in text or "About 3." in text


@pytest.mark.parametrize(
    ("where", "call"),
    [
        pytest.param("history", {"history": _deep(5_000, False)}, id="deep-history"),
        pytest.param("tools", {"tools": [{"type": "function", "function": {"name": "f", "parameters": _deep(5_000, True)}}]},
                     id="deep-tool-parameters"),
        pytest.param("history", {"history": [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "1", "function": {"name": "f", "arguments": _deep(5_000, True)}}]}]}, id="deep-tool-call-arguments"),
        pytest.param("input", {"input": _self_containing_dict()}, id="message-containing-itself"),
        pytest.param("history", {"history": [_self_containing_list()]}, id="history-item-containing-itself"),
    ],
)
def test_deep_or_self_containing_values_give_a_prompt_error_naming_where(where: str, call: dict[str, Any]) -> None:
    with pytest.raises(PromptError, match=where):
        ChatPrompter("Hi.").generate_prompt(**{"input": "q", **call}, format="openai")


MODEL_FORMATS = ["chatml", "qwen2.5", "llama-3.1", "glm-4", "mistral-v0.3-tools", "gemma-2", "deepseek-r1", "hermes-2-pro"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.sampled_from(["chat", "alpaca"]),
    instruction=INSTRUCTION,
    call=CALLS,
    family=st.sampled_from(MODEL_FORMATS),
)
def test_hostile_input_with_a_model_format_bound_ends_in_a_result_or_a_prompt_error(
    which: str, instruction: Any, call: dict[str, Any], family: str
) -> None:
    """The same property through a real model's chat template (the sandboxed renderer)."""
    call = {**call, "format": None}
    arguments = (instruction, call)
    before = snapshot(arguments)
    try:
        prompter = PROMPTERS[which](instruction, None, None)
        prompter.generate_prompt(**call, model_format=family)
    except PromptError:
        pass
    assert snapshot(arguments) == before


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: ChatPrompter("Hi.").generate_prompt("x", format=HostileStr("openai")), id="format-str-subclass"),
        pytest.param(lambda: ChatPrompter("Hi.").generate_prompt("x", format=RaisingObject()), id="format-object"),
        pytest.param(lambda: ChatPrompter("Hi.").generate_prompt("x", return_dict=RaisingObject()), id="return-dict"),
        pytest.param(lambda: ChatPrompter("Hi.").generate_prompt("x", show=RaisingObject()), id="show-at-call"),
        pytest.param(lambda: ChatPrompter("Hi.", show=RaisingObject()), id="show-at-construction"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("Hi.", enable_system=RaisingObject()), id="enable-system"),  # type: ignore[arg-type]
        pytest.param(lambda: ChatPrompter("Hi.", system=HostileStr("S")).generate_prompt("x"), id="system-str-subclass"),
        pytest.param(lambda: ChatPrompter({"system": RaisingObject()}), id="dict-instruction-value"),  # found by hypothesis
        pytest.param(lambda: ChatPrompter("Hi.").get_response("out", input=RaisingObject()), id="get-response-input"),
        pytest.param(lambda: ChatPrompter("Hi.").generate_prompt("x", model_format=HostileStr("qwen2.5")),
                     id="model-format-str-subclass"),
    ],
)
def test_hostile_call_options_give_a_result_or_a_prompt_error(make: Any) -> None:
    try:
        make()
    except PromptError:
        pass

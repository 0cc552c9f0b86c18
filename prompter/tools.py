"""Tool definitions: validated, copied and serialised once.

>>> tools = ToolSet.from_user([{"type": "function", "function": {"name": "now"}}])
>>> tools.json
'[{"type": "function", "function": {"name": "now"}}]'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from prompter.cache_marks import cache_mark
from prompter.errors import MessageError, ToolsError

__all__ = ["ReadOnlyDict", "ReadOnlyList", "ToolSet"]


def _refuse(self: object, *args: object, **kwargs: object) -> None:
    raise TypeError(
        f"this {type(self).__name__} is shared by every prompt of its prompter and is read-only; copy it first"
    )


class ReadOnlyDict(dict):  # type: ignore[type-arg]
    """A dict that refuses changes: tool definitions shared between calls."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return json.loads(json.dumps(self))  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class ReadOnlyList(list):  # type: ignore[type-arg]
    """A list that refuses changes: tool definitions shared between calls."""

    __slots__ = ("tools_json",)
    tools_json: str
    """For a list of tools: their JSON text, so renderers need not encode them again."""
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return json.loads(json.dumps(self))  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def _read_only(value: Any) -> Any:
    if isinstance(value, dict):
        return ReadOnlyDict((key, _read_only(item)) for key, item in value.items())
    if isinstance(value, list):
        return ReadOnlyList(_read_only(item) for item in value)
    return value


def _shown(value: object) -> str:
    # a repr can raise (an int past the digit limit) or be huge: short str and small values only
    if value is None or type(value) is bool or (isinstance(value, str) and len(value) <= 40):
        return repr(value)
    return f"a {type(value).__name__}"


def _validate(tools: object, where: str) -> None:
    if not isinstance(tools, (list, tuple)):
        raise ToolsError(f"{where}: expected a list of tool dicts, got {type(tools).__name__}")
    for i, tool in enumerate(tools):
        here = f"{where}[{i}]"
        if not isinstance(tool, Mapping):
            raise ToolsError(f"{here}: expected a tool dict, got {type(tool).__name__}")
        function = tool.get("function")
        if "type" not in tool and isinstance(function, Mapping):  # every API that takes the shape requires it
            raise ToolsError(f"{here}.type: missing; add \"type\": \"function\" beside \"function\"")
        kind = tool.get("type")  # compared only as a str: a numpy array's != is no bool, an object's may raise
        if not (isinstance(kind, str) and kind == "function") or not isinstance(function, Mapping):
            raise ToolsError(
                f"{here}: expected {{'type': 'function', 'function': {{'name': ..., ...}}}}, "
                f"got keys {sorted(_shown(key) for key in tool)}"
            )
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ToolsError(f"{here}.function.name: expected a non-empty str, got {_shown(name)}")
        # every API takes a JSON Schema object here (Anthropic's input_schema, Gemini's parameters...)
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, Mapping):
            raise ToolsError(
                f"{here}.function.parameters: expected a JSON Schema object (a dict such as "
                f"{{'type': 'object', 'properties': {{...}}}}), got {_shown(parameters)}"
            )
        description = function.get("description")
        if description is not None and not isinstance(description, str):
            raise ToolsError(f"{here}.function.description: expected a str, got {_shown(description)}")
        if "cache_control" in tool:  # Anthropic's prompt-caching mark on the tool (prompter.cache_marks)
            try:
                cache_mark(tool["cache_control"], f"{here}.cache_control")
            except MessageError as exc:
                raise ToolsError(str(exc)) from None


class ToolSet:
    """An immutable set of OpenAI-style function tools and their JSON text."""

    __slots__ = ("_fresh", "json", "shared", "specs")

    specs: tuple[dict[str, Any], ...]
    """The tool dicts, deep-copied from what the caller passed and read-only."""
    json: str
    """``json.dumps(tools, ensure_ascii=False)``, computed once."""

    shared: list[dict[str, Any]]
    """One read-only list of the tools, the same object on every call (renderers may cache by it)."""

    def __init__(self, specs: tuple[dict[str, Any], ...], text: str, shared: bool = True) -> None:
        self.specs = specs
        self.json = text
        self.shared = ReadOnlyList(specs)
        self.shared.tools_json = text
        self._fresh = not shared

    @classmethod
    def from_user(cls, tools: object, where: str = "tools", shared: bool = False) -> ToolSet:
        """Validate ``tools`` (a list of ``{"type": "function", "function": {...}}``) and copy it.

        ``shared`` tools (locked at a prompter's construction) appear in every
        prompt, so they come back read-only; others come back as fresh plain
        dicts on every call. Equal tools passed again (a module passes its tools
        on every call) reuse the set already validated, found by their JSON text.
        """
        if not issubclass(type(tools), (list, tuple)):  # type(): never the caller's __class__ or __iter__
            raise ToolsError(f"{where}: expected a list of tool dicts, got {type(tools).__name__}")
        try:
            text = json.dumps(list(tools), ensure_ascii=False)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            text = None
        if text is not None:
            known = _RECENT.get((text, shared))
            if known is not None:
                return known
        _validate(tools, where)
        if text is None:
            try:
                text = json.dumps(list(tools), ensure_ascii=False)  # type: ignore[call-overload]
            except (TypeError, ValueError) as exc:
                raise ToolsError(f"{where}: tools must be JSON-serialisable ({exc})") from None
        made = cls(tuple(_read_only(json.loads(text))), text, shared)
        if len(_RECENT) >= 64:
            _RECENT.clear()
        _RECENT[(text, shared)] = made
        return made

    def as_list(self) -> list[dict[str, Any]]:
        """A fresh list of the tool dicts: read-only dicts for shared tools, else plain new ones."""
        if self._fresh:
            return json.loads(self.json)  # type: ignore[no-any-return]
        return list(self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def __repr__(self) -> str:
        names = [spec["function"]["name"] for spec in self.specs]
        return f"ToolSet({names!r})"


# recently validated tool sets by (JSON text, shared): equal tools reuse one set
_RECENT: dict[tuple[str, bool], ToolSet] = {}

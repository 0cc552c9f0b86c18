"""Tool definitions: validated, copied and serialised once.

>>> tools = ToolSet.from_user([{"type": "function", "function": {"name": "now"}}])
>>> tools.json
'[{"type": "function", "function": {"name": "now"}}]'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from prompter.errors import ToolsError

__all__ = ["ToolSet"]


class ToolSet:
    """An immutable set of OpenAI-style function tools and their JSON text."""

    __slots__ = ("json", "specs")

    specs: tuple[dict[str, Any], ...]
    """The tool dicts, deep-copied from what the caller passed."""
    json: str
    """``json.dumps(tools, ensure_ascii=False)``, computed once."""

    def __init__(self, specs: tuple[dict[str, Any], ...], text: str) -> None:
        self.specs = specs
        self.json = text

    @classmethod
    def from_user(cls, tools: object, where: str = "tools") -> ToolSet:
        """Validate ``tools`` (a list of ``{"type": "function", "function": {...}}``) and copy it."""
        if not isinstance(tools, (list, tuple)):
            raise ToolsError(f"{where}: expected a list of tool dicts, got {type(tools).__name__}")
        for i, tool in enumerate(tools):
            here = f"{where}[{i}]"
            if not isinstance(tool, Mapping):
                raise ToolsError(f"{here}: expected a tool dict, got {type(tool).__name__}")
            function = tool.get("function")
            if tool.get("type", "function") != "function" or not isinstance(function, Mapping):
                raise ToolsError(
                    f"{here}: expected {{'type': 'function', 'function': {{'name': ..., ...}}}}, "
                    f"got keys {sorted(map(str, tool))}"
                )
            name = function.get("name")
            if not isinstance(name, str) or not name:
                raise ToolsError(f"{here}.function.name: expected a non-empty str, got {name!r}")
        try:
            text = json.dumps(list(tools), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise ToolsError(f"{where}: tools must be JSON-serialisable ({exc})") from None
        return cls(tuple(json.loads(text)), text)

    def as_list(self) -> list[dict[str, Any]]:
        """A fresh list of the tool dicts (the dicts themselves are shared: treat them as read-only)."""
        return list(self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def __repr__(self) -> str:
        names = [spec["function"]["name"] for spec in self.specs]
        return f"ToolSet({names!r})"

"""PromptList: the intermediate shape of an evaluation prompt, before a meta template.

A :class:`PromptList` is a list whose items are

* plain strings, written as they are;
* role turns, ``{"role": "HUMAN" | "BOT" | "SYSTEM" | ..., "prompt": ...}``, optionally
  with a ``fallback_role`` used when the model's meta template lacks ``role``;
* section markers, ``{"section": "begin" | "round" | "ice" | "end", "pos": "begin" | "end"}``,
  which tell a :class:`~prompter.templates.MetaTemplate` where the dialogue rounds are.

Every operation returns a new list; the operands are never changed.

>>> pl = PromptList([{"role": "HUMAN", "prompt": "Q: {q}"}, "\\n"])
>>> pl.format(q="{q} and {r}")
PromptList([{'role': 'HUMAN', 'prompt': 'Q: {q} and {r}'}, '\\n'])
>>> str(pl + "tail")
'Q: {q}\\ntail'
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, SupportsIndex, overload

from prompter.errors import EvalTemplateError, InputTypeError
from prompter.instruction import InstructionTemplate

__all__ = ["PromptItem", "PromptList", "as_text", "copy_item", "fill_keep", "is_section"]

PromptItem = str | dict[str, Any]
"""One item of a :class:`PromptList`: a string, a role turn or a section marker."""


def is_section(item: object) -> bool:
    """Whether ``item`` is a section marker (``{"section": ..., "pos": ...}``).

    >>> is_section({"section": "round", "pos": "begin"}), is_section({"role": "BOT"})
    (True, False)
    """
    return isinstance(item, dict) and "section" in item


def as_text(value: object, field: str) -> str:
    """``value`` as the text that fills the slot ``field``: str as is, int and float via ``str``.

    Anything else (``None``, lists, dicts) raises :class:`~prompter.errors.InputTypeError`
    naming the field, because its text form would be a guess.

    >>> as_text(3, "n"), as_text("{x}", "q")
    ('3', '{x}')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    raise InputTypeError(f"entry[{field!r}]: expected str, int or float, got {type(value).__name__}")


def fill_keep(template: InstructionTemplate, values: Mapping[str, Any]) -> str:
    """Fill the slots found in ``values`` in one pass; leave the others as ``{name}``."""
    if not template.slots:
        return template.source
    pieces, positions = template.pieces
    out = pieces.copy()
    for index, name in positions:
        out[index] = as_text(values[name], name) if name in values else "{" + name + "}"
    return "".join(out)


class PromptList(list[PromptItem]):
    """A list of strings, role turns and section markers; see the module docstring.

    It is a ``list``, so it compares equal to a plain list with the same items.
    """

    def __init__(self, items: Iterable[PromptItem] = ()) -> None:
        super().__init__(items)

    # -- filling -------------------------------------------------------------------------------

    def format(self, **values: Any) -> PromptList:
        """A copy with ``{field}`` slots of strings and of turn prompts filled in one pass.

        A value is inserted verbatim and never looked at again; slots with no value
        stay as written (``{name}``). Section markers and other keys are copied.

        >>> PromptList(["{a}-{b}"]).format(a="{b}")
        PromptList(['{b}-{b}'])
        """
        out = PromptList()
        for item in self:
            if isinstance(item, str):
                out.append(fill_keep(InstructionTemplate(item), values))
            elif isinstance(item, dict):
                new = copy_item(item)
                prompt = item.get("prompt")
                if isinstance(prompt, str):
                    new["prompt"] = fill_keep(InstructionTemplate(prompt), values)
                out.append(new)
            else:
                raise InputTypeError(f"PromptList item: expected str or dict, got {type(item).__name__}")
        return out

    def replace(self, src: str, dst: str | PromptList) -> PromptList:
        """A copy with every ``src`` replaced by ``dst``, in one pass.

        ``dst`` may be a string, or a PromptList that is spliced in where ``src``
        stands inside a string item. A turn's prompt can only take a string:
        splicing a list into it raises :class:`~prompter.errors.InputTypeError`.

        >>> PromptList(["a</E>b"]).replace("</E>", PromptList([{"role": "BOT", "prompt": "x"}]))
        PromptList(['a', {'role': 'BOT', 'prompt': 'x'}, 'b'])
        """
        if not isinstance(src, str) or not src:
            raise EvalTemplateError(f"PromptList.replace: src must be a non-empty string, got {src!r}")
        if not isinstance(dst, (str, list)):
            raise InputTypeError(f"PromptList.replace: dst must be a str or a PromptList, got {type(dst).__name__}")
        out = PromptList()
        for index, item in enumerate(self):
            if isinstance(item, str):
                if isinstance(dst, str):
                    out.append(item.replace(src, dst))
                    continue
                parts = item.split(src)
                for i, part in enumerate(parts):
                    if part:
                        out.append(part)
                    if i < len(parts) - 1:
                        out.extend(copy_item(d) if isinstance(d, dict) else d for d in dst)
            elif isinstance(item, dict):
                new = copy_item(item)
                prompt = item.get("prompt")
                if isinstance(prompt, str) and src in prompt:
                    if not isinstance(dst, str):
                        raise InputTypeError(
                            f"PromptList[{index}]: {src!r} is inside the prompt of a {item.get('role')!r} turn, "
                            "which can only take a string, not a PromptList; put it in a string item instead"
                        )
                    new["prompt"] = prompt.replace(src, dst)
                out.append(new)
            else:
                raise InputTypeError(f"PromptList[{index}]: expected str or dict, got {type(item).__name__}")
        return out

    def strip_sections(self) -> PromptList:
        """A copy without section markers: the turns and strings as a reader sees them.

        >>> PromptList([{"section": "round", "pos": "begin"}, "x"]).strip_sections()
        PromptList(['x'])
        """
        return PromptList(copy_item(i) if isinstance(i, dict) else i for i in self if not is_section(i))

    # -- list behaviour that must not mutate or mis-splice --------------------------------------

    def __add__(self, other: Iterable[PromptItem] | str) -> PromptList:  # type: ignore[override]
        if isinstance(other, str):
            return type(self)([*self, other]) if other else type(self)(self)
        return type(self)([*self, *other])

    def __radd__(self, other: Iterable[PromptItem] | str) -> PromptList:
        if isinstance(other, str):
            return type(self)([other, *self]) if other else type(self)(self)
        return type(self)([*other, *self])

    def __iadd__(self, other: Iterable[PromptItem] | str) -> PromptList:  # type: ignore[override]
        # a str is one item, not a sequence of characters
        if isinstance(other, str):
            if other:
                self.append(other)
        else:
            self.extend(other)
        return self

    def __mul__(self, n: SupportsIndex) -> PromptList:
        return type(self)(list.__mul__(self, n))

    @overload
    def __getitem__(self, index: SupportsIndex) -> PromptItem: ...
    @overload
    def __getitem__(self, index: slice) -> PromptList: ...
    def __getitem__(self, index: SupportsIndex | slice) -> PromptItem | PromptList:
        if isinstance(index, slice):
            return type(self)(list.__getitem__(self, index))
        return list.__getitem__(self, index)

    def copy(self) -> PromptList:
        """A shallow copy, as a PromptList."""
        return type(self)(self)

    def __str__(self) -> str:
        """The strings and turn prompts concatenated (the text of multimodal prompts)."""
        out: list[str] = []
        for item in self:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and not is_section(item):
                prompt = item.get("prompt", "")
                if isinstance(prompt, str):
                    out.append(prompt)
                elif isinstance(prompt, list):
                    out.extend(p["text"] for p in prompt if isinstance(p, dict) and isinstance(p.get("text"), str))
        return "".join(out)

    def __repr__(self) -> str:
        return f"PromptList({list.__repr__(self)})"


def copy_item(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of a PromptList dict item that shares nothing mutable with it."""
    # turns are flat dicts of strings; only multimodal prompts hold nested values
    if all(isinstance(v, (str, int, float, bool, type(None))) for v in item.values()):
        return dict(item)
    return copy.deepcopy(item)

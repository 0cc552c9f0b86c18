"""Dialogue templates (``dict(begin=[...], round=[...], end=[...])``), compiled once.

The dataset side of a conversation: each item of ``begin`` / ``end`` is a string or a
role turn, each item of ``round`` is a role turn ``dict(role=..., prompt=...,
fallback_role=...)``. Compiling checks the shape and parses every string once;
building fills the fields of one entry and yields a
:class:`~prompter.templates.PromptList` with section markers, which a
:class:`~prompter.templates.MetaTemplate` turns into the model's prompt.

>>> d = Dialogue.compile({"round": [{"role": "HUMAN", "prompt": "{q}"}]}, "template")
>>> d.build({"q": "1+1=?"}).strip_sections()
PromptList([{'role': 'HUMAN', 'prompt': '1+1=?'}])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prompter.errors import EvalTemplateError, InputTypeError
from prompter.templates.prompt_list import PromptList, copy_item
from prompter.templates.slots import Missing, SlotText

__all__ = ["DIALOGUE_KEYS", "TURN_KEYS", "Dialogue", "Node", "Turn", "compile_turn", "emit", "is_dialogue", "marker"]

DIALOGUE_KEYS = frozenset({"begin", "round", "end"})
"""The keys of a dialogue template."""
TURN_KEYS = frozenset({"role", "prompt", "fallback_role"})
"""The keys a role turn of a dataset template may have."""


def marker(section: str, pos: str) -> dict[str, Any]:
    """A section marker: ``marker("round", "begin")`` opens the round section."""
    return {"section": section, "pos": pos}


def is_dialogue(template: object) -> bool:
    """Whether ``template`` is a dialogue template (a dict of ``begin``/``round``/``end``)."""
    return isinstance(template, Mapping) and bool(template) and set(template) <= DIALOGUE_KEYS


@dataclass(frozen=True)
class Turn:
    """A role turn of a dialogue template: its role names and its prompt text."""

    role: str
    fallback_role: str | None
    prompt: SlotText | None
    """None when the turn leaves the prompt to the meta template's default."""

    def build(self, values: Mapping[str, Any], ice: str, keep_sep: bool, missing: Missing) -> dict[str, Any]:
        """The filled turn as a PromptList item."""
        item: dict[str, Any] = {"role": self.role}
        if self.fallback_role is not None:
            item["fallback_role"] = self.fallback_role
        if self.prompt is not None:
            item["prompt"] = self.prompt.fill(values, ice, keep_sep=keep_sep, missing=missing)
        return item


Node = SlotText | Turn


def compile_turn(raw: object, where: str, ice_token: str | None = None, sep_token: str | None = None) -> Turn:
    """Check one ``dict(role=..., prompt=..., fallback_role=...)`` and parse its prompt."""
    if not isinstance(raw, Mapping):
        raise EvalTemplateError(f"{where}: expected a role turn dict(role=..., prompt=...), got {type(raw).__name__}")
    unknown = sorted(map(str, set(raw) - TURN_KEYS))
    if unknown:
        raise EvalTemplateError(f"{where}: unknown key(s) {unknown}; a turn has role, prompt and fallback_role")
    role, fallback = raw.get("role"), raw.get("fallback_role")
    if not isinstance(role, str) or not role:
        raise EvalTemplateError(f"{where}['role']: expected a non-empty string, got {role!r}")
    if fallback is not None and (not isinstance(fallback, str) or not fallback):
        raise EvalTemplateError(f"{where}['fallback_role']: expected a non-empty string, got {fallback!r}")
    prompt = raw.get("prompt")
    text = None if prompt is None else SlotText(prompt, f"{where}['prompt']", ice_token, sep_token)
    return Turn(role, fallback, text)


def _compile_nodes(
    raw: object, where: str, ice_token: str | None, sep_token: str | None, *, turns_only: bool
) -> tuple[Node, ...]:
    items: Sequence[object]
    if isinstance(raw, (list, tuple)):
        items = raw
    elif turns_only:
        raise EvalTemplateError(f"{where}: expected a list of role turns, got {type(raw).__name__}")
    else:
        items = [raw]  # a single string or turn stands for a one-item list
    nodes: list[Node] = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        if isinstance(item, str) and not turns_only:
            nodes.append(SlotText(item, at, ice_token, sep_token))
        elif isinstance(item, Mapping) or turns_only:
            nodes.append(compile_turn(item, at, ice_token, sep_token))
        else:
            raise EvalTemplateError(f"{at}: expected a string or a role turn dict, got {type(item).__name__}")
    return tuple(nodes)


@dataclass(frozen=True)
class Dialogue:
    """A compiled dialogue template; ``None`` for a section the template does not have."""

    begin: tuple[Node, ...] | None
    round: tuple[Node, ...]
    end: tuple[Node, ...] | None

    @classmethod
    def compile(
        cls, raw: Mapping[str, Any], where: str, ice_token: str | None = None, sep_token: str | None = None
    ) -> Dialogue:
        """Check the shape of ``raw`` and parse its strings; errors name the item at fault."""
        if "round" not in raw:
            raise EvalTemplateError(f"{where}: a dialogue template needs a 'round' list of role turns")
        begin = end = None
        if "begin" in raw:
            begin = _compile_nodes(raw["begin"], f"{where}['begin']", ice_token, sep_token, turns_only=False)
        if "end" in raw:
            end = _compile_nodes(raw["end"], f"{where}['end']", ice_token, sep_token, turns_only=False)
        rounds = _compile_nodes(raw["round"], f"{where}['round']", ice_token, sep_token, turns_only=True)
        return cls(begin, rounds, end)

    def texts(self) -> list[SlotText]:
        """Every string of the template, in order."""
        out: list[SlotText] = []
        for nodes in (self.begin or (), self.round, self.end or ()):
            for node in nodes:
                text = node if isinstance(node, SlotText) else node.prompt
                if text is not None:
                    out.append(text)
        return out

    def build(
        self,
        values: Mapping[str, Any],
        ice: str | PromptList = "",
        *,
        for_ice: bool = False,
        keep_sep: bool = False,
        missing: Missing = "error",
    ) -> PromptList:
        """Fill the template with one entry's ``values``; ``ice`` goes where the ice token is.

        For an in-context example (``for_ice``), only the rounds are built, inside an
        ``ice`` section; otherwise ``begin``, ``round`` and ``end`` sections.
        """
        out = PromptList()
        if not for_ice and self.begin is not None:
            out.append(marker("begin", "begin"))
            emit(out, self.begin, values, ice, keep_sep, missing)
            out.append(marker("begin", "end"))
        section = "ice" if for_ice else "round"
        out.append(marker(section, "begin"))
        emit(out, self.round, values, ice, keep_sep, missing)
        out.append(marker(section, "end"))
        if not for_ice and self.end is not None:
            out.append(marker("end", "begin"))
            emit(out, self.end, values, ice, keep_sep, missing)
            out.append(marker("end", "end"))
        return out


def emit(
    out: PromptList,
    nodes: tuple[Node, ...],
    values: Mapping[str, Any],
    ice: str | PromptList,
    keep_sep: bool,
    missing: Missing,
) -> None:
    """Append the filled ``nodes`` to ``out``; a PromptList ``ice`` is spliced into string items."""
    for node in nodes:
        if isinstance(node, Turn):
            if isinstance(ice, list) and node.prompt is not None and node.prompt.has_ice:
                raise InputTypeError(
                    f"{node.prompt.where}: the ice token is inside a turn's prompt, which can only take "
                    "text, but the in-context examples are a PromptList; put the ice token in its own "
                    "string item of 'begin' or 'end'"
                )
            out.append(node.build(values, ice if isinstance(ice, str) else "", keep_sep, missing))
            continue
        pieces = node.pieces(values, keep_sep=keep_sep, missing=missing)
        if isinstance(ice, str):
            text = ice.join(pieces)
            if text:
                out.append(text)
            continue
        for i, piece in enumerate(pieces):
            if piece:
                out.append(piece)
            if i < len(pieces) - 1:
                out.extend(copy_item(x) if isinstance(x, dict) else x for x in ice)

"""MetaTemplate: the model side of an evaluation prompt (OpenCompass ``meta_template``).

A dataset's dialogue template says *who* speaks (``HUMAN``, ``BOT``, ``SYSTEM``); a
model's meta template says *how* each role is written: its ``begin`` and ``end``
strings, an optional default ``prompt``, and which role the model plays
(``generate=True``). :meth:`MetaTemplate.parse` joins the two into the string a
local model reads; :meth:`MetaTemplate.parse_api` into the turns an API model takes.

>>> meta = MetaTemplate(
...     round=[dict(role="HUMAN", begin="<HUMAN>: ", end="<eoh>\\n"),
...            dict(role="BOT", begin="<BOT>: ", end="<eob>\\n", generate=True)])
>>> pl = PromptList([dict(role="HUMAN", prompt="1+1=?"), dict(role="BOT", prompt="2"),
...                  dict(role="HUMAN", prompt="2+2=?"), dict(role="BOT", prompt="4")])
>>> meta.parse(pl, mode="gen")
'<HUMAN>: 1+1=?<eoh>\\n<BOT>: 2<eob>\\n<HUMAN>: 2+2=?<eoh>\\n<BOT>: '

How a PromptList is read:

* ``round`` and ``ice`` sections (or the whole list, when it has no section markers)
  are split into rounds by the order of the meta template's ``round``: a turn whose
  role comes no later than the previous turn's starts a new round. Each round is
  written in the meta template's role order; a role the round lacks is written only
  if the meta template gives it a default ``prompt``.
* In ``"gen"`` mode the last round of the last ``round`` section stops at the
  ``begin`` of the ``generate=True`` role: that role's prompt, everything after it
  and the meta template's ``end`` are left to the model.
* Turns in ``begin``/``end`` sections, reserved roles (``SYSTEM``) and bare strings
  are written one by one, where they stand.
* A role the meta template lacks is replaced by the turn's ``fallback_role``.

Why this file is long: reading a PromptList into rounds is one algorithm over
shared state (sections, round order, gen-mode cut), kept in one class so it reads top to bottom.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from prompter.errors import (
    EvalTemplateError,
    InputTypeError,
    UnknownRoleError,
    UnsupportedContentError,
)
from prompter.templates import compat_meta
from prompter.templates.compat import Compat, check_compat
from prompter.templates.format_bridge import format_from_meta, meta_from_format
from prompter.templates.prompt_list import PromptItem, PromptList, is_section
from prompter.templates.roles import API_ROLES, RoleSpec, delimiter
from prompter.templates.slots import check_config_type

if TYPE_CHECKING:
    from prompter.formats.model_format import ModelFormat

__all__ = ["API_ROLES", "MetaTemplate", "Mode", "RoleSpec", "api_to_messages"]

Mode = Literal["gen", "ppl"]
"""``"gen"``: the prompt stops where the model answers; ``"ppl"``: the whole text is scored."""


class _Turn(NamedTuple):
    spec: RoleSpec | None  # None: a bare string
    prompt: str | list[Any]
    at: int  # where in the PromptList it came from, for error messages


class _Walk(NamedTuple):
    turns: list[_Turn]
    stop: RoleSpec | None  # the role where the model starts answering (gen mode)


@dataclass(frozen=True, init=False)
class MetaTemplate:
    """A model's meta template; see the module docstring.

    ``MetaTemplate()`` (no rounds) is "no meta template": turns and strings are
    joined with ``"\\n"``, as OpenCompass does for base models.
    """

    round: tuple[RoleSpec, ...]
    """The roles of one dialogue round, in the order they speak."""
    reserved_roles: tuple[RoleSpec, ...]
    """Roles outside the rounds (``SYSTEM``), written wherever a turn names them."""
    begin: str
    """Written once before the prompt (API models: at the start of the first turn's text)."""
    end: str
    """Written once after the prompt, unless gen mode stopped it (API models: after the last turn's text)."""
    eos_token_id: int | None
    """The model's end-of-answer token id, for the inferencer; not used in rendering."""
    compat: Compat | None
    """None, or the harness whose parser this template reproduces exactly
    (see :mod:`prompter.templates.compat_meta`)."""
    messages: tuple[dict[str, Any], ...]
    """A list-form (API) meta template: OpenAI-style messages woven into the messages
    :meth:`parse_api` is given (see :func:`~prompter.templates.compat_meta.merge_messages`)."""
    _roles: dict[str, RoleSpec] = field(repr=False, compare=False, hash=False)
    _order: dict[str, int] = field(repr=False, compare=False, hash=False)

    def __init__(
        self,
        round: Iterable[RoleSpec | Mapping[str, Any]] = (),
        reserved_roles: Iterable[RoleSpec | Mapping[str, Any]] = (),
        begin: str | Sequence[str] = "",
        end: str | Sequence[str] = "",
        eos_token_id: int | None = None,
        *,
        compat: Compat | None = None,
        messages: Iterable[Mapping[str, Any]] = (),
        type: object = None,  # noqa: A002 - the key of a pasted config block
    ) -> None:
        check_config_type(type, "MetaTemplate")
        for name, roles_given in (("round", round), ("reserved_roles", reserved_roles)):
            if isinstance(roles_given, (str, Mapping)) or not isinstance(roles_given, Iterable):
                raise EvalTemplateError(f"{name}: expected a list of dict(role=..., ...), got {roles_given!r:.60}")
        rounds = tuple(RoleSpec.from_config(r, f"round[{i}]") for i, r in enumerate(round))
        reserved = tuple(RoleSpec.from_config(r, f"reserved_roles[{i}]") for i, r in enumerate(reserved_roles))
        roles: dict[str, RoleSpec] = {}
        for spec in rounds + reserved:
            if spec.role in roles:
                raise EvalTemplateError(f"role {spec.role!r} is defined twice; role names must be unique")
            roles[spec.role] = spec
        begin_s, end_s = delimiter(begin, "begin"), delimiter(end, "end")
        if not rounds and (reserved or begin_s or end_s):
            raise EvalTemplateError("round: a meta template with reserved_roles, begin or end needs its round roles")
        if eos_token_id is not None and (not isinstance(eos_token_id, int) or isinstance(eos_token_id, bool)):
            raise EvalTemplateError(f"eos_token_id: expected an int or None, got {eos_token_id!r}")
        for name, value in (
            ("round", rounds),
            ("reserved_roles", reserved),
            ("begin", begin_s),
            ("end", end_s),
            ("eos_token_id", eos_token_id),
            ("compat", check_compat(compat)),
            ("messages", _check_messages(messages)),
            ("_roles", roles),
            ("_order", {spec.role: i for i, spec in enumerate(rounds)}),
        ):
            object.__setattr__(self, name, value)

    # -- LM models -------------------------------------------------------------------------------

    def parse(self, prompt: PromptList | Sequence[PromptItem] | str, mode: Mode = "gen") -> str:
        """The string a local model reads for ``prompt``; a string passes through unchanged.

        >>> MetaTemplate().parse(PromptList([dict(role="HUMAN", prompt="Q"), dict(role="BOT", prompt="A")]))
        'Q\\nA'
        """
        _check_mode(mode)
        if compat_meta.is_messages(prompt):
            raise UnsupportedContentError(
                "prompt: OpenAI-style messages have no text form here; render them with the model's "
                "ModelFormat (fmt.render(messages)), or give them to parse_api"
            )
        if self.compat is not None:
            text: str = compat_meta.lm_parse(self, prompt, mode)  # a list for a batch, as upstream
            return text
        if isinstance(prompt, str):
            return prompt
        items = _items(prompt)
        if not self.round:
            return _plain(items)
        walk = self._walk(items, mode)
        out = [self.begin]
        for turn in walk.turns:
            text = _lm_text(turn)
            out.append(text if turn.spec is None else turn.spec.begin + text + turn.spec.end)
        if walk.stop is not None:
            out.append(walk.stop.begin if walk.stop.gen_begin is None else walk.stop.gen_begin)
        else:
            out.append(self.end)
        return "".join(out)

    def parse_batch(self, prompts: Iterable[PromptList | Sequence[PromptItem] | str], mode: Mode = "gen") -> list[str]:
        """:meth:`parse` of each prompt (upstream's ``parse_template`` of a list).

        >>> MetaTemplate().parse_batch(["a", PromptList([dict(role="HUMAN", prompt="b")])])
        ['a', 'b']
        """
        return [self.parse(p, mode) for p in _batch(prompts)]

    def parse_api_batch(
        self, prompts: Iterable[PromptList | Sequence[PromptItem] | str], mode: Mode = "gen"
    ) -> list[list[dict[str, Any]]]:
        """:meth:`parse_api` of each prompt."""
        return [self.parse_api(p, mode) for p in _batch(prompts)]

    # -- API models ------------------------------------------------------------------------------

    def parse_api(self, prompt: PromptList | Sequence[PromptItem] | str, mode: Mode = "gen") -> list[dict[str, Any]]:
        """The turns an API model takes: ``[{"role": api_role, "prompt": ...}, ...]``.

        Consecutive turns of the same ``api_role`` are joined with ``"\\n"``; in gen mode
        the model's own last turn is left out. A string becomes one ``HUMAN`` turn. The meta
        ``begin`` opens the first turn's text and ``end`` closes the last one's (as :meth:`parse`
        writes them: ``end`` not in gen mode when the model's turn stopped the prompt). A list-form
        meta template's messages (:meth:`from_messages`) are woven into the turns, as OpenAI-style messages.

        >>> api = MetaTemplate(round=[dict(role="HUMAN", api_role="HUMAN"),
        ...                           dict(role="BOT", api_role="BOT", generate=True)])
        >>> api.parse_api(PromptList([dict(role="HUMAN", prompt="hi"), dict(role="BOT", prompt="")]))
        [{'role': 'HUMAN', 'prompt': 'hi'}]
        """
        _check_mode(mode)
        if compat_meta.is_messages(prompt) and self.compat != "aisbench":
            # OpenAI-style messages are already turns: passed through, with a list-form prefix woven in
            return compat_meta.merge_messages(self.messages, prompt)  # type: ignore[arg-type]
        if self.compat is not None:
            # upstream's exact value: a str, a PromptList (its first item the meta begin), or messages
            return compat_meta.api_parse(self, prompt, mode, self.compat)  # type: ignore[return-value]
        turns = self._api_turns(prompt, mode)
        if self.messages:  # a list-form meta template's messages are woven in, as into messages: never dropped
            return compat_meta.merge_messages(self.messages, api_to_messages(turns))
        return turns

    def _api_turns(self, prompt: PromptList | Sequence[PromptItem] | str, mode: Mode) -> list[dict[str, Any]]:
        if isinstance(prompt, str):
            return [{"role": "HUMAN", "prompt": prompt}]
        items = _items(prompt)
        if not self.round:
            return [{"role": "HUMAN", "prompt": _plain(items)}]
        out: list[dict[str, Any]] = []
        walk = self._walk(items, mode)
        for turn in walk.turns:
            if turn.spec is None:
                if isinstance(turn.prompt, str) and not turn.prompt.strip():
                    continue
                raise UnsupportedContentError(
                    f"prompt[{turn.at}]: a bare string cannot be sent to an API model; give it a role"
                )
            if turn.spec.api_role is None:
                raise EvalTemplateError(f"role {turn.spec.role!r}: no api_role; set api_role='HUMAN'|'BOT'|'SYSTEM'")
            last = out[-1] if out else None
            if (
                last is not None
                and last["role"] == turn.spec.api_role
                and isinstance(last["prompt"], str)
                and isinstance(turn.prompt, str)
            ):
                last["prompt"] += "\n" + turn.prompt
            else:
                out.append({"role": turn.spec.api_role, "prompt": turn.prompt})
        # the meta begin/end surround the whole prompt, as in parse(): begin opens the first turn's
        # text, end closes the last one's unless gen mode stopped where the model answers
        return _surround(out, self.begin, self.end if walk.stop is None else "")

    # -- reading a PromptList --------------------------------------------------------------------

    def _resolve(self, item: Mapping[str, Any], index: int) -> RoleSpec:
        role = item.get("role")
        spec = self._roles.get(role) if isinstance(role, str) else None
        if spec is None:
            fallback = item.get("fallback_role")
            spec = self._roles.get(fallback) if isinstance(fallback, str) else None
        if spec is None:
            raise UnknownRoleError(
                f"prompt[{index}]: role {role!r} (fallback_role {item.get('fallback_role')!r}) is not in the "
                f"meta template (roles: {list(self._roles)}); add it to reserved_roles or give the turn a "
                "fallback_role"
            )
        return spec

    def _walk(self, items: list[PromptItem], mode: Mode) -> _Walk:
        blocks = _blocks(items)
        last_round = max((i for i, b in enumerate(blocks) if b.kind == "round"), default=-1)
        turns: list[_Turn] = []
        for b, block in enumerate(blocks):
            if block.kind == "turns":
                for index, item in block.items:
                    if isinstance(item, str):
                        turns.append(_Turn(None, item, index))
                    else:
                        spec = self._resolve(item, index)
                        turns.append(_Turn(spec, _prompt_of(item, spec, index), index))
                continue
            units = self._rounds(block.items)
            final = max((i for i, u in enumerate(units) if isinstance(u, dict)), default=-1)
            for u, unit in enumerate(units):
                if isinstance(unit, _Turn):
                    turns.append(unit)
                    continue
                gen = mode == "gen" and b == last_round and u == final
                for spec in self.round:
                    if gen and spec.generate:
                        return _Walk(turns, spec)
                    got = unit.get(spec.role)
                    if got is not None:
                        turns.append(_Turn(spec, _prompt_of(got[1], spec, got[0]), got[0]))
                    elif spec.prompt is not None:
                        turns.append(_Turn(spec, spec.prompt, -1))
        return _Walk(turns, None)

    def _rounds(self, entries: list[tuple[int, PromptItem]]) -> list[_Turn | dict[str, tuple[int, Any]]]:
        """Split a dialogue section into rounds (dicts role -> turn) and stand-alone turns."""
        units: list[_Turn | dict[str, tuple[int, Any]]] = []
        current: dict[str, tuple[int, Any]] = {}
        last = -1
        for index, item in entries:
            spec = None if isinstance(item, str) else self._resolve(item, index)
            position = None if spec is None else self._order.get(spec.role)
            if spec is None or position is None:
                # strings and reserved roles close the round and stand where they are
                if current:
                    units.append(current)
                    current, last = {}, -1
                if isinstance(item, str):
                    units.append(_Turn(None, item, index))
                elif spec is not None:
                    units.append(_Turn(spec, _prompt_of(item, spec, index), index))
                continue
            if current and position <= last:
                units.append(current)
                current = {}
            current[spec.role] = (index, item)
            last = position
        if current:
            units.append(current)
        return units

    @classmethod
    def from_messages(cls, messages: Iterable[Mapping[str, Any]], *, compat: Compat | None = None) -> MetaTemplate:
        """A list-form API meta template (OpenCompass): ``[dict(role="system", content=...), ...]``.

        >>> meta = MetaTemplate.from_messages([dict(role="system", content="Be brief. ")])
        >>> meta.parse_api([dict(role="system", content="Hi."), dict(role="user", content="2+2?")])
        [{'role': 'system', 'content': 'Be brief. Hi.'}, {'role': 'user', 'content': '2+2?'}]
        """
        return cls(compat=compat, messages=messages)

    # -- ModelFormat -----------------------------------------------------------------------------

    @classmethod
    def from_model_format(cls, fmt: ModelFormat, eos_token_id: int | None = None) -> MetaTemplate:
        """The meta template that writes what ``fmt``'s fixed strings write.

        ``soh``/``eoh`` become ``HUMAN``, ``soa``/``eoa`` ``BOT`` (``generate=True``,
        the generation prompt as ``gen_begin`` when it differs from ``soa``),
        ``sos``/``eos`` the reserved ``SYSTEM``, ``soe``/``eoe`` a reserved ``TOOL``
        (when set) and ``bos`` the ``begin``.

        >>> from prompter import ModelFormat
        >>> meta = MetaTemplate.from_model_format(ModelFormat(soh="U: ", eoh="\\n", soa="A: ", eoa="\\n",
        ...                                                   generation_prompt="A: "))
        >>> meta.parse(PromptList([dict(role="HUMAN", prompt="hi")]))
        'U: hi\\nA: '
        """
        return meta_from_format(cls, fmt, eos_token_id)

    def to_model_format(self, name: str = "custom") -> ModelFormat:
        """The :class:`~prompter.formats.model_format.ModelFormat` with this template's strings.

        Only ``HUMAN``/``BOT`` rounds and ``SYSTEM``/``TOOL`` reserved roles without
        default prompts, and no ``end``, have a ModelFormat counterpart; anything else
        raises :class:`~prompter.errors.EvalTemplateError` naming it.

        >>> meta = MetaTemplate(round=[dict(role="HUMAN", begin="U: ", end="\\n"),
        ...                            dict(role="BOT", begin="A: ", end="</s>\\n", generate=True)])
        >>> fmt = meta.to_model_format()
        >>> fmt.soh, fmt.generation_prompt, fmt.stop_words
        ('U: ', 'A: ', ('</s>',))
        """
        return format_from_meta(self, name)


# -- helpers ----------------------------------------------------------------------------------------


class _Block(NamedTuple):
    kind: Literal["round", "ice", "turns"]
    items: list[tuple[int, PromptItem]]


_SECTIONS = frozenset({"begin", "round", "ice", "end"})


def _batch(prompts: object) -> list[Any]:
    if isinstance(prompts, (str, PromptList)) or not isinstance(prompts, Iterable):
        raise InputTypeError(f"prompts: expected a list of prompts, got {type(prompts).__name__}; use parse for one")
    return list(prompts)


def _check_messages(messages: object) -> tuple[dict[str, Any], ...]:
    if isinstance(messages, (str, Mapping)) or not isinstance(messages, Iterable):
        raise EvalTemplateError(f"messages: expected a list of dict(role=..., content=...), got {messages!r}")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("system", "user", "assistant"):
            raise EvalTemplateError(
                f"messages[{i}]: expected dict(role='system'|'user'|'assistant', content=...), got {message!r}"
            )
        if not isinstance(message.get("content"), str):
            raise EvalTemplateError(f"messages[{i}]['content']: expected a string, got {message.get('content')!r}")
        out.append(dict(message))
    return tuple(out)


def _surround(turns: list[dict[str, Any]], begin: str, end: str) -> list[dict[str, Any]]:
    """``turns`` with ``begin`` before the first turn's text and ``end`` after the last one's (new dicts)."""
    if not turns or not (begin or end):
        return turns
    if begin:
        turns[0] = {**turns[0], "prompt": _joined(begin, turns[0]["prompt"], front=True)}
    if end:
        turns[-1] = {**turns[-1], "prompt": _joined(end, turns[-1]["prompt"], front=False)}
    return turns


def _joined(text: str, prompt: str | list[Any], front: bool) -> str | list[Any]:
    if isinstance(prompt, str):
        return text + prompt if front else prompt + text
    part = {"type": "text", "text": text}  # content parts: the string is one text part of its own
    return [part, *prompt] if front else [*prompt, part]


def _check_mode(mode: str) -> None:
    if mode not in ("gen", "ppl"):
        raise EvalTemplateError(f"mode: expected 'gen' or 'ppl', got {mode!r}")


def _items(prompt: object) -> list[PromptItem]:
    if not isinstance(prompt, (list, tuple)):
        raise InputTypeError(f"prompt: expected a PromptList, a list or a str, got {type(prompt).__name__}")
    for index, item in enumerate(prompt):
        if isinstance(item, str):
            continue
        if not isinstance(item, dict):
            raise InputTypeError(f"prompt[{index}]: expected a str or a dict, got {type(item).__name__}")
        if not is_section(item) and "role" not in item:
            raise EvalTemplateError(f"prompt[{index}]: a dict item needs a 'role' (a turn) or a 'section' (a marker)")
    return list(prompt)


def _blocks(items: list[PromptItem]) -> list[_Block]:
    """Group items by the section they are in; a list without markers is one round section."""
    if not any(is_section(i) for i in items):
        return [_Block("round", list(enumerate(items)))]
    blocks: list[_Block] = []
    stack: list[str] = []
    fresh = True  # a marker was just seen: the next item opens a new block
    for index, item in enumerate(items):
        if isinstance(item, dict) and is_section(item):
            section, pos = item.get("section"), item.get("pos")
            if not isinstance(section, str) or section not in _SECTIONS or pos not in ("begin", "end"):
                raise EvalTemplateError(
                    f"prompt[{index}]: section marker {item!r}; expected section in {sorted(_SECTIONS)} "
                    "and pos 'begin' or 'end'"
                )
            if pos == "begin":
                stack.append(section)
            elif not stack or stack[-1] != section:
                raise EvalTemplateError(
                    f"prompt[{index}]: closes section {section!r} but the open one is {stack[-1] if stack else None!r}"
                )
            else:
                stack.pop()
            fresh = True
            continue
        top = stack[-1] if stack else None
        kind: Literal["round", "ice", "turns"] = "round" if top == "round" else "ice" if top == "ice" else "turns"
        if fresh or not blocks or blocks[-1].kind != kind:
            blocks.append(_Block(kind, []))
            fresh = False
        blocks[-1].items.append((index, item))
    if stack:
        raise EvalTemplateError(f"prompt: section {stack[-1]!r} is opened but never closed")
    return blocks


def _prompt_of(item: Mapping[str, Any], spec: RoleSpec, index: int) -> str | list[Any]:
    prompt = item.get("prompt")
    if prompt is None:
        return spec.prompt or ""
    if isinstance(prompt, (str, list)):
        return prompt
    raise InputTypeError(f"prompt[{index}]['prompt']: expected a str (or a list of content parts), got {prompt!r}")


def _lm_text(turn: _Turn) -> str:
    if isinstance(turn.prompt, str):
        return turn.prompt
    raise UnsupportedContentError(
        f"prompt[{turn.at}]: multimodal content cannot be written into a text prompt; "
        "use parse_api for a model that takes content parts"
    )


def _plain(items: list[PromptItem]) -> str:
    texts: list[str] = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            text = item
        elif is_section(item):
            continue
        else:
            text = _lm_text(_Turn(None, item.get("prompt") or "", index))
        if text:
            texts.append(text)
    return "\n".join(texts)


_OPENAI_ROLES = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}


def api_to_messages(turns: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style messages for :meth:`MetaTemplate.parse_api`'s turns.

    >>> api_to_messages([{"role": "SYSTEM", "prompt": "Be brief."}, {"role": "HUMAN", "prompt": "hi"}])
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]
    """
    out = []
    for index, turn in enumerate(turns):
        role = turn.get("role")
        if role not in _OPENAI_ROLES:
            raise UnknownRoleError(f"turns[{index}]: role {role!r} is not one of {list(_OPENAI_ROLES)}")
        out.append({"role": _OPENAI_ROLES[role], "content": turn.get("prompt", "")})
    return out

"""Parity mode, model side: how OpenCompass and AISBench write a PromptList for a model.

Upstream's meta-template parsers differ from the default :class:`MetaTemplate` in
ways scores depend on:

* every role of the meta template's ``round`` is written in every round, in the meta
  template's order, even when the round has no turn for it (``begin + default prompt
  + end``); in gen mode the last round of each ``round`` section stops at the
  ``begin`` of the ``generate=True`` role and nothing after it is written;
* a string inside a ``round`` or ``ice`` section is written where the walk meets it,
  that is *before* the rounds of its section;
* a model without a meta template joins items with ``"\\n"``, and an empty item still
  sets the separator;
* API models: each turn's text is ``begin + prompt + end``; consecutive turns of one
  ``api_role`` are joined with ``"\\n"``; strings are dropped; the meta template's
  ``begin`` becomes the first item of the result (a string) and its ``end`` is unused;
  in gen mode a ``generate=True`` role in a ``begin``/``end`` section stops the prompt.

Where upstream crashes, the result is fixed (documented in docs/evaluation.md): a
PromptList without section markers is one ``round`` section, a turn whose role is not
in the round uses its ``fallback_role``, an ``end`` section closes, an empty API prompt
is ``[]``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from prompter.errors import EvalTemplateError, InputTypeError, UnknownRoleError
from prompter.templates.compat import Compat, plain_join
from prompter.templates.prompt_list import PromptItem, PromptList, is_section
from prompter.templates.roles import RoleSpec

__all__ = ["MetaLike", "api_parse", "is_batch", "is_messages", "lm_parse", "merge_messages"]


class MetaLike(Protocol):
    """What these parsers read of a :class:`~prompter.templates.MetaTemplate`."""

    @property
    def round(self) -> tuple[RoleSpec, ...]: ...
    @property
    def reserved_roles(self) -> tuple[RoleSpec, ...]: ...
    @property
    def begin(self) -> str: ...
    @property
    def end(self) -> str: ...
    @property
    def messages(self) -> tuple[dict[str, Any], ...]: ...


_Roles = dict[str, dict[str, Any]]


def _roles(meta: MetaLike) -> _Roles:
    out: _Roles = {}
    for spec in meta.round + meta.reserved_roles:
        role: dict[str, Any] = {"role": spec.role, "begin": spec.begin, "end": spec.end, "generate": spec.generate}
        if spec.api_role is not None:
            role["api_role"] = spec.api_role
        if spec.prompt is not None:
            role["prompt"] = spec.prompt
        out[spec.role] = role
    return out


def _items(prompt: object) -> list[PromptItem]:
    if not isinstance(prompt, (list, tuple)):
        raise InputTypeError(f"prompt: expected a PromptList, a list or a str, got {type(prompt).__name__}")
    items = list(prompt)
    for index, item in enumerate(items):
        if not isinstance(item, (str, dict)):
            raise InputTypeError(f"prompt[{index}]: expected a str or a dict, got {type(item).__name__}")
        if isinstance(item, dict) and not is_section(item) and "role" not in item:
            raise EvalTemplateError(f"prompt[{index}]: a dict item needs a 'role' (a turn) or a 'section' (a marker)")
    if any(isinstance(i, dict) and not is_section(i) for i in items) and not any(is_section(i) for i in items):
        # upstream fails on turns outside any section; read the list as one round section
        items = [{"section": "round", "pos": "begin"}, *items, {"section": "round", "pos": "end"}]
    return items


def _resolve(roles: _Roles, item: Mapping[str, Any], where: int) -> str:
    role = item.get("role")
    if isinstance(role, str) and role in roles:
        return role
    fallback = item.get("fallback_role")
    if isinstance(fallback, str) and fallback in roles:
        return fallback
    raise UnknownRoleError(
        f"prompt[{where}]: role {role!r} (fallback_role {fallback!r}) is not in the meta template "
        f"(roles: {list(roles)}); add it to reserved_roles or give the turn a fallback_role"
    )


def _split(dialogue: list[tuple[int, PromptItem]], meta: MetaLike, roles: _Roles) -> list[list[dict[str, Any]]]:
    """The turns of a section cut into rounds: a turn whose round position is not after the last starts one."""
    order = {spec.role: i for i, spec in enumerate(meta.round)}
    rounds: list[list[dict[str, Any]]] = [[]]
    last = -1
    for index, item in dialogue:
        if isinstance(item, str):
            continue
        name = item.get("role")
        position = order.get(name) if isinstance(name, str) else None
        if position is None:
            fallback = item.get("fallback_role")
            position = order.get(fallback) if isinstance(fallback, str) else None
        if position is None:
            _resolve(roles, item, index)  # a role of the model, but not of its rounds
            raise UnknownRoleError(
                f"prompt[{index}]: role {name!r} is not a round role of the meta template "
                f"({list(order)}); a reserved role belongs in the template's begin or end"
            )
        if position <= last:
            rounds.append([])
        rounds[-1].append(item)
        last = position
    return rounds


def _update(roles: _Roles, turns: list[dict[str, Any]], at: int) -> _Roles:
    # upstream deep-copies every role and updates it with the round's turns; the role
    # dicts here are never changed, so only the roles a turn speaks for get a new dict
    out = dict(roles)
    for turn in turns:
        name = _resolve(roles, turn, at)
        out[name] = {**out[name], **turn}
    return out


def _text(prompt: object, role: str) -> str:
    if isinstance(prompt, str):
        return prompt
    raise InputTypeError(f"role {role!r}: a text prompt cannot hold {type(prompt).__name__}; use parse_api")


def is_batch(prompt: object) -> bool:
    """Upstream's reading of a plain list or tuple of strings and PromptLists: several prompts, not one."""
    return (
        isinstance(prompt, (list, tuple))
        and not isinstance(prompt, PromptList)
        and all(isinstance(p, (str, PromptList)) for p in prompt)
    )


def lm_parse(meta: MetaLike, prompt: PromptList | Sequence[PromptItem] | str, mode: str) -> Any:
    """The string upstream's ``LMTemplateParser.parse_template`` writes (a list of them for a batch)."""
    if isinstance(prompt, str):
        return prompt
    if is_batch(prompt):
        return [lm_parse(meta, p, mode) for p in prompt]  # type: ignore[arg-type]
    items = _items(prompt)
    if not meta.round:
        return plain_join(items)
    roles = _roles(meta)
    out: list[str] = []
    generate = True
    stack: list[tuple[str, int]] = []
    for i, item in enumerate(items):
        if not generate:
            break
        if isinstance(item, str):
            out.append(item)
        elif is_section(item):
            closed = _section(item, i, stack)
            if closed is None or closed[0] not in ("round", "ice"):
                continue
            name, start = closed
            dialogue = list(enumerate(items[start:i], start))
            rounds = _split(dialogue, meta, roles)
            for r, turns in enumerate(rounds):
                role_dict = _update(roles, turns, start)
                for_gen = mode == "gen" and r == len(rounds) - 1 and name == "round"
                text, generate = _round_text(meta, role_dict, for_gen)
                out.append(text)
        elif not stack:
            raise EvalTemplateError(f"prompt[{i}]: a turn outside any section of a PromptList that has sections")
        elif stack[-1][0] in ("begin", "end"):
            role_dict = _update(roles, [item], i)
            merged = role_dict[_resolve(roles, item, i)]
            out.append(
                merged.get("begin", "") + _text(merged.get("prompt", ""), merged["role"]) + merged.get("end", "")
            )
    text = meta.begin + "".join(out)
    return text + meta.end if generate else text


def _round_text(meta: MetaLike, role_dict: _Roles, for_gen: bool) -> tuple[str, bool]:
    out: list[str] = []
    for spec in meta.round:
        merged = role_dict[spec.role]
        out.append(merged.get("begin", ""))
        if for_gen and merged.get("generate", False):
            return "".join(out), False
        out.append(_text(merged.get("prompt", ""), spec.role) + merged.get("end", ""))
    return "".join(out), True


def _section(item: Mapping[str, Any], index: int, stack: list[tuple[str, int]]) -> tuple[str, int] | None:
    """Track section markers; return the name and first index of a section that just closed."""
    section, pos = item.get("section"), item.get("pos")
    if pos == "begin":
        if section not in ("begin", "round", "end", "ice"):
            raise EvalTemplateError(f"prompt[{index}]: unknown section {section!r}")
        stack.append((str(section), index + 1))
        return None
    if pos != "end":
        raise EvalTemplateError(f"prompt[{index}]: section marker pos must be 'begin' or 'end', got {pos!r}")
    if not stack or stack[-1][0] != section:
        raise EvalTemplateError(
            f"prompt[{index}]: closes section {section!r} but the open one is {stack[-1][0] if stack else None!r}"
        )
    return stack.pop()


def is_messages(prompt: object) -> bool:
    """Whether ``prompt`` is a non-empty list of OpenAI-style messages (every item has role and content)."""
    return (
        isinstance(prompt, list)
        and bool(prompt)
        and all(isinstance(m, dict) and "role" in m and "content" in m for m in prompt)
    )


def api_parse(
    meta: MetaLike, prompt: PromptList | Sequence[PromptItem] | str, mode: str, compat: Compat
) -> str | PromptList | list[Any]:
    """What upstream's ``APITemplateParser.parse_template`` returns."""
    if compat == "opencompass" and is_messages(prompt):
        return merge_messages(meta.messages, prompt)  # type: ignore[arg-type]
    if isinstance(prompt, str):
        return prompt
    if is_batch(prompt):
        return [api_parse(meta, p, mode, compat) for p in prompt]  # type: ignore[arg-type]
    items = _items(prompt)
    if not meta.round:
        plain = _api_plain(items, compat)
        if meta.messages and compat == "opencompass" and isinstance(plain, str):
            # upstream fails on a PromptList with a list-form meta template; its messages are woven in, never lost
            return merge_messages(meta.messages, [{"role": "user", "content": plain}])
        return plain
    roles = _roles(meta)
    out: list[dict[str, Any]] = []
    generate = True
    stack: list[tuple[str, int]] = []
    for i, item in enumerate(items):
        if not generate:
            break
        if isinstance(item, str):
            continue  # upstream warns and drops strings for API models
        if is_section(item):
            closed = _section(item, i, stack)
            if closed is None or closed[0] not in ("round", "ice"):
                continue
            name, start = closed
            rounds = _split(list(enumerate(items[start:i], start)), meta, roles)
            for r, turns in enumerate(rounds):
                role_dict = _update(roles, turns, start)
                for_gen = mode == "gen" and name == "round" and r == len(rounds) - 1
                for spec in meta.round:
                    turn, generate = _api_turn(role_dict[spec.role], for_gen, compat)
                    if turn is not None:
                        out.append(turn)
                    if not generate:
                        break
        elif not stack:
            raise EvalTemplateError(f"prompt[{i}]: a turn outside any section of a PromptList that has sections")
        elif stack[-1][0] in ("begin", "end"):
            role_dict = _update(roles, [item], i)
            turn, generate = _api_turn(role_dict[_resolve(roles, item, i)], mode == "gen", compat)
            if turn is not None:
                out.append(turn)
    merged = PromptList()
    for turn in out:
        last = merged[-1] if merged else None
        if isinstance(last, dict) and last["role"] == turn["role"]:
            if not (isinstance(last["prompt"], str) and isinstance(turn["prompt"], str)):
                raise InputTypeError(f"role {turn['role']!r}: content parts cannot be joined with another turn")
            last["prompt"] += "\n" + turn["prompt"]
        else:
            merged.append(turn)
    if meta.begin:
        merged.insert(0, meta.begin)
    return merged


def _api_turn(merged: dict[str, Any], for_gen: bool, compat: Compat) -> tuple[dict[str, Any] | None, bool]:
    if for_gen and merged.get("generate", False):
        return None, False
    if "api_role" not in merged:
        raise EvalTemplateError(f"role {merged['role']!r}: no api_role; set api_role='HUMAN'|'BOT'|'SYSTEM'|'TOOL'")
    if compat == "aisbench" and "prompt" not in merged and "prompt_mm" in merged:
        return {"role": merged["api_role"], "prompt": merged["prompt_mm"]}, True
    text = merged.get("begin", "") + _text(merged.get("prompt", ""), merged["role"]) + merged.get("end", "")
    return {"role": merged["api_role"], "prompt": text}, True


def _api_plain(items: list[PromptItem], compat: Compat) -> str | list[Any]:
    if compat != "aisbench":
        return plain_join(items)
    text: list[str] = []
    parts: list[Any] = []
    sep = ""
    for item in items:
        if isinstance(item, dict) and is_section(item) and set(item) == {"section", "pos"}:
            continue
        if isinstance(item, str):
            if item:
                text.append(sep + item)
        elif item.get("prompt", ""):
            text.append(sep + _text(item["prompt"], str(item.get("role"))))
        elif item.get("prompt_mm", ""):
            parts += item["prompt_mm"]
        sep = "\n"
    joined = "".join(text)
    return joined if joined else parts


def merge_messages(prefix: Sequence[Mapping[str, Any]], messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style ``messages`` with a list-form meta template's ``prefix`` messages woven in.

    As OpenCompass does: walking both lists, a prefix message whose role is the
    current message's has its content put in front of that message's; one whose role
    does not occur in the rest of the messages is inserted where it stands; the rest
    are appended.
    """
    out: list[dict[str, Any]] = []
    m = p = 0
    while m < len(prefix):
        meta = prefix[m]
        if p < len(messages) and meta["role"] == messages[p]["role"]:
            merged = copy.deepcopy(dict(messages[p]))
            merged["content"] = meta["content"] + merged["content"]
            out.append(merged)
            m, p = m + 1, p + 1
        elif p < len(messages) and any(msg["role"] == meta["role"] for msg in messages[p:]):
            out.append(copy.deepcopy(dict(messages[p])))
            p += 1
        else:
            out.append(copy.deepcopy(dict(meta)))
            m += 1
    out.extend(copy.deepcopy(dict(msg)) for msg in messages[p:])
    return out

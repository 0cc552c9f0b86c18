"""Parity mode, dataset side: the prompt text OpenCompass 0.5.x and AISBench produce.

Scores published on leaderboards were computed on upstream's exact prompt text,
quirks included, so ``compat="opencompass"`` / ``compat="aisbench"`` reproduce it:

* fields are filled by a **multi-pass** replace: for each field of the entry, in the
  entry's order, every ``{field}`` of the *whole* text is replaced by ``str(value)``
  (``None`` becomes ``"None"``, a list its repr). A value holding ``{other}`` is filled
  again by a later field, and in-context examples are filled with the test entry's
  fields. Slots the entry lacks stay as written;
* the in-context token is replaced *before* the fields are filled; the separator
  token is removed from prompts but not from in-context examples;
* an AISBench PromptList prints its turns' prompts as JSON strings.

Where upstream crashes, the result is the fixed one of the default mode (a dialogue
``end`` section, whose markers upstream writes as two ``end``\\s) or a typed error.
The differences are listed in docs/evaluation.md.

>>> safe_format("{a} {b}", {"a": "{b}", "b": 1})
'1 1'
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Literal

from prompter.errors import EvalTemplateError, InputTypeError, UnknownLabelError
from prompter.templates.prompt_list import PromptItem, PromptList, copy_item, is_section

__all__ = [
    "AISBenchPromptList",
    "OpenCompassPromptList",
    "Compat",
    "check_compat",
    "check_template",
    "encode",
    "generate_ice",
    "generate_ice_item",
    "generate_item",
    "generate_label_prompt_item",
    "is_meta",
    "new_prompt_list",
    "pl_add",
    "pl_format",
    "pl_replace",
    "plain_join",
    "safe_format",
    "upstream_str",
]

Compat = Literal["opencompass", "aisbench"]
"""Which harness's exact text a template reproduces."""


def check_compat(value: object) -> Compat | None:
    """Validate a ``compat=`` argument."""
    if value is None:
        return None
    if value == "opencompass":
        return "opencompass"
    if value == "aisbench":
        return "aisbench"
    raise EvalTemplateError(f"compat: expected None, 'opencompass' or 'aisbench', got {value!r}")


def safe_format(text: str, values: Mapping[Any, Any]) -> str:
    """Upstream's fill: for each field in order, replace ``{field}`` by ``str(value)`` everywhere."""
    for key, value in values.items():
        text = text.replace("{" + str(key) + "}", str(value))
    return text


class OpenCompassPromptList(PromptList):
    """A PromptList whose ``format``, ``replace`` and ``str()`` are OpenCompass's.

    ``format`` fills field after field (a value holding ``{other}`` is filled again);
    ``replace`` splices a PromptList into strings. Compat-mode templates return it.

    >>> OpenCompassPromptList(["{a}-{b}"]).format(a="{b}", b=1)
    OpenCompassPromptList(['1-1'])
    """

    compat: Compat = "opencompass"

    def format(self, **values: Any) -> PromptList:
        return pl_format(self, values, self.compat)

    def replace(self, src: str, dst: str | PromptList) -> PromptList:
        return pl_replace(self, src, dst, self.compat)

    def __str__(self) -> str:
        return upstream_str(self, self.compat)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list.__repr__(self)})"


class AISBenchPromptList(OpenCompassPromptList):
    """As :class:`OpenCompassPromptList`, but ``str()`` is AISBench's: each turn's prompt as a JSON string.

    >>> str(AISBenchPromptList(["Q: ", {"role": "HUMAN", "prompt": "hi"}]))
    'Q: "hi"'
    """

    compat: Compat = "aisbench"


def upstream_str(prompt: Iterable[PromptItem], compat: Compat) -> str:
    """``str()`` of a PromptList as upstream writes it (markers and prompt-less turns write nothing)."""
    out: list[str] = []
    for index, item in enumerate(prompt):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            if "prompt" in item:
                prompt_value = item["prompt"]
                if compat == "aisbench":
                    out.append(json.dumps(prompt_value))
                elif isinstance(prompt_value, str):
                    out.append(prompt_value)
                else:
                    raise InputTypeError(
                        f"prompt[{index}]['prompt']: expected a str, got {type(prompt_value).__name__}"
                    )
        else:
            raise InputTypeError(f"prompt[{index}]: expected a str or a dict, got {type(item).__name__}")
    return "".join(out)


def new_prompt_list(compat: Compat, items: Iterable[PromptItem] = ()) -> PromptList:
    """A PromptList whose ``str()`` is the one ``compat``'s harness writes."""
    return AISBenchPromptList(items) if compat == "aisbench" else OpenCompassPromptList(items)


def pl_format(prompt: Iterable[PromptItem], values: Mapping[Any, Any], compat: Compat) -> PromptList:
    """Upstream's ``PromptList.format``: every string and every turn's prompt through :func:`safe_format`."""
    out = new_prompt_list(compat)
    for item in prompt:
        if isinstance(item, dict):
            new = dict(item)  # the items are the template's private copies (see encode)
            if isinstance(item.get("prompt"), str):
                new["prompt"] = safe_format(item["prompt"], values)
            out.append(new)
        else:
            out.append(safe_format(item, values))
    return out


def pl_replace(prompt: Iterable[PromptItem], src: str, dst: object, compat: Compat) -> PromptList:
    """Upstream's ``PromptList.replace``.

    A PromptList ``dst`` is spliced into strings; a plain ``list`` (what upstream's
    retriever builds from dialogue examples) is neither a str nor a PromptList there,
    so a string holding ``src`` is dropped, as upstream drops it.
    """
    out = new_prompt_list(compat)
    for index, item in enumerate(prompt):
        if isinstance(item, str):
            if isinstance(dst, str):
                out.append(item.replace(src, dst))
            elif isinstance(dst, PromptList):
                parts = item.split(src)
                for i, part in enumerate(parts):
                    if part:
                        out.append(part)
                    if i < len(parts) - 1:
                        out.extend(copy_item(d) if isinstance(d, dict) else d for d in dst)
        elif isinstance(item, dict):
            new = dict(item)  # the items are the template's private copies (see encode)
            text = item.get("prompt")
            if isinstance(text, str) and src in text:
                if not isinstance(dst, str):
                    raise InputTypeError(
                        f"prompt[{index}]: {src!r} is inside a turn's prompt, which can only take a string "
                        f"(upstream raises TypeError here); put the ice token in its own string item"
                    )
                new["prompt"] = text.replace(src, dst)
            out.append(new)
        else:
            raise InputTypeError(f"prompt[{index}]: expected a str or a dict, got {type(item).__name__}")
    return out


def pl_add(left: list[PromptItem], right: object) -> list[PromptItem]:
    """Upstream's ``PromptList + x``: an empty operand adds nothing, a str is one item."""
    if not right:
        return list(left)
    if isinstance(right, str):
        return [*left, right]
    return [*left, *right]  # type: ignore[misc]


def encode(raw: object, *, ice: bool, compat: Compat) -> str | PromptList:
    """A template as upstream encodes it: a str as is, a dialogue as a PromptList with markers.

    The ``end`` section is opened with a ``begin`` marker (upstream writes two ``end``
    markers, which its own parsers then cannot read).
    """
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, Mapping) or "round" not in raw:
        raise EvalTemplateError(f"template: expected a string or a dialogue dict with a 'round', got {raw!r}")
    out = new_prompt_list(compat)
    if "begin" in raw and not ice:
        out.append({"section": "begin", "pos": "begin"})
        _extend(out, raw["begin"])
        out.append({"section": "begin", "pos": "end"})
    section = "ice" if ice else "round"
    out.append({"section": section, "pos": "begin"})
    rounds = raw["round"]
    if not isinstance(rounds, (list, tuple)):
        raise EvalTemplateError(f"template['round']: expected a list of role turns, got {type(rounds).__name__}")
    _extend(out, rounds)
    out.append({"section": section, "pos": "end"})
    if "end" in raw and not ice:
        out.append({"section": "end", "pos": "begin"})
        _extend(out, raw["end"])
        out.append({"section": "end", "pos": "end"})
    return out


def _extend(out: PromptList, part: object) -> None:
    items = part if isinstance(part, (list, tuple)) else [part]
    for item in items:
        if not isinstance(item, (str, dict)):
            raise EvalTemplateError(f"template: expected strings and role turn dicts, got {type(item).__name__}")
        out.append(copy_item(item) if isinstance(item, dict) else item)


def is_meta(template: object) -> bool:
    """Upstream's test for a dialogue template: a dict whose keys are all begin/round/end."""
    return isinstance(template, Mapping) and all(k in ("begin", "round", "end") for k in template)


def check_template(template: object, ice_token: str | None) -> None:
    """Upstream's construction checks, as typed errors."""
    if isinstance(template, str):
        if ice_token and ice_token not in template:
            raise EvalTemplateError(f"template: the ice_token {ice_token!r} does not occur in {template!r}")
        return
    if not isinstance(template, Mapping):
        raise EvalTemplateError(f"template: expected a str or a dict, got {type(template).__name__}")
    for key, value in template.items():
        if not isinstance(value, (str, list, dict)):
            raise EvalTemplateError(f"template[{key!r}]: expected a str, list or dict, got {type(value).__name__}")
        if isinstance(value, str) and ice_token and ice_token not in value:
            raise EvalTemplateError(f"template[{key!r}]: the ice_token {ice_token!r} does not occur in {value!r}")


def _fill(tp: str | PromptList, values: Mapping[Any, Any], compat: Compat) -> str | PromptList:
    if isinstance(tp, str):
        return safe_format(tp, values)
    return pl_format(tp, values, compat)


def _replace(tp: str | PromptList, src: str, dst: object, compat: Compat) -> str | PromptList:
    if isinstance(tp, str):
        if not isinstance(dst, str):
            raise InputTypeError(
                f"ice: a string template takes its in-context examples as a string, got {type(dst).__name__}"
            )
        return tp.replace(src, dst)
    return pl_replace(tp, src, dst, compat)


def _entry(entry: object) -> Mapping[Any, Any]:
    if not isinstance(entry, Mapping):
        raise InputTypeError(f"entry: expected a dict of fields, got {type(entry).__name__}")
    return entry


def _label_template(template: Mapping[Any, Any], label: Hashable) -> Any:
    try:
        return template[label]
    except (KeyError, TypeError):
        raise UnknownLabelError(
            f"label {label!r}: the template has no candidate for it (labels: {list(template)!r})"
        ) from None


def generate_item(
    template: str | Mapping[Any, Any],
    entry: Mapping[Any, Any],
    ice_token: str | None,
    sep_token: str | None,
    compat: Compat,
    output_field: Hashable | None,
    output_field_replace_token: str,
    ice_field_replace_token: object,
) -> str | PromptList:
    """Upstream's ``PromptTemplate.generate_item``."""
    values = _entry(entry)
    if isinstance(template, str):
        tp: str | PromptList = template
    elif is_meta(template):
        tp = encode(template, ice=False, compat=compat)
    else:
        tp = encode(next(iter(template.values())), ice=False, compat=compat)
    if ice_token is not None:
        tp = _replace(tp, ice_token, ice_field_replace_token, compat)
    if sep_token is not None:
        tp = _replace(tp, sep_token, "", compat)
    if output_field is not None:
        values = dict(values)
        values[output_field] = output_field_replace_token
    return _fill(tp, values, compat)


def generate_ice_item(
    template: str | Mapping[Any, Any],
    entry: Mapping[Any, Any],
    label: Hashable,
    ice_token: str | None,
    compat: Compat,
) -> str | PromptList:
    """Upstream's ``generate_ice_item``; the separator token stays (upstream drops the result of removing it)."""
    values = _entry(entry)
    raw: Any = template if isinstance(template, str) or is_meta(template) else _label_template(template, label)
    tp = encode(raw, ice=True, compat=compat)
    if ice_token is not None:
        tp = _replace(tp, ice_token, "", compat)
    return _fill(tp, values, compat)


def generate_label_prompt_item(
    template: str | Mapping[Any, Any],
    entry: Mapping[Any, Any],
    ice: object,
    label: Hashable,
    ice_token: str | None,
    sep_token: str | None,
    compat: Compat,
    remain_sep: bool,
) -> str | PromptList:
    """Upstream's ``generate_label_prompt_item``."""
    values = _entry(entry)
    raw: Any = template if isinstance(template, str) or is_meta(template) else _label_template(template, label)
    tp = encode(raw, ice=False, compat=compat)
    if not remain_sep and sep_token is not None:
        tp = _replace(tp, sep_token, "", compat)
    if ice_token is not None:
        tp = _replace(tp, ice_token, ice, compat)
    return _fill(tp, values, compat)


def generate_ice(
    template: str | Mapping[Any, Any],
    examples: Iterable[Mapping[Any, Any]],
    labels: Iterable[Hashable],
    ice_token: str | None,
    compat: Compat,
    separator: str,
    eos: str,
) -> str | list[PromptItem]:
    """Upstream's retriever ``generate_ice``: a dialogue template joins with ``""`` and ends with ``""``.

    Dialogue examples come back as a PromptList ending with the end token (an item,
    even when empty); string examples as ``separator.join(...) + eos``.
    """
    if is_meta(template) and not isinstance(template, str):
        separator, eos = "", ""
    items = [
        generate_ice_item(template, e, label, ice_token, compat) for e, label in zip(examples, labels, strict=True)
    ]
    if items and isinstance(items[0], PromptList):
        # upstream starts from a plain [] but `[] += PromptList` runs PromptList.__radd__,
        # so the result is a PromptList
        out = new_prompt_list(compat)
        for item in items:
            out.extend(pl_add(list(item), separator))
        out.append(eos)
        return out
    return separator.join(str(item) for item in items) + eos


def plain_join(prompt: Iterable[PromptItem]) -> str:
    """Upstream's text for a model without a meta template.

    Non-empty strings and prompts are joined with ``"\\n"``; an empty one still
    sets the separator, so a prompt that starts with an empty item starts with ``"\\n"``.
    """
    out: list[str] = []
    sep = ""
    for item in prompt:
        if isinstance(item, dict) and is_section(item) and set(item) == {"section", "pos"}:
            continue
        if isinstance(item, str):
            if item:
                out.append(sep + item)
        else:
            text = item.get("prompt", "")
            if text:
                if not isinstance(text, str):
                    raise InputTypeError("prompt: multimodal content cannot be written into a text prompt")
                out.append(sep + text)
        sep = "\n"
    return "".join(out)

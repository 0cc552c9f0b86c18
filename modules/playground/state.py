"""The playground's state (the URL's query parameters) read into one ``generate_prompt`` call.

The parameters are those of ``prompter render``, read the same way::

    prompter      chat | alpaca                       (default chat)
    instruction   the instruction template; a JSON object {"system": ..., "user": ...} for a split one
    input         a JSON object of slot values when it starts with "{", else text
    extra_keys    comma-separated
    history       JSON: [["q", "a"], ...] or message dicts
    tools         JSON list of tools, passed at call time
    model_format  a registered family (qwen2.5, llama-3.1, ...)
    format        text, openai, anthropic, gemini, ollama, ollama_generate, dashscope, zhipu

A value that cannot be read raises :class:`FieldError` naming the parameter, so the
page can show the message next to the field at fault.

>>> call = read_state({"instruction": "Answer about {topic}.", "input": '{"topic": "cats"}'})
>>> call.prompter.generate_prompt(call.input, model_format="qwen2.5")[:10]
'<|im_start'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modules.errors import ModuleError
from prompter import AlpacaPrompter, ChatPrompter, PrompterBase
from prompter.errors import PromptError
from prompter.instruction import InstructionTemplate
from prompter.prompters.boundary import slot_text

__all__ = [
    "DIALECTS",
    "FIELDS",
    "MAX_DEPTH",
    "MAX_FIELD_CHARS",
    "MAX_OUTPUT_CHARS",
    "Call",
    "FieldError",
    "read_state",
]

FIELDS = ("prompter", "instruction", "input", "extra_keys", "history", "tools", "model_format", "format")
"""The query parameters the page keeps its state in, in the order of the form."""

DIALECTS = ("text", "openai", "anthropic", "gemini", "ollama", "ollama_generate", "dashscope", "zhipu")
"""The values ``format`` takes (``generate_prompt(format=...)``)."""

MAX_FIELD_CHARS = 100_000
"""One field's longest value: a prompt to look at, not a corpus."""

MAX_OUTPUT_CHARS = 1_000_000
"""The longest rendering the playground builds: every field at its limit, each filled in once, fits with
room to spare; a slot named many times with a long value (``{a}{a}{a}...``) does not, and is refused
before anything is rendered."""

MAX_DEPTH = 32
"""How deeply a JSON field may nest (history and tools are shallow; a bomb is not)."""


class FieldError(ModuleError, ValueError):
    """A playground field that cannot be read; ``field`` names the query parameter at fault."""

    def __init__(self, field: str, message: str, kind: str = "FieldError") -> None:
        super().__init__(message if message.startswith(f"{field}: ") else f"{field}: {message}")
        self.field = field
        self.kind = kind
        """The name of the error behind this one (a prompter's own, when it raised)."""


@dataclass(frozen=True)
class Call:
    """One ``generate_prompt`` call, ready to run: ``prompter.generate_prompt(input, **options)``."""

    prompter: PrompterBase
    input: Any
    history: Any
    tools: Any
    model_format: str | None
    format: str | None

    def run(self) -> Any:
        """What ``generate_prompt`` returns for this state (a str, or a dict for an API dialect)."""
        options: dict[str, Any] = {"format": self.format, "model_format": self.model_format}
        return self.prompter.generate_prompt(self.input, history=self.history, tools=self.tools, **options)


def read_state(query: Mapping[str, Any]) -> Call:
    """The call a page state stands for; :class:`FieldError` (or a prompter's own error) when it has none."""
    unknown = sorted(str(k)[:40] for k in query if k not in FIELDS)
    if unknown:
        raise FieldError(unknown[0], f"not a playground field; the fields are {', '.join(FIELDS)}")
    values = {name: _text(query, name) for name in FIELDS}
    kind = values["prompter"] or "chat"
    if kind not in ("chat", "alpaca"):
        raise FieldError("prompter", f"expected chat or alpaca, got {kind[:40]!r}")
    extra_keys = [k.strip() for k in (values["extra_keys"] or "").split(",") if k.strip()] or None
    instruction = _instruction(values["instruction"])
    cls = ChatPrompter if kind == "chat" else AlpacaPrompter
    try:
        prompter = cls(instruction, extra_keys=extra_keys)
    except PromptError as exc:  # the prompter's own typed error, said next to the field it names
        raise _at("extra_keys" if str(exc).startswith("extra_keys") else "instruction", exc) from None
    text = values["input"]
    slot = prompter.slots[0] if prompter.slots else "input"
    value: Any = _json("input", text, slot) if text is not None and text.lstrip().startswith("{") else text
    _check_filled_size(instruction, value, prompter.slots)
    fmt = values["format"]
    if fmt is not None and fmt not in DIALECTS:
        raise FieldError("format", f"expected one of {', '.join(DIALECTS)}, got {fmt[:40]!r}")
    return Call(
        prompter=prompter,
        input=value,
        history=_json("history", values["history"]),
        tools=_json("tools", values["tools"]),
        model_format=values["model_format"],
        format=None if fmt == "text" else fmt,
    )


def _check_filled_size(instruction: Any, value: Any, slots: tuple[str, ...]) -> None:
    """Refuse, before rendering, an instruction whose filled text alone would pass :data:`MAX_OUTPUT_CHARS`:
    the rendering holds it, so this is the least it would be (a slot named N times holds its value N times, a
    number as the text it fills in)."""
    if isinstance(value, dict):
        filled = {name: _slot_text(v) for name, v in value.items() if isinstance(name, str)}
        filling = {name: text for name, text in filled.items() if text is not None}
    else:
        text = _slot_text(value)
        filling = {slots[0]: text} if text is not None and len(slots) == 1 else {}
    parts = instruction.values() if isinstance(instruction, dict) else [instruction or ""]
    size = sum(InstructionTemplate(part).filled_length(filling) for part in parts)
    if size > MAX_OUTPUT_CHARS:
        raise FieldError(
            "input",
            f"the filled instruction would be {size} characters, over the playground's limit of "
            f"{MAX_OUTPUT_CHARS}: a slot named many times repeats its value each time; shorten the value "
            "or name the slot fewer times",
            kind="RenderTooLarge",
        )


def _slot_text(value: Any) -> str | None:
    """The text *value* fills a slot with, as the prompter writes it (an int or a float as ``str()`` gives it:
    ``12`` as 2 characters, a 4 300-digit int as 4 300), or None for a value that fills none (the prompter
    refuses a bool, a list, an object or null by itself, naming the slot)."""
    if type(value) is str:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return slot_text(value, "input")
    return None


def _text(query: Mapping[str, Any], name: str) -> str | None:
    value = query.get(name)
    if value is None or value == "":
        return None  # an empty field is an absent one: the page leaves it out of the URL
    if not isinstance(value, str):
        kind = type(value).__name__
        raise FieldError(name, f"expected text, got {kind}; send each field's value as a JSON string, as the page does")
    if len(value) > MAX_FIELD_CHARS:
        raise FieldError(name, f"over the limit of {MAX_FIELD_CHARS} characters ({len(value)}); shorten it")
    _check_unicode(name, value)
    return value


def _check_unicode(field: str, value: Any) -> None:
    """Refuse a lone surrogate (a half of a UTF-16 pair, from a ``\\ud800`` escape) in any string of *value*:
    it is no character, no rendering can be sent back as UTF-8, and the answer would be a 500."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = ord(item[exc.start])
                raise FieldError(
                    field, f"not valid Unicode: a lone surrogate U+{bad:04X}; remove it, or give the whole character"
                ) from None
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _instruction(text: str | None) -> Any:
    """A JSON object with only ``system``/``user`` string values is a split instruction; anything else is text
    (a template may well start with ``{slot}``)."""
    if text is None or not text.lstrip().startswith("{"):
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict) and value and set(value) <= {"system", "user"}:
        if all(isinstance(v, str) for v in value.values()):
            _check_unicode("instruction", value)
            return value
    return text


_JSON_REMEDY = {
    "history": 'write JSON, its strings in double quotes: [["question", "answer"], ...] or '
    '[{"role": "user", "content": "..."}, ...]',
    "tools": 'write a JSON list, its strings in double quotes: [{"type": "function", "function": {"name": "...", '
    '"parameters": {"type": "object", "properties": {...}}}}]',
    "input": 'an input that starts with "{" is a JSON object of slot values, its strings in double quotes: '
    '{"SLOT": "..."} (text that itself starts with "{" goes inside one, as the value of its slot)',
}


def _json(field: str, text: str | None, slot: str = "input") -> Any:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except RecursionError:
        raise FieldError(field, f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise FieldError(field, f"invalid JSON: {exc}; {_JSON_REMEDY[field].replace('SLOT', slot)}") from None
    if _depth(value) > MAX_DEPTH:
        raise FieldError(field, f"nested deeper than {MAX_DEPTH} levels")
    _check_unicode(field, value)
    return value


def _depth(value: Any) -> int:
    """How many objects and arrays nest in ``value`` (``"q"`` is 0, ``["q"]`` 1, ``{"a": ["q"]}`` 2)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list)):
            continue  # a string or number is no level of nesting
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _at(field: str, exc: Exception) -> FieldError:
    return FieldError(field, str(exc), kind=type(exc).__name__)

"""PrompterBase: input -> Conversation -> one renderer.

A prompter is declared, not re-implemented. A subclass states

* ``template``: its string layout for a local model with no model bound, using
  the fields ``{sos} {eos} {soh} {eoh} {soa} {eoa} {system} {instruction}
  {tools} {history} {user} {input}``;
* ``instruction_template``: how the developer's instruction is wrapped, with
  ``{instruction}`` and ``{extra_keys}`` (the extra-keys block);
* what it allows (``allows_history``, ``allows_tools``, ``allows_free_input``)
  and, optionally, ``preprocess`` to reshape input;

and inherits validation and every output format. A declaration that does not
fit together raises :class:`~prompter.errors.DeclarationError` when the class
is defined.

>>> class Shout(PrompterBase):
...     template = "{system}\\n{instruction}{user}{input}!"
...     allows_tools = allows_history = False
>>> Shout("Repeat after me: ", system="").generate_prompt("hey")
'\\nRepeat after me: hey!'

Why this file is long: the declaration checks run at class definition and the
call path they protect (input, history, tools, render) must be read together; the input
boundary (``boundary.py``) and the fast path (``fastpath.py``) already live apart.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from prompter.conversation import Conversation
from prompter.errors import (
    DeclarationError,
    HistoryError,
    InputTypeError,
    MissingSlotError,
    PromptTypeError,
    PromptValueError,
    ToolsError,
    UnexpectedKeyError,
    UnsupportedContentError,
)
from prompter.formats.model_format import GENERIC
from prompter.instruction import SLOT_PATTERN, InstructionTemplate
from prompter.messages import Message, Turn, messages_from, normalize_history
from prompter.prompters.boundary import plain_copy, shown, slot_text
from prompter.prompters.fastpath import FastPath
from prompter.prompters.trailing import render_trailing, split_at_assistant_prompt, trailing_count
from prompter.render import render_dialect
from prompter.render.strategies import Strategy, arrange_text, exact_options
from prompter.render.text import LAYOUT_FIELDS, LayoutPlan, render_layout, render_with_model, tools_block
from prompter.settings import default_system_prompt
from prompter.tools import ToolSet

if TYPE_CHECKING:
    from prompter.formats.model_format import ModelFormat

__all__ = ["EXTRA_KEYS_HEADER", "Format", "PrompterBase"]

Format = Literal["text", "openai", "anthropic", "gemini", "ollama", "ollama_generate", "dashscope", "zhipu"]

EXTRA_KEYS_HEADER = "Here are some extra messages you can referred to:\n\n"
_SCALARS = (str, int, float)
_NO_VALUES: dict[str, str] = {}


def _extra_keys_block(keys: tuple[str, ...]) -> str:
    if not keys:
        return ""
    return EXTRA_KEYS_HEADER + "".join(f"### {key}:\n{{{key}}}\n\n" for key in keys)


def _as_key_list(value: object, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    value = plain_copy(value, name)
    keys = [value] if isinstance(value, str) else value
    if not isinstance(keys, (list, tuple)):
        raise PromptTypeError(f"{name}: expected a str or a list of str, got {type(value).__name__}")
    for key in keys:
        if not isinstance(key, str) or not SLOT_PATTERN.fullmatch("{" + key + "}"):
            raise PromptValueError(f"{name}: {shown(key)} is not an identifier and cannot name a slot")
    return tuple(dict.fromkeys(keys))


def _split_instruction(instruction: object) -> tuple[str, str, bool]:
    """(system-level part, user-level part, whether it was a ``{"system", "user"}`` dict)."""
    if instruction is None:
        return "", "", False
    instruction = plain_copy(instruction, "instruction")
    if isinstance(instruction, str):
        return instruction, "", False
    if isinstance(instruction, Mapping):
        unknown = [shown(key) for key in instruction if key not in ("system", "user")]
        if unknown:
            raise PromptValueError(
                f"instruction: a dict instruction takes only 'system' and 'user', got {', '.join(unknown)}"
            )
        parts = []
        for key in ("system", "user"):
            part = instruction.get(key)
            if part is None:
                part = ""
            elif not isinstance(part, str):  # checked before any truth test: a value's __bool__ is the caller's code
                raise PromptTypeError(f"instruction[{key!r}]: expected str, got {type(part).__name__}")
            parts.append(part)
        return parts[0], parts[1], True
    raise PromptTypeError(
        f"instruction: expected a str or {{'system': ..., 'user': ...}}, got {type(instruction).__name__}"
    )


class PrompterBase:
    """Turns an instruction with slots, extra keys, tools, history and input into a prompt.

    See the module docstring for how to declare a subclass.
    """

    template: ClassVar[str] = "{system}{instruction}{tools}{history}{user}{input}"
    """The string layout used when no model is bound."""
    instruction_template: ClassVar[str] = "{instruction}{extra_keys}"
    """Wraps the developer's instruction; ``{extra_keys}`` is the extra-keys block."""
    dict_instruction_template: ClassVar[str | None] = None
    """If set, wraps the system part of a ``{"system": ..., "user": ...}`` instruction instead.

    The system part then goes in this wrapper (no ``instruction_template`` and its newlines) and
    the extra-keys block follows the user part: LazyLLM 1.4.0's layout, which Chat and Alpaca
    declare. Unset, a dict instruction's system part is wrapped like a str instruction.
    """
    dict_extra_keys_separator: ClassVar[str] = ""
    """Between a dict instruction's user part and the extra-keys block, when there are extra keys."""
    allows_history: ClassVar[bool] = True
    """Whether ``history=`` is accepted."""
    allows_tools: ClassVar[bool] = True
    """Whether tools are accepted."""
    allows_free_input: ClassVar[bool] = True
    """Whether input that fills no slot becomes the user's turn (else every key must be a slot)."""
    implicit_input_key: ClassVar[str | None] = None
    """With no slot and no extra key, this extra key receives the input."""
    response_split: ClassVar[str | None] = None
    """``get_response`` keeps what follows the last occurrence of this marker."""
    uses_system: ClassVar[bool] = True
    """Whether a default system prompt is added."""

    _layout: ClassVar[InstructionTemplate]
    _split: ClassVar[tuple[InstructionTemplate, InstructionTemplate] | None]
    _has_preprocess: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._compile_declaration()

    @classmethod
    def _compile_declaration(cls) -> None:
        if not isinstance(cls.template, str) or not isinstance(cls.instruction_template, str):
            raise DeclarationError(f"{cls.__name__}.template and .instruction_template must be str")
        layout = InstructionTemplate(cls.template)
        unknown = sorted(set(layout.slots) - LAYOUT_FIELDS)
        if unknown:
            raise DeclarationError(
                f"{cls.__name__}.template uses unknown field(s) {unknown}; allowed: {sorted(LAYOUT_FIELDS)}"
            )
        wrapper = InstructionTemplate(cls.instruction_template)
        stray = sorted(set(wrapper.slots) - {"instruction", "extra_keys"})
        if "instruction" not in wrapper.slots or stray:
            raise DeclarationError(
                f"{cls.__name__}.instruction_template must contain {{instruction}} and may contain "
                f"{{extra_keys}}; got {cls.instruction_template!r}"
            )
        dict_wrapper = cls.dict_instruction_template
        if dict_wrapper is not None and (
            not isinstance(dict_wrapper, str) or InstructionTemplate(dict_wrapper).slots != ("instruction",)
        ):
            raise DeclarationError(
                f"{cls.__name__}.dict_instruction_template must contain {{instruction}} and no other slot; "
                f"got {dict_wrapper!r}"
            )
        _check_declared_values(cls)
        # every field that can carry something must have a place, or the text output would drop it
        needed = {"instruction", "user"}
        needed |= {name for name, wanted in (("system", cls.uses_system), ("tools", cls.allows_tools),
                                             ("history", cls.allows_history), ("input", cls.allows_free_input))
                   if wanted}
        missing = sorted(needed - set(layout.slots))
        if missing:
            fields = ", ".join("{" + name + "}" for name in missing)
            raise DeclarationError(
                f"{cls.__name__}.template has no {fields}: what the class allows would be dropped from its "
                "text output; add the field(s) or set allows_tools / allows_history / allows_free_input / "
                "uses_system to False"
            )
        cls._layout = layout
        cls._split = split_at_assistant_prompt(layout)  # where messages closing the current turn go
        cls._has_preprocess = cls.preprocess is not PrompterBase.preprocess if "PrompterBase" in globals() else False

    def __init__(
        self,
        instruction: str | Mapping[str, str] | None = None,
        extra_keys: str | list[str] | None = None,
        show: bool = False,
        tools: list[dict[str, Any]] | None = None,
        history: list[Any] | None = None,
        *,
        system: str | None = None,
        enable_system: bool = True,
        extro_keys: str | list[str] | None = None,
    ) -> None:
        if extro_keys is not None:
            depth = 2 if type(self).__init__ is PrompterBase.__init__ else 3  # point at the caller's line
            warnings.warn("extro_keys is deprecated; use extra_keys", DeprecationWarning, stacklevel=depth)
            if extra_keys is not None:
                raise PromptValueError("pass extra_keys or its deprecated alias extro_keys, not both")
            extra_keys = extro_keys
        system_src, user_src, is_dict = _split_instruction(instruction)
        keys = _as_key_list(extra_keys, "extra_keys")
        if (
            not keys
            and self.implicit_input_key
            and not SLOT_PATTERN.search(system_src)
            and not SLOT_PATTERN.search(user_src)
        ):
            keys = (self.implicit_input_key,)
        if is_dict and self.dict_instruction_template is not None:
            # LazyLLM's layout: its own wrapper for the system part, extra keys after the user part
            wrapped = InstructionTemplate(self.dict_instruction_template).fill({"instruction": system_src})
            if keys:
                user_src += self.dict_extra_keys_separator + _extra_keys_block(keys)
        elif system_src or keys:
            wrapped = InstructionTemplate(self.instruction_template).fill(
                {"instruction": system_src, "extra_keys": _extra_keys_block(keys)}
            )
        else:
            wrapped = ""
        self._instruction = InstructionTemplate(wrapped)
        self._user = InstructionTemplate(user_src)
        self._slots: tuple[str, ...] = tuple(dict.fromkeys(self._instruction.slots + self._user.slots))
        self._slot_set = frozenset(self._slots)
        self.extra_keys: tuple[str, ...] = keys
        self.show = _flag(show, "show")
        tools = plain_copy(tools, "tools", ToolsError)
        # an empty list offers no tools and locks nothing; anything but a list is the validator's to name
        # (its truth value is never asked: that would run the caller's __bool__)
        offered = tools is not None and not _empty(tools)
        if offered and not self.allows_tools:
            raise ToolsError(f"{type(self).__name__} takes no tools")
        self._tools = ToolSet.from_user(tools, shared=True) if offered else None
        history = plain_copy(history, "history", HistoryError)
        if history is not None and not _empty(history) and not self.allows_history:
            raise HistoryError(f"{type(self).__name__} takes no history")
        self._history: tuple[Turn, ...] = normalize_history(history, "history")
        if system is not None and not issubclass(type(system), str):
            raise PromptTypeError(f"system: expected str, got {type(system).__name__}")
        self._system_arg = None if system is None else str.__str__(system)
        self._enable_system = _flag(enable_system, "enable_system") and self.uses_system
        self._library_system = default_system_prompt()
        self._plans: dict[tuple[int, bool], LayoutPlan] = {}
        self._system = self.system_prompt(None)
        self._fast = self._compile_fast_path()

    # ---- introspection -------------------------------------------------------------

    @property
    def slots(self) -> tuple[str, ...]:
        """Every key the input may fill: instruction slots, user-instruction slots and extra keys."""
        return self._slots

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tools locked at construction (a fresh list), or None."""
        return self._tools.as_list() if self._tools is not None else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(slots={list(self._slots)!r}, tools={self._tools!r})"

    # ---- the flow ------------------------------------------------------------------

    def preprocess(self, input: Any) -> Any:
        """Hook: reshape the input before slots are filled. Returns it unchanged by default."""
        return input

    def system_prompt(self, model_format: ModelFormat | None = None) -> str:
        """The system prompt: ``system=``, else the bound model's default, else the library default."""
        if not self._enable_system:
            return ""
        if self._system_arg is not None:
            return self._system_arg
        if model_format is not None and model_format.default_system is not None:
            return model_format.default_system
        return self._library_system

    def _split_input(self, input: Any) -> tuple[dict[str, str], str, tuple[Message, ...]]:
        """(slot values, free input text, current-turn messages)."""
        slots = self._slots
        if type(input) is str and not slots:
            if self.allows_free_input:
                return _NO_VALUES, input, ()
        if isinstance(input, _SCALARS) and not isinstance(input, bool):
            text = slot_text(input, "input")
            if not slots:
                if not self.allows_free_input:
                    raise InputTypeError(f"{type(self).__name__} has no slot to receive a {type(input).__name__} input")
                return {}, text, ()
            if len(slots) == 1:
                return {slots[0]: text}, "", ()
            raise MissingSlotError(
                f"a {type(input).__name__} input fills one slot, but the template has {len(slots)}: "
                f"{', '.join(slots)}; pass a dict with these keys"
            )
        if input is None:
            if slots:
                raise MissingSlotError(f"no input given, but the template needs slot(s): {', '.join(slots)}")
            return {}, "", ()
        if isinstance(input, Mapping):
            # a message: a role, or a speaker's name with content (an agent's turn in AgentScope's memory)
            message = "role" in input or ("name" in input and "content" in input)
            if message and not any(key in self._slot_set for key in input):
                return self._message_input(input)
            return self._split_mapping(input)
        if isinstance(input, (list, tuple)) and any(isinstance(m, Mapping) for m in input):
            return self._message_input(input)  # a list of messages: an item that is none is named where it stands
        raise InputTypeError(
            f"input: expected str, int, a dict of slot values or message dict(s), got {type(input).__name__}"
        )

    def _message_input(self, value: Any) -> tuple[dict[str, str], str, tuple[Message, ...]]:
        if not self.allows_free_input:  # no key can carry it either: name the remedy that works
            raise InputTypeError(
                f"input is a message, but {type(self).__name__} has no user turn for messages; pass the text "
                f"as a str or a dict of its slot(s): {', '.join(self._slots) or 'none'} (or use ChatPrompter)"
            )
        if self._slots:
            raise MissingSlotError(
                f"input is a message, but the template needs slot(s): {', '.join(self._slots)}; pass a dict "
                "with these keys and put the message under one more key"
            )
        return self._free_input(value, "input")

    def _split_mapping(self, input: Mapping[Any, Any]) -> tuple[dict[str, str], str, tuple[Message, ...]]:
        values: dict[str, str] = {}
        missing = []
        for slot in self._slots:
            if slot not in input:
                missing.append(slot)
                continue
            value = input[slot]
            if type(value) is str:
                values[slot] = value
            elif isinstance(value, _SCALARS) and not isinstance(value, bool):
                values[slot] = slot_text(value, f"input[{slot!r}]")
            else:
                raise InputTypeError(
                    f"input[{slot!r}]: a slot value must be str, int or float, got {type(value).__name__}"
                )
        if missing:
            example = ", ".join(f"{slot!r}: ..." for slot in missing)
            raise MissingSlotError(
                f"input is missing slot(s): {', '.join(map(repr, missing))}; give each a value in the input dict, "
                f"e.g. {{{example}}}"
            )
        for key in input:
            if type(key) is not str:
                raise InputTypeError(f"input: keys must be str, got {type(key).__name__} key {shown(key)}")
        rest = [key for key in input if key not in self._slot_set]
        if not rest:
            return values, "", ()
        if not self.allows_free_input or len(rest) > 1:
            allowed = ", ".join(map(repr, self._slots)) or "none"
            rule = (
                "at most one key besides the slots may carry the user's message"
                if self.allows_free_input
                else "every key must be a slot or an extra key"
            )
            unexpected = ", ".join(map(repr, rest))
            raise UnexpectedKeyError(f"input has unexpected key(s) {unexpected}: {rule}; slots: {allowed}")
        key = rest[0]
        _, text, current = self._free_input(input[key], f"input[{key!r}]")
        return values, text, current

    def _free_input(self, value: Any, where: str) -> tuple[dict[str, str], str, tuple[Message, ...]]:
        if not self.allows_free_input:
            raise InputTypeError(f"{where}: {type(self).__name__} has no user turn for free input; use a slot")
        if type(value) is str:
            return {}, value, ()
        if isinstance(value, _SCALARS) and not isinstance(value, bool):
            return {}, slot_text(value, where), ()
        if isinstance(value, Mapping) or (isinstance(value, (list, tuple)) and value):
            return {}, "", messages_from(value, where)
        raise InputTypeError(f"{where}: expected str, a message dict or a list of them, got {type(value).__name__}")

    def _tools_for(self, tools: object) -> ToolSet | None:
        if tools is None or (isinstance(tools, (list, tuple)) and not tools):
            return self._tools  # an empty list offers nothing and overrides nothing, as in LazyLLM
        if self._tools is not None:
            raise ToolsError(
                f"{type(self).__name__} was constructed with tools, which locks the tool set; "
                "do not pass tools= at call time (or construct it without tools)"
            )
        if not self.allows_tools:
            raise ToolsError(f"{type(self).__name__} takes no tools")
        return ToolSet.from_user(tools)

    def build(
        self,
        input: Any = None,
        history: Any = None,
        tools: Any = None,
        label: str | None = None,
        model_format: ModelFormat | None = None,
    ) -> Conversation:
        """Validate everything and assemble the neutral :class:`Conversation`."""
        if self._has_preprocess:
            input = self.preprocess(input)
        # read once into plain data: nothing below calls the caller's objects or can change them
        input = plain_copy(input, "input", InputTypeError)
        history = plain_copy(history, "history", HistoryError)
        tools = plain_copy(tools, "tools", ToolsError)
        label = plain_copy(label, "label")
        values, text, current = self._split_input(input)
        if history is not None and not _empty(history):  # an empty history is no history, as in LazyLLM
            if not self.allows_history:
                raise HistoryError(f"{type(self).__name__} takes no history; use ChatPrompter for multi-turn")
            turns = normalize_history(history)
            if self._history:
                turns = self._history + turns
        else:
            turns = self._history
        if label is not None and type(label) is not str:
            raise PromptTypeError(f"label: expected str, got {type(label).__name__}")
        instruction, user = self._instruction, self._user
        # tuple.__new__ is the NamedTuple constructor without its keyword handling
        return tuple.__new__(
            Conversation,
            (
                self._system if model_format is None else self.system_prompt(model_format),
                instruction.fill(values) if instruction.slots else instruction.source,
                self._tools if tools is None else self._tools_for(tools),
                turns,
                user.fill(values) if user.slots else user.source,
                text,
                current,
                label,
            ),
        )

    def generate_prompt(
        self,
        input: Any = None,
        history: Any = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        label: str | None = None,
        *,
        format: Format | None = None,
        return_dict: bool = False,
        model_format: ModelFormat | str | None = None,
        show: bool | None = None,
        strategy: Strategy | None = None,
        history_header: str | None = None,
        as_agent: str | None = None,
    ) -> Any:
        """Render the prompt: a str for a local model, or an API body (a dict).

        ``format=None``/``"text"`` gives the delimited string (the model's own
        chat template when ``model_format`` is a real model's format);
        ``return_dict=True`` is ``format="openai"``. ``strategy``,
        ``history_header`` and ``as_agent`` arrange a multi-agent conversation
        (see :mod:`prompter.render.strategies`).
        """
        if (
            (format is not None and type(format) is not str)
            or (return_dict is not None and type(return_dict) is not bool)
            or (show is not None and type(show) is not bool)
        ):
            format = _checked_call_options(format, return_dict, show)
        fast = self._fast
        if (
            fast is not None
            and tools is None
            and label is None
            and model_format is None
            and (history is None or type(history) is list)
            and not (self.show if show is None else show)
            and strategy is None
            and history_header is None
            and as_agent is None
        ):
            if format is None and not return_dict:
                text = fast.text(input, history)
                if text is not None:
                    return text
            elif format == "openai" or format is None:
                body = fast.openai(input, history)
                if body is not None:
                    return body
        if strategy is not None or history_header is not None or as_agent is not None:
            strategy, history_header, as_agent = exact_options(strategy, history_header, as_agent)
        if return_dict:
            if format not in (None, "openai"):
                raise PromptValueError(f"return_dict=True means format='openai', but format={format!r} was given")
            format = "openai"
        fmt = None if model_format is None else _resolve_format(model_format)
        conv = self.build(input, history, tools, label, fmt)
        if format is None or format == "text":
            if strategy is not None or history_header is not None or as_agent is not None:
                result: Any = self._render_arranged_at(conv, strategy, history_header, as_agent, fmt)
            else:
                result = self._render_text(conv, fmt)
        else:
            result = render_dialect(format, conv, strategy, history_header, as_agent)
        if self.show if show is None else show:
            import logging  # only when asked: logging costs a third of prompter's import time

            logging.getLogger("prompter").debug("%s rendered (%s):\n%s", type(self).__name__, format or "text", result)
        return result

    def _render_text(self, conv: Conversation, fmt: ModelFormat | None) -> str:
        if fmt is None:
            fmt = GENERIC
        elif fmt.chat_template is not None or fmt.name != "generic":
            return render_with_model(conv, fmt)
        split = self._split
        if split is not None and conv.current and trailing_count(conv.current):
            return render_trailing(split, conv, fmt, trailing_count(conv.current))
        key = (id(fmt), conv.tools is self._tools)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) > 8:  # formats made on the fly must not pile up
                self._plans.clear()
            plan = self._plans[key] = LayoutPlan(self._layout, fmt, self._constant_fields(fmt, key[1]))
        return plan.render(conv)

    def _render_arranged_at(
        self,
        conv: Conversation,
        strategy: Strategy | None,
        history_header: str | None,
        as_agent: str | None,
        fmt: ModelFormat | None,
    ) -> str:
        """The arranged conversation's text; a media part the format cannot render is named where the caller
        gave it (``history[0].content[0]``), not where the merge put it (``input.content[1]``)."""
        arranged = arrange_text(conv, strategy, history_header, as_agent)
        try:
            return self._render_arranged(arranged, fmt)
        except UnsupportedContentError as exc:
            relocated = _at_callers_place(str(exc), conv, arranged)
            if relocated is None:
                raise
            kind = type(exc)
        raise kind(relocated) from None

    def _render_arranged(self, conv: Conversation, fmt: ModelFormat | None) -> str:
        """The text of a conversation a strategy rearranged: its system prompt and instruction are its
        own (a leading system message, the merged history), so the cached constant fields do not apply."""
        generic = fmt is None or (fmt.chat_template is None and fmt.name == "generic")
        if not generic or type(self)._render_text is not PrompterBase._render_text:
            return self._render_text(conv, fmt)
        fmt = GENERIC if fmt is None else fmt
        split = self._split
        if split is not None and conv.current and trailing_count(conv.current):
            return render_trailing(split, conv, fmt, trailing_count(conv.current))
        return render_layout(self._layout, conv, fmt)

    def _compile_fast_path(self) -> FastPath | None:
        """The compiled common call (see :mod:`prompter.prompters.fastpath`), where this class can use it."""
        overridden = type(self)._render_text is not PrompterBase._render_text
        if self._has_preprocess or self._history or overridden:
            return None
        fmt = GENERIC
        plan = self._plans[(id(fmt), True)] = LayoutPlan(self._layout, fmt, self._constant_fields(fmt, True))
        if not FastPath.usable(plan):
            return None
        return FastPath(
            plan, self._instruction, self._user, self._system, self.tools, self.allows_free_input, self.allows_history
        )

    def _constant_fields(self, fmt: ModelFormat, tools_locked: bool) -> dict[str, str]:
        """Layout fields whose value is the same for every call with this format."""
        constants = {"system": self.system_prompt(fmt)}
        if not self._instruction.slots:
            constants["instruction"] = self._instruction.source
        if not self._user.slots:
            constants["user"] = self._user.source
        if tools_locked:
            constants["tools"] = tools_block(Conversation(tools=self._tools))
        return constants

    def get_response(self, output: str, input: str | None = None) -> str:
        """The model's answer, without an echoed prompt and before-answer markup."""
        # a str subclass (numpy.str_, a library's own) is read by its characters, never its overrides
        if not issubclass(type(output), str):
            raise PromptTypeError(f"get_response: output must be str, got {type(output).__name__}")
        if input is not None and not issubclass(type(input), str):
            raise PromptTypeError(f"get_response: input must be str or None, got {type(input).__name__}")
        output = str.__str__(output)
        input = None if input is None else str.__str__(input)
        if input and output.startswith(input):
            output = output[len(input) :]
        split = self.response_split
        if split and split in output:
            output = output.rsplit(split, 1)[1]
        return output


def _at_callers_place(message: str, given: Conversation, arranged: Conversation) -> str | None:
    """``message`` (an error naming a media part of ``arranged``) naming the part where ``given`` holds it.

    A strategy moves every media part, in order, into the merged message, so the n-th media part of
    ``arranged`` is the n-th of ``given``. None when the message names no media part of ``arranged``.
    """
    from prompter.render.common import conversation_messages, media_parts

    merged = [where for where, _ in media_parts(conversation_messages(arranged))]
    callers = [where for where, _ in media_parts(conversation_messages(given))]
    if len(merged) != len(callers):
        return None
    for n, where in enumerate(merged):
        message_place = where.rpartition("[")[0]  # "input.content": the plain-text path names the message's content
        for place, theirs in ((where, callers[n]), (message_place, callers[n].rpartition("[")[0])):
            if message.startswith(place + ":"):
                return theirs + message[len(place) :]
    return None


def _checked_call_options(format: Any, return_dict: object, show: object) -> Any:
    """``format`` as an exact str (a str subclass's overrides are never called), once the flags are bools."""
    if format is not None and not issubclass(type(format), str):  # type(): a proxy's __class__ may raise
        raise PromptTypeError(f"format: expected a str such as 'openai', got {type(format).__name__}")
    for name, flag in (("return_dict", return_dict), ("show", show)):
        if flag is not None and type(flag) is not bool:
            raise PromptTypeError(f"{name}: expected True or False, got {type(flag).__name__}")
    return None if format is None else str.__str__(format)


def _check_declared_values(cls: type[PrompterBase]) -> None:
    """The declared flags are bools, the markers str, and the implicit input key can name a slot: else the
    class would drop the input (a key that is no identifier never fills) or fail at some later call."""
    for name in ("allows_history", "allows_tools", "allows_free_input", "uses_system"):
        flag = getattr(cls, name)
        if type(flag) is not bool:
            raise DeclarationError(f"{cls.__name__}.{name} must be True or False, got {type(flag).__name__}")
    key = cls.implicit_input_key
    if key is not None and not (type(key) is str and SLOT_PATTERN.fullmatch("{" + key + "}")):
        raise DeclarationError(
            f"{cls.__name__}.implicit_input_key must be None or an identifier that can name a slot, got {shown(key)}"
        )
    split = cls.response_split
    if split is not None and type(split) is not str:
        raise DeclarationError(f"{cls.__name__}.response_split must be None or a str, got {type(split).__name__}")
    separator = cls.dict_extra_keys_separator
    if type(separator) is not str:
        raise DeclarationError(
            f"{cls.__name__}.dict_extra_keys_separator must be a str, got {type(separator).__name__}"
        )


def _empty(value: object) -> bool:
    """Whether ``value`` (already a plain copy) is an empty list or tuple: it offers nothing."""
    return type(value) in (list, tuple) and len(value) == 0  # type: ignore[arg-type]


def _flag(value: object, name: str) -> bool:
    """A constructor's on/off argument: a bool, or an int as truth value (never the caller's ``__bool__``)."""
    if issubclass(type(value), int):
        return int.__bool__(value)  # type: ignore[arg-type]  # bool is an int too; type(): a proxy's __class__ may raise
    if value is None:
        return False
    raise PromptTypeError(f"{name}: expected True or False, got {type(value).__name__}")


def _resolve_format(model_format: ModelFormat | str | None) -> ModelFormat | None:
    from prompter.formats.model_format import ModelFormat

    if model_format is None or issubclass(type(model_format), ModelFormat):
        return model_format  # type: ignore[return-value]
    if issubclass(type(model_format), str):
        return ModelFormat.get(str.__str__(model_format))
    raise PromptTypeError(
        f"model_format: expected a ModelFormat or a family / model name, got {type(model_format).__name__}"
    )


PrompterBase._compile_declaration()

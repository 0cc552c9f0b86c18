"""The exceptions prompter raises for user mistakes.

Every class also inherits the builtin a caller would naturally catch, so an
existing ``except KeyError`` or ``except ValueError`` keeps working::

    PromptError(Exception)
    ├── PromptKeyError(PromptError, KeyError)
    │   ├── MissingSlotError          a slot of the template got no value
    │   ├── UnexpectedKeyError        an input key is neither a slot nor an extra key
    │   ├── UnknownModelFormatError   no registered model format has that name
    │   ├── UnknownRoleError          a prompt turn's role is not in the meta template
    │   └── UnknownLabelError         a PPL label the prompt template has no template for
    ├── PromptTypeError(PromptError, TypeError)
    │   ├── InputTypeError            input / slot value of an unsupported type
    │   └── HistoryError              a history item that is not a pair or a message
    └── PromptValueError(PromptError, ValueError)
        ├── ToolsError                malformed tools, or tools passed twice
        ├── MessageError              a message dict that is not a valid message
        ├── UnsupportedContentError   content a format cannot carry (an image in text)
        ├── DeclarationError          a custom prompter declared inconsistently
        ├── EvalTemplateError         an evaluation prompt/meta template that does not fit together
        └── TemplateError             a chat template raised or could not be compiled
            └── TemplateTimeoutError  a chat template ran past its time budget

Messages always name the thing at fault and, where there is one, the remedy:
``history[2]: expected [question, answer] or a message dict, got int``.
"""

from __future__ import annotations

__all__ = [
    "DeclarationError",
    "HistoryError",
    "InputTypeError",
    "MessageError",
    "MissingSlotError",
    "PromptError",
    "PromptKeyError",
    "PromptTypeError",
    "PromptValueError",
    "TemplateError",
    "TemplateTimeoutError",
    "ToolsError",
    "UnexpectedKeyError",
    "UnknownModelFormatError",
    "UnsupportedContentError",
]


class PromptError(Exception):
    """Base class of every error prompter raises for a caller's mistake."""


class PromptKeyError(PromptError, KeyError):
    """A key is missing, unknown or unexpected."""

    def __str__(self) -> str:
        # KeyError.__str__ shows the repr of its argument; ours is a sentence.
        return str(self.args[0]) if self.args else ""


class PromptTypeError(PromptError, TypeError):
    """A value of the wrong type."""


class PromptValueError(PromptError, ValueError):
    """A value of the right type that is not acceptable."""


class MissingSlotError(PromptKeyError):
    """A slot of the instruction template received no value."""


class UnexpectedKeyError(PromptKeyError):
    """An input key that is neither a slot, an extra key nor the single input key."""


class UnknownModelFormatError(PromptKeyError):
    """No registered model format matches the requested name."""


class InputTypeError(PromptTypeError):
    """The input, or one of its values, has a type prompter does not accept."""


class HistoryError(PromptTypeError):
    """A history item is neither a ``[question, answer]`` pair nor a message dict."""


class ToolsError(PromptValueError):
    """Tools are malformed, or given both at construction and at call time."""


class MessageError(PromptValueError):
    """A message dict lacks a role, has an unknown role or malformed content."""


class UnsupportedContentError(PromptValueError):
    """Content the chosen output format cannot carry (e.g. an image in plain text)."""


class DeclarationError(PromptValueError):
    """A custom prompter class declares templates or options that do not fit together."""


class TemplateError(PromptValueError):
    """A chat template failed to compile, raised, or tried to leave its sandbox."""


class TemplateTimeoutError(TemplateError):
    """A chat template ran past its rendering time budget."""


# -- the evaluation-harness layer (prompter.templates) ----------------------------------------------


class UnknownRoleError(PromptKeyError):
    """A prompt turn's role (and its ``fallback_role``) is not defined by the meta template."""


class UnknownLabelError(PromptKeyError):
    """A label that a label-keyed (PPL) prompt template has no template for."""


class EvalTemplateError(PromptValueError):
    """An evaluation-harness template, or an entry given to one, that cannot be built."""


__all__ += ["EvalTemplateError", "UnknownLabelError", "UnknownRoleError"]

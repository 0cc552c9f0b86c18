"""Instruction templates: ``{slot}`` placeholders parsed once, filled in one pass.

A slot is ``{`` + an identifier + ``}`` and nothing else: ``{context}`` is a
slot, while ``{"a": 1}``, ``{0}``, ``{a.b}``, ``{{`` and ``}`` are literal text.
Values are inserted verbatim; a value that itself contains ``{other}`` is never
looked at again, so retrieved text can hold anything. A slot may be named many times,
so a short template and one long value could ask for gigabytes: where a slot is named
more than once, the length of the filled text is worked out first, and a fill longer than
:data:`MAX_FILLED_CHARS` raises :class:`~prompter.errors.PromptValueError` before anything is built.

>>> t = InstructionTemplate('Answer with JSON like {"a": 1} about {topic}.')
>>> t.slots
('topic',)
>>> t.fill({"topic": "{input}"})
'Answer with JSON like {"a": 1} about {input}.'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from prompter.errors import PromptValueError

__all__ = ["MAX_FILLED_CHARS", "SLOT_PATTERN", "InstructionTemplate"]

#: What counts as a slot: an identifier (unicode letters allowed) between braces.
SLOT_PATTERN = re.compile(r"\{([^\W\d]\w*)\}")

MAX_FILLED_CHARS = 16_000_000
"""The longest text one fill may produce: far beyond any prompt a model reads, and a bound on
what a slot named N times with a long value can make a caller allocate."""


class InstructionTemplate:
    """A template whose ``{identifier}`` slots are filled in a single pass.

    The source is split at construction into literal pieces and slot names, so
    filling is one ``str.join`` and never rescans inserted values.
    """

    __slots__ = ("_literal_chars", "_literals", "_names", "_pieces", "_positions", "_repeats", "slots", "source")

    source: str
    """The template text as written by the developer."""
    slots: tuple[str, ...]
    """Slot names in order of first appearance, without repeats."""

    def __init__(self, source: str) -> None:
        parts = SLOT_PATTERN.split(source)
        self.source = source
        # split() with one group alternates literal, name, literal, ...
        self._literals: tuple[str, ...] = tuple(parts[0::2])
        self._names: tuple[str, ...] = tuple(parts[1::2])
        self.slots = tuple(dict.fromkeys(self._names))
        self._index()

    def _index(self) -> None:
        # literals interleaved with placeholders, and where each slot goes
        pieces: list[str] = []
        positions: list[tuple[int, str]] = []
        for literal, name in zip(self._literals, self._names):
            if literal:
                pieces.append(literal)
            positions.append((len(pieces), name))
            pieces.append("")
        if self._literals[-1]:
            pieces.append(self._literals[-1])
        self._pieces = pieces
        self._positions = tuple(positions)
        self._literal_chars = sum(map(len, self._literals))
        self._repeats = len(self._names) > len(set(self._names))  # a slot named twice can amplify a value

    @classmethod
    def _from_parts(cls, literals: tuple[str, ...], names: tuple[str, ...]) -> InstructionTemplate:
        self = cls.__new__(cls)
        self._literals, self._names = literals, names
        self.slots = tuple(dict.fromkeys(names))
        self._index()
        self.source = "".join(lit + "{" + name + "}" for lit, name in zip(literals, names)) + literals[-1]
        return self

    def partial(self, values: Mapping[str, str]) -> InstructionTemplate:
        """A template with the slots in ``values`` filled and the others left open.

        The filled values are never parsed: a value holding ``{x}`` stays literal.

        >>> InstructionTemplate("{a}-{b}").partial({"a": "{b}"}).fill({"b": "2"})
        '{b}-2'
        """
        self._check_length(values)
        literals = [self._literals[0]]
        names: list[str] = []
        for i, name in enumerate(self._names):
            if name in values:
                literals[-1] += values[name] + self._literals[i + 1]
            else:
                names.append(name)
                literals.append(self._literals[i + 1])
        return InstructionTemplate._from_parts(tuple(literals), tuple(names))

    @property
    def pieces(self) -> tuple[list[str], tuple[tuple[int, str], ...]]:
        """The literal pieces with an empty placeholder per slot, and (index, slot) for each placeholder."""
        return self._pieces, self._positions

    def filled_length(self, values: Mapping[str, str]) -> int:
        """How many characters :meth:`fill` gives for ``values`` (a slot they lack counted as empty),
        worked out without building the text.

        >>> InstructionTemplate("{a}, {a}!").filled_length({"a": "hey"})
        9
        """
        return self._literal_chars + sum(len(values[name]) for name in self._names if name in values)

    def _check_length(self, values: Mapping[str, str]) -> None:
        if not self._repeats:  # each slot once: the text is no longer than the values the caller holds
            return
        size = self.filled_length(values)
        if size <= MAX_FILLED_CHARS:
            return
        counts = Counter(name for name in self._names if name in values)
        name = max(counts, key=lambda n: counts[n] * len(values[n]))
        raise PromptValueError(
            f"slot {{{name[:40]}}}: the filled text would be {size} characters, over the limit of "
            f"{MAX_FILLED_CHARS}; the slot is named {counts[name]} time(s) with a value of "
            f"{len(values[name])} characters: shorten the value or name the slot fewer times"
        )

    def fill(self, values: Mapping[str, str]) -> str:
        """Return the text with every slot replaced by ``values[slot]``.

        Every slot must be present in ``values``; callers validate first. With a slot named more than
        once, a text longer than :data:`MAX_FILLED_CHARS` raises :class:`~prompter.errors.PromptValueError` unbuilt.
        """
        if not self._names:
            return self.source
        self._check_length(values)
        pieces = self._pieces.copy()
        for index, name in self._positions:
            pieces[index] = values[name]
        return "".join(pieces)

    def __repr__(self) -> str:
        return f"InstructionTemplate({self.source!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InstructionTemplate) and other.source == self.source

    def __hash__(self) -> int:
        return hash(self.source)

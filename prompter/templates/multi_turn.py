"""MultiTurnPromptTemplate: one sample, several questions, asked one turn at a time (AISBench).

The template is a dialogue whose ``round`` describes one turn, e.g.
``[dict(role="HUMAN", prompt="{question}"), dict(role="BOT", prompt="{answer}")]``.
Fields that hold a list (``question: ["1+1=?", "2+2=?"]``) give one value per turn;
other fields are the same in every turn. The prompt for turn ``k`` holds the rounds
before it, answered, and turn ``k``'s question; three modes say what the earlier
answers are:

* ``"every"``: the model's own earlier answers (one request per turn, in order);
* ``"every_with_gt"``: the ground truth (one request per turn);
* ``"last"``: the ground truth, and only the last turn is asked (one request).

>>> t = MultiTurnPromptTemplate(dict(round=[dict(role="HUMAN", prompt="{q}"),
...                                         dict(role="BOT", prompt="{a}")]))
>>> entry = {"q": ["1+1=?", "2+2=?"], "a": ["2", "4"]}
>>> [str(p) for p in t.generate_turns(entry, "every_with_gt", output_field="a")]
['1+1=?', '1+1=?22+2=?']
>>> t.run(entry, "every", output_field="a", respond=lambda prompt: f"<{len(prompt)} items>")
['<3 items>', '<5 items>']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from prompter.errors import EvalTemplateError, InputTypeError
from prompter.templates import compat_aisbench
from prompter.templates.compat import Compat, check_compat
from prompter.templates.dialogue import Dialogue, Turn, emit, is_dialogue, marker
from prompter.templates.prompt_list import PromptList, as_text
from prompter.templates.slots import Missing, check_config_type, check_missing, check_token, overlay, snapshot

__all__ = ["InferMode", "MultiTurnPromptTemplate"]

InferMode = Literal["every", "every_with_gt", "last"]
"""How earlier turns are answered in a multi-turn prompt; see the module docstring."""

_MODES = ("every", "every_with_gt", "last")


class _TurnView(Mapping[str, Any]):
    """The entry as seen by turn ``index``: list fields give their ``index``-th value."""

    def __init__(self, entry: Mapping[str, Any], index: int) -> None:
        self._entry, self._index = entry, index

    def __getitem__(self, key: str) -> Any:
        value = self._entry[key]
        return value[self._index] if isinstance(value, (list, tuple)) else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._entry)

    def __len__(self) -> int:
        return len(self._entry)


class _Scalars(Mapping[str, Any]):
    """The entry as seen by ``begin``/``end``: a list field there is a mistake."""

    def __init__(self, entry: Mapping[str, Any]) -> None:
        self._entry = entry

    def __getitem__(self, key: str) -> Any:
        value = self._entry[key]
        if isinstance(value, (list, tuple)):
            raise InputTypeError(f"entry[{key!r}]: a per-turn list cannot fill begin or end, which are written once")
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._entry)

    def __len__(self) -> int:
        return len(self._entry)


class MultiTurnPromptTemplate:
    """A per-turn dialogue template for multi-turn samples; see the module docstring.

    ``answer_role`` names the role whose turns are the answers (left out of the
    turn being asked); ``missing`` is as for :class:`~prompter.templates.PromptTemplate`.
    """

    __slots__ = ("_dialogue", "answer_role", "compat", "ice_token", "missing", "template")
    template: dict[str, Any]
    """The template as given (a private copy)."""

    def __init__(
        self,
        template: Mapping[str, Any],
        ice_token: str | None = None,
        *,
        answer_role: str = "BOT",
        missing: Missing = "error",
        compat: Compat | None = None,
        type: object = None,  # noqa: A002 - the key of a pasted config block
    ) -> None:
        check_config_type(type, "MultiTurnPromptTemplate")
        if not isinstance(template, Mapping) or not is_dialogue(template):
            raise EvalTemplateError(
                f"template: a multi-turn template is a dialogue dict(round=[...], begin=..., end=...), got {template!r}"
            )
        self.ice_token = check_token("ice_token", ice_token)
        self.missing = check_missing(missing)
        self.answer_role = answer_role
        self.compat = check_compat(compat)
        if self.compat is not None:
            # AISBench writes the raw template at every call (see prompter.templates.compat_aisbench)
            self.template = snapshot(template)
            return
        self._dialogue = Dialogue.compile(template, "template", self.ice_token)
        if not any(isinstance(n, Turn) and n.role == answer_role for n in self._dialogue.round):
            raise EvalTemplateError(f"template['round']: no turn has the answer role {answer_role!r}")
        self.template = snapshot(template)

    def _round_fields(self) -> list[str]:
        names: dict[str, None] = {}
        for node in self._dialogue.round:
            text = node.prompt if isinstance(node, Turn) else node
            if text is not None:
                names.update(dict.fromkeys(text.slots))
        return list(names)

    def num_turns(self, entry: Mapping[str, Any], output_field: str | None = None) -> int:
        """How many turns ``entry`` has: the common length of its per-turn list fields.

        >>> MultiTurnPromptTemplate(dict(round=[dict(role="HUMAN", prompt="{q}"),
        ...                                     dict(role="BOT", prompt="{a}")])).num_turns({"q": ["x", "y"]})
        2
        """
        if not isinstance(entry, Mapping):
            raise InputTypeError(f"entry: expected a dict of fields, got {type(entry).__name__}")
        lengths = {
            name: len(entry[name])
            for name in self._round_fields()
            if name != output_field and isinstance(entry.get(name), (list, tuple))
        }
        if len(set(lengths.values())) > 1:
            raise EvalTemplateError(f"entry: per-turn fields have different lengths {lengths}; give one value per turn")
        n = next(iter(lengths.values()), None)
        answers = entry.get(output_field) if output_field is not None else None
        if isinstance(answers, (list, tuple)):
            if n is None:
                n = len(answers)
            elif len(answers) != n:
                raise EvalTemplateError(
                    f"entry[{output_field!r}]: {len(answers)} answers for {n} turns; give one answer per turn"
                )
        if n == 0:
            raise EvalTemplateError(f"entry: the per-turn fields {sorted(lengths)} are empty; a sample needs a turn")
        return 1 if n is None else n

    def turn(
        self,
        entry: Mapping[str, Any],
        index: int,
        answers: Sequence[str],
        *,
        output_field: str,
        ice: str | PromptList = "",
    ) -> PromptList:
        """The prompt for turn ``index``: earlier rounds answered with ``answers``, then the question.

        >>> t = MultiTurnPromptTemplate(dict(round=[dict(role="HUMAN", prompt="{q}"),
        ...                                         dict(role="BOT", prompt="{a}")]))
        >>> t.turn({"q": ["x", "y"]}, 1, ["X"], output_field="a").strip_sections()
        PromptList([{'role': 'HUMAN', 'prompt': 'x'}, {'role': 'BOT', 'prompt': 'X'}, {'role': 'HUMAN', 'prompt': 'y'}])
        """
        n = self.num_turns(entry, output_field)
        if not isinstance(index, int) or not 0 <= index < n:
            raise EvalTemplateError(f"index: expected a turn number in 0..{n - 1}, got {index!r}")
        if isinstance(answers, str) or len(answers) < index:
            raise EvalTemplateError(f"answers: turn {index} needs the {index} earlier answer(s), got {answers!r}")
        d, missing = self._dialogue, self.missing
        out = PromptList()
        if d.begin is not None:
            out.append(marker("begin", "begin"))
            emit(out, d.begin, _Scalars(entry), ice, False, missing)
            out.append(marker("begin", "end"))
        out.append(marker("round", "begin"))
        for i in range(index):
            view = overlay(_TurnView(entry, i), output_field, as_text(answers[i], f"answers[{i}]"))
            emit(out, d.round, view, "", False, missing)
        cut = next(i for i, node in enumerate(d.round) if isinstance(node, Turn) and node.role == self.answer_role)
        emit(out, d.round[:cut], overlay(_TurnView(entry, index), output_field, ""), "", False, missing)
        out.append(marker("round", "end"))
        if d.end is not None:
            out.append(marker("end", "begin"))
            emit(out, d.end, _Scalars(entry), ice, False, missing)
            out.append(marker("end", "end"))
        return out

    def _truth(self, entry: Mapping[str, Any], output_field: str, n: int) -> list[str]:
        if n == 1:
            return []
        value = entry.get(output_field)
        if not isinstance(value, (list, tuple)):
            raise EvalTemplateError(
                f"entry[{output_field!r}]: the ground-truth modes need a list of answers, one per turn, got {value!r}"
            )
        return [as_text(v, f"{output_field}[{i}]") for i, v in enumerate(value)]

    def generate_item(self, entry: Mapping[str, Any], output_field: str | None = "answer", **_: Any) -> PromptList:
        """The whole sample: every round, each answered with the ground truth (AISBench's full sample).

        In compat mode this is AISBench's text exactly: the rounds repeated for each
        ``(question, answer)`` pair, ``begin`` and ``end`` written unfilled.

        >>> t = MultiTurnPromptTemplate(dict(round=[dict(role="HUMAN", prompt="{q}"),
        ...                                         dict(role="BOT", prompt="{a}")]))
        >>> str(t.generate_item({"q": ["x", "y"], "a": ["X", "Y"]}, output_field="a"))
        'xXyY'
        """
        if self.compat is not None:
            return compat_aisbench.multi_turn_item(self.template, entry, self.compat)
        if output_field is None:
            raise EvalTemplateError("output_field: name the field holding the answers")
        n = self.num_turns(entry, output_field)
        value = entry.get(output_field)
        answers = list(value) if isinstance(value, (list, tuple)) else [value]
        d, missing = self._dialogue, self.missing
        out = PromptList()
        if d.begin is not None:
            out.append(marker("begin", "begin"))
            emit(out, d.begin, _Scalars(entry), "", False, missing)
            out.append(marker("begin", "end"))
        out.append(marker("round", "begin"))
        for i in range(n):
            view = overlay(_TurnView(entry, i), output_field, as_text(answers[i], f"{output_field}[{i}]"))
            emit(out, d.round, view, "", False, missing)
        out.append(marker("round", "end"))
        if d.end is not None:
            out.append(marker("end", "begin"))
            emit(out, d.end, _Scalars(entry), "", False, missing)
            out.append(marker("end", "end"))
        return out

    def generate_turns(
        self,
        entry: Mapping[str, Any],
        mode: InferMode,
        output_field: str = "answer",
        predictions: Sequence[str] | None = None,
    ) -> list[PromptList]:
        """Every prompt ``mode`` sends for ``entry``.

        ``"every"`` depends on the model's answers: pass them as ``predictions``, or use
        :meth:`run`, which asks turn by turn.
        """
        if mode not in _MODES:
            raise EvalTemplateError(f"mode: expected one of {list(_MODES)}, got {mode!r}")
        if self.compat is not None:
            replies = iter(predictions or ())
            full = compat_aisbench.multi_turn_item(self.template, entry, self.compat)
            if mode == "every" and predictions is None:
                raise EvalTemplateError("mode 'every' needs the model's answers: pass predictions, or use run()")
            respond = (lambda _prompt: next(replies, "")) if mode == "every" else None
            return compat_aisbench.multi_turn_prompts(full, mode, respond, self.answer_role, self.compat)
        n = self.num_turns(entry, output_field)
        if mode == "every":
            if predictions is None:
                raise EvalTemplateError("mode 'every' needs the model's answers: pass predictions, or use run()")
            answers: Sequence[str] = predictions
        else:
            answers = self._truth(entry, output_field, n)
        if mode == "last":
            return [self.turn(entry, n - 1, answers, output_field=output_field)]
        return [self.turn(entry, k, answers[:k], output_field=output_field) for k in range(n)]

    def run(
        self,
        entry: Mapping[str, Any],
        mode: InferMode,
        output_field: str,
        respond: Callable[[PromptList], str],
    ) -> list[str]:
        """Ask ``respond`` (your model call) every prompt of ``mode`` in order; return its answers."""
        if mode not in _MODES:
            raise EvalTemplateError(f"mode: expected one of {list(_MODES)}, got {mode!r}")
        if self.compat is not None:
            full = compat_aisbench.multi_turn_item(self.template, entry, self.compat)
            replies: list[str] = []

            def ask(prompt: PromptList) -> str:
                replies.append(_answer(respond(prompt), len(replies)))
                return replies[-1]

            prompts = compat_aisbench.multi_turn_prompts(full, mode, ask, self.answer_role, self.compat)
            return replies if mode == "every" else [_answer(respond(p), k) for k, p in enumerate(prompts)]
        n = self.num_turns(entry, output_field)
        truth = [] if mode == "every" else self._truth(entry, output_field, n)
        if mode == "last":
            return [_answer(respond(self.turn(entry, n - 1, truth, output_field=output_field)), n - 1)]
        predictions: list[str] = []
        for k in range(n):
            earlier = predictions if mode == "every" else truth
            prompt = self.turn(entry, k, earlier[:k], output_field=output_field)
            predictions.append(_answer(respond(prompt), k))
        return predictions

    def __repr__(self) -> str:
        extra = "" if self.compat is None else f", compat={self.compat!r}"
        return f"MultiTurnPromptTemplate({self.template!r}{extra})"


def _answer(value: object, index: int) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"respond() for turn {index}: expected the answer as a str, got {type(value).__name__}")
    return value

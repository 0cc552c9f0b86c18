"""PromptTemplate: the dataset side of an evaluation prompt (OpenCompass ``infer_cfg``).

A template is one of

* a string, ``"Q: {question}\\nA: {answer}"``: the prompt is a string;
* a dialogue, ``dict(begin=[...], round=[...], end=[...])``: the prompt is a
  :class:`~prompter.templates.PromptList` that a meta template renders per model;
* a dict from label to one of the above, for perplexity (PPL) scoring: one
  candidate prompt per label.

``{field}`` slots take the entry's values in one pass: a value is inserted verbatim,
so a question that contains ``{answer}`` or the ice token stays as it is. The ice
token (``"</E>"``) marks where the in-context examples go.

>>> ice_t = PromptTemplate("{question}\\n{answer}")
>>> t = PromptTemplate("Solve.\\n</E>{question}\\n{answer}", ice_token="</E>")
>>> ice = ice_t.generate_ice([{"question": "2+2=?", "answer": 4}])
>>> t.generate_label_prompt_item({"question": "1+1=?", "answer": ""}, ice, label=None)
'Solve.\\n2+2=?\\n4\\n1+1=?\\n'
>>> t.generate_item({"question": "1+1=?", "answer": "2"}, output_field="answer")
'Solve.\\n1+1=?\\n'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

from prompter.errors import EvalTemplateError, InputTypeError, UnknownLabelError
from prompter.templates import compat as upstream
from prompter.templates.compat import Compat, check_compat
from prompter.templates.dialogue import DIALOGUE_KEYS, Dialogue, is_dialogue
from prompter.templates.prompt_list import PromptList
from prompter.templates.slots import (
    Missing,
    SlotText,
    check_config_type,
    check_missing,
    check_token,
    overlay,
    snapshot,
)

__all__ = ["PromptTemplate", "PromptType"]

PromptType = str | PromptList
"""What a prompt template produces: a string, or a PromptList for dialogue templates."""

_Compiled = SlotText | Dialogue


class PromptTemplate:
    """A dataset's prompt template (string, dialogue or label-keyed); see the module docstring.

    ``missing`` says what happens to a ``{field}`` the entry lacks: ``"error"`` (the
    default) raises :class:`~prompter.errors.MissingSlotError` naming it; ``"keep"``
    leaves ``{field}`` in the text, as OpenCompass does.
    """

    __slots__ = ("_compiled", "_labels", "compat", "ice_token", "kind", "missing", "sep_token", "template")

    template: str | Mapping[Any, Any]
    """The template as given (the object is not kept: later changes to it have no effect)."""
    ice_token: str | None
    """Where the in-context examples go (``"</E>"``), or None."""
    sep_token: str | None
    """A marker removed from the prompt, kept by ``generate_label_prompt_item(remain_sep=True)``."""
    kind: Literal["string", "dialogue", "labels"]
    """Which of the three template shapes this is."""
    missing: Missing
    """``"error"`` or ``"keep"``: what a ``{field}`` absent from the entry does."""
    compat: Compat | None
    """None (one-pass filling, upstream's crashes fixed) or the harness whose exact text is
    reproduced (``"opencompass"`` / ``"aisbench"``; see :mod:`prompter.templates.compat`)."""

    def __init__(
        self,
        template: str | Mapping[Any, Any],
        ice_token: str | None = None,
        sep_token: str | None = None,
        *,
        missing: Missing = "error",
        compat: Compat | None = None,
        type: object = None,  # noqa: A002 - the key of a pasted config block
    ) -> None:
        check_config_type(type, "PromptTemplate")
        self.ice_token = check_token("ice_token", ice_token)
        self.sep_token = check_token("sep_token", sep_token)
        self.missing = check_missing(missing)
        self.compat = check_compat(compat)
        self._compiled: dict[Hashable, _Compiled] = {}
        if self.compat is not None:
            # upstream fills the raw template at every call; nothing is compiled
            upstream.check_template(template, self.ice_token)
            self.template = snapshot(template)
            labelled = isinstance(template, Mapping) and not upstream.is_meta(template)
            self.kind = "string" if isinstance(template, str) else "labels" if labelled else "dialogue"
            self._labels = tuple(template) if labelled else ()
            return
        if isinstance(template, str):
            self.kind = "string"
            self._compiled[None] = self._compile(template, "template")
            self.template = template
        elif isinstance(template, Mapping):
            if not template:
                raise EvalTemplateError("template: an empty dict is neither a dialogue nor a label template")
            if is_dialogue(template):
                self.kind = "dialogue"
                self._compiled[None] = self._compile(template, "template")
            else:
                mixed = sorted(DIALOGUE_KEYS & set(template))
                if mixed:
                    raise EvalTemplateError(
                        f"template: keys {mixed} belong to a dialogue template but the others "
                        f"{sorted(map(repr, set(template) - DIALOGUE_KEYS))} look like labels; "
                        "a label template maps each label to a whole template"
                    )
                self.kind = "labels"
                for label, value in template.items():
                    self._compiled[label] = self._compile(value, f"template[{label!r}]")
            self.template = snapshot(template)
        else:
            raise EvalTemplateError(f"template: expected a str or a dict, got {template.__class__.__name__}")
        self._labels = tuple(self._compiled) if self.kind == "labels" else ()

    def _compile(self, raw: object, where: str) -> _Compiled:
        compiled: _Compiled
        if isinstance(raw, str):
            compiled = SlotText(raw, where, self.ice_token, self.sep_token)
            texts = [compiled]
        elif isinstance(raw, Mapping) and is_dialogue(raw):
            compiled = Dialogue.compile(raw, where, self.ice_token, self.sep_token)
            texts = compiled.texts()
        else:
            raise EvalTemplateError(
                f"{where}: expected a string or a dialogue dict(begin=..., round=..., end=...), "
                f"got {type(raw).__name__}"
            )
        if self.ice_token is not None and not any(t.has_ice for t in texts):
            raise EvalTemplateError(f"{where}: the ice_token {self.ice_token!r} does not occur in the template")
        return compiled

    # -- what the template is --------------------------------------------------------------------

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The labels of a label-keyed (PPL) template, in order; ``()`` for the other kinds.

        >>> PromptTemplate({"A": "{q} A", "B": "{q} B"}).labels
        ('A', 'B')
        """
        return self._labels

    def _select(self, label: Hashable, *, first: bool = False) -> _Compiled:
        if self.kind != "labels":
            return self._compiled[None]
        if first:
            return self._compiled[self._labels[0]]
        try:
            return self._compiled[label]
        except (KeyError, TypeError):
            raise UnknownLabelError(
                f"label {label!r}: the template has no candidate for it (labels: {list(self._labels)!r})"
            ) from None

    def _build(
        self,
        compiled: _Compiled,
        values: Mapping[str, Any],
        ice: str | PromptList,
        *,
        for_ice: bool = False,
        keep_sep: bool = False,
    ) -> PromptType:
        if not isinstance(values, Mapping):
            raise InputTypeError(f"entry: expected a dict of fields, got {type(values).__name__}")
        if isinstance(compiled, Dialogue):
            return compiled.build(values, ice, for_ice=for_ice, keep_sep=keep_sep, missing=self.missing)
        if not isinstance(ice, str):
            raise InputTypeError(
                f"ice: a string template takes its in-context examples as a string, got {type(ice).__name__}; "
                "build them with a string ice template"
            )
        return compiled.fill(values, ice, keep_sep=keep_sep, missing=self.missing)

    # -- the OpenCompass surface -----------------------------------------------------------------

    def generate_item(
        self,
        entry: Mapping[str, Any],
        output_field: str | None = None,
        output_field_replace_token: str = "",
        ice_field_replace_token: str | PromptList = "",
    ) -> PromptType:
        """The prompt for generation (Gen): the answer field blanked, the ice token replaced.

        ``output_field`` is filled with ``output_field_replace_token`` (the answer never
        leaks into the prompt) and the ice token with ``ice_field_replace_token`` (the
        in-context examples; empty for 0-shot). A label template uses its first label.

        >>> PromptTemplate("Q: {q}\\nA: {a}").generate_item({"q": "1+1=?", "a": "2"}, output_field="a")
        'Q: 1+1=?\\nA: '
        """
        if self.compat is not None:
            return upstream.generate_item(
                self.template,
                entry,
                self.ice_token,
                self.sep_token,
                self.compat,
                output_field,
                output_field_replace_token,
                ice_field_replace_token,
            )
        values = _with(entry, output_field, output_field_replace_token)
        return self._build(self._select(None, first=True), values, ice_field_replace_token)

    def generate_ice_item(self, entry: Mapping[str, Any], label: Hashable = None) -> PromptType:
        """One in-context example: the whole template filled, answer included, ice token removed.

        A dialogue template yields its rounds only, inside an ``ice`` section (no
        ``begin``/``end``). A label template uses the candidate for ``label`` (the
        example's own answer).

        >>> PromptTemplate({0: "{t} -> bad", 1: "{t} -> good"}).generate_ice_item({"t": "yay"}, 1)
        'yay -> good'
        """
        if self.compat is not None:
            return upstream.generate_ice_item(self.template, entry, label, self.ice_token, self.compat)
        return self._build(self._select(label), _with(entry, None, ""), "", for_ice=True)

    def generate_label_prompt_item(
        self,
        entry: Mapping[str, Any],
        ice: str | PromptList,
        label: Hashable,
        remain_sep: bool = False,
    ) -> PromptType:
        """The candidate prompt for ``label`` (PPL), with ``ice`` where the ice token is.

        ``remain_sep=True`` keeps the ``sep_token`` so the scorer can split context from
        answer. Templates that are not label-keyed ignore ``label``.

        >>> t = PromptTemplate({"A": "</E>{q} A", "B": "</E>{q} B"}, ice_token="</E>")
        >>> t.generate_label_prompt_item({"q": "Pick:"}, "", "B")
        'Pick: B'
        """
        if self.compat is not None:
            return upstream.generate_label_prompt_item(
                self.template, entry, ice, label, self.ice_token, self.sep_token, self.compat, remain_sep
            )
        return self._build(self._select(label), _with(entry, None, ""), ice, keep_sep=remain_sep)

    def generate_ice(
        self,
        examples: Sequence[Mapping[str, Any]],
        *,
        label_field: str | None = None,
        separator: str = "\n",
        eos: str = "\n",
    ) -> PromptType | list[Any]:
        """The in-context examples for ``examples``, ready for another template's ice token.

        String templates join the examples with ``separator`` and end with ``eos``
        (``""`` when there are none); dialogue templates concatenate their PromptLists
        without separators. A label template takes each example's label from
        ``label_field`` (the dataset's answer column).

        >>> PromptTemplate("{q}={a}").generate_ice([{"q": "1+1", "a": 2}, {"q": "2+2", "a": 4}])
        '1+1=2\\n2+2=4\\n'

        In compat mode this is upstream's retriever: the end token is written even with
        no examples, and dialogue templates join with ``""`` and end with an empty string
        item (see :func:`prompter.templates.compat.generate_ice`).
        """
        if self.compat is not None:
            return self._upstream_ice(self.compat, examples, label_field, separator, eos)
        if self.kind == "labels" and label_field is None:
            raise EvalTemplateError("generate_ice: a label template needs label_field, the column holding each label")
        items: list[PromptType] = []
        for i, example in enumerate(examples):
            if not isinstance(example, Mapping):
                raise InputTypeError(f"examples[{i}]: expected a dict of fields, got {type(example).__name__}")
            label = None
            if label_field is not None and self.kind == "labels":
                if label_field not in example:
                    raise UnknownLabelError(f"examples[{i}]: no label field {label_field!r}")
                label = example[label_field]
            items.append(self.generate_ice_item(example, label))
        if items and isinstance(items[0], PromptList):
            out = PromptList()
            for item in items:
                out += item
            return out
        if not items:
            return PromptList() if self._is_dialogue_only() else ""
        return separator.join(str(item) for item in items) + eos

    def _upstream_ice(
        self, compat: Compat, examples: Sequence[Mapping[str, Any]], label_field: str | None, separator: str, eos: str
    ) -> PromptType | list[Any]:
        if self.kind == "labels" and label_field is None:
            raise EvalTemplateError("generate_ice: a label template needs label_field, the column holding each label")
        labels = []
        for i, example in enumerate(examples):
            if not isinstance(example, Mapping):
                raise InputTypeError(f"examples[{i}]: expected a dict of fields, got {type(example).__name__}")
            if label_field is not None and label_field not in example:
                raise UnknownLabelError(f"examples[{i}]: no label field {label_field!r}")
            labels.append(None if label_field is None else example[label_field])
        return upstream.generate_ice(self.template, examples, labels, self.ice_token, compat, separator, eos)

    def _is_dialogue_only(self) -> bool:
        return all(isinstance(c, Dialogue) for c in self._compiled.values())

    def __repr__(self) -> str:
        extra = "".join(
            f", {name}={value!r}"
            for name, value in (("ice_token", self.ice_token), ("sep_token", self.sep_token))
            if value is not None
        )
        if self.compat is not None:
            extra += f", compat={self.compat!r}"
        return f"PromptTemplate({self.template!r}{extra})"


def _with(entry: Mapping[str, Any], field: str | None, value: str) -> Mapping[str, Any]:
    # a view, so the caller's entry is neither copied field by field nor changed
    if not isinstance(entry, Mapping):
        raise InputTypeError(f"entry: expected a dict of fields, got {type(entry).__name__}")
    if field is None:
        return entry
    return overlay(entry, field, value)

"""Rendering a whole dataset's prompts at once, with the per-sample work cut to filling fields.

:func:`render_prompts` gives every sample's Gen prompt, :func:`render_label_prompts`
every sample's PPL candidate for one label, both as text for a local model
(``MetaTemplate.parse``), equal to the per-sample path, text for text and error for error.

Rendering one sample (:func:`render_one`) builds the in-context examples, splices
them into the prompt template, fills the fields and walks the result with the meta
template. For a dataset, everything but the filling is the same from sample to
sample whenever the retriever returns the same examples (FixK, Zero, or a repeated
Random/BM25 choice), so :func:`render_prompts` works it out once per choice, as a
*plan*: the final text as literal pieces and holes. A sample then costs one pass
over the holes.

The plan is found by rendering once with stand-ins (sentinel strings) and cutting
the result where they come out. That is exact because neither meta template looks
at the text it writes except to test it for emptiness (``"".join`` of begins, texts
and ends), and the holes are filled as the per-sample path fills them:

* ``compat`` mode (multi-pass ``safe_format``): the stand-ins replace the *items* of
  the unfilled prompt (strings and turn prompts, in-context examples included), and
  each hole is filled with upstream's multi-pass replace over that item's text, in
  the entry's field order, exactly as ``pl_format`` does;
* the default mode (one-pass, values inserted verbatim and never read again): the
  stand-ins replace the entry's *values*, and each hole takes ``as_text(value)``.

A sample the plan cannot speak for (an empty filled text, which the meta template may
drop; a value of another type; an entry that is not a dict) is rendered by
:func:`render_one`, which gives its text or its typed error. A choice seen only once
is rendered by :func:`render_one` too: building its plan would cost more than it saves.
Nothing is kept between calls.

>>> from prompter.templates import MetaTemplate, PromptTemplate
>>> from prompter.templates.retrievers import FixKRetriever
>>> index = [{"q": "1+1", "a": "2"}, {"q": "2+2", "a": "4"}]
>>> r = FixKRetriever(index, fix_id_list=[0, 1], output_column="a")
>>> ice_t, prompt_t = PromptTemplate("{q}={a}"), PromptTemplate("</E>{q}=", ice_token="</E>")
>>> tests = [{"q": "3+3", "a": "6"}, {"q": "4+4", "a": "8"}]
>>> render_prompts(r, tests, MetaTemplate(), ice_template=ice_t, prompt_template=prompt_t)
['1+1=2\\n2+2=4\\n3+3=', '1+1=2\\n2+2=4\\n4+4=']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

from prompter.templates.meta_template import MetaTemplate, Mode
from prompter.templates.prompt_list import PromptList, as_text
from prompter.templates.prompt_template import PromptTemplate
from prompter.templates.retrievers import BaseRetriever

__all__ = ["render_label_prompts", "render_one", "render_prompts"]

Entry = Mapping[str, Any]
Piece = str | int
"""A plan piece: literal text, or the index of a hole."""

_MARK = "\x00\x01"
_HOLE = re.compile("\x00\x01([0-9]+)\x01\x00")


def _stand_in(i: int) -> str:
    return f"{_MARK}{i}\x01\x00"


class _Task:
    """What a sample's prompt is: the Gen prompt (output field blanked) or one PPL label's candidate."""

    def __init__(
        self,
        retriever: BaseRetriever,
        meta: MetaTemplate,
        ice_template: PromptTemplate | None,
        prompt_template: PromptTemplate | None,
        mode: Mode,
        *,
        token: str = "",
        ppl: bool = False,
        label: Hashable = None,
        remain_sep: bool = False,
    ) -> None:
        self.retriever, self.meta, self.mode = retriever, meta, mode
        self.ice_template, self.prompt_template = ice_template, prompt_template
        self.token, self.ppl, self.label, self.remain_sep = token, ppl, label, remain_sep
        # Gen blanks the output field; a PPL candidate fills the entry as it is
        self.output_field = None if ppl else retriever.output_column

    def one(self, entry: Entry, ids: Sequence[int]) -> str:
        """The per-sample path: examples, splice, fill, meta template."""
        return self.meta.parse(self.filled(entry, ids), mode=self.mode)

    def filled(self, entry: Entry, ids: Sequence[int]) -> str | PromptList:
        """The prompt with the examples spliced in and the fields filled, before the meta template cuts it."""
        r = self.retriever
        ice = r.generate_ice(ids, self.ice_template)
        templates = {"ice_template": self.ice_template, "prompt_template": self.prompt_template}
        prompt: str | PromptList
        if self.ppl:
            prompt = r.generate_label_prompt(entry, ice, self.label, remain_sep=self.remain_sep, **templates)
        else:
            prompt = r.generate_prompt(entry, ice, gen_field_replace_token=self.token, **templates)
        return prompt

    def unfilled(self, template: PromptTemplate, ice: Any) -> str | PromptList:
        """A compat template's prompt before its fields are filled (upstream's fill with no fields is a no-op)."""
        if self.ppl:
            return template.generate_label_prompt_item({}, ice, self.label, self.remain_sep)
        return template.generate_item({}, output_field=None, ice_field_replace_token=ice)


def render_one(
    retriever: BaseRetriever,
    entry: Entry,
    ids: Sequence[int],
    meta: MetaTemplate,
    *,
    ice_template: PromptTemplate | None = None,
    prompt_template: PromptTemplate | None = None,
    mode: Mode = "gen",
    gen_field_replace_token: str = "",
) -> str:
    """One sample's Gen prompt, the per-sample way (the reference :func:`render_prompts` must equal)."""
    task = _Task(retriever, meta, ice_template, prompt_template, mode, token=gen_field_replace_token)
    return task.one(entry, ids)


def render_prompts(
    retriever: BaseRetriever,
    tests: Sequence[Entry],
    meta: MetaTemplate,
    *,
    ice_template: PromptTemplate | None = None,
    prompt_template: PromptTemplate | None = None,
    ice_ids: Sequence[Sequence[int]] | None = None,
    mode: Mode = "gen",
    gen_field_replace_token: str = "",
) -> list[str]:
    """Every sample's Gen prompt, equal to :func:`render_one` of each; see the module docstring.

    ``ice_ids`` are the retriever's choices when already known (else it is asked).
    """
    task = _Task(retriever, meta, ice_template, prompt_template, mode, token=gen_field_replace_token)
    return _render(task, tests, retriever.retrieve(tests) if ice_ids is None else ice_ids)


def render_label_prompts(
    retriever: BaseRetriever,
    tests: Sequence[Entry],
    meta: MetaTemplate,
    label: Hashable,
    *,
    ice_template: PromptTemplate | None = None,
    prompt_template: PromptTemplate | None = None,
    ice_ids: Sequence[Sequence[int]] | None = None,
    remain_sep: bool = False,
    mode: Mode = "ppl",
) -> list[str]:
    """Every sample's PPL candidate for ``label``: ``meta.parse(retriever.generate_label_prompt(...))`` of each."""
    task = _Task(retriever, meta, ice_template, prompt_template, mode, ppl=True, label=label, remain_sep=remain_sep)
    return _render(task, tests, retriever.retrieve(tests) if ice_ids is None else ice_ids)


def _render(task: _Task, tests: Sequence[Entry], ids_list: Sequence[Sequence[int]]) -> list[str]:
    try:
        template: PromptTemplate | None = task.retriever._template(task.ice_template, task.prompt_template)  # noqa: SLF001
    except Exception:  # noqa: BLE001 - the per-sample path raises it, sample by sample
        template = None
    compat = template is not None and template.compat is not None
    keys = [_key(compat, entry, ids) for entry, ids in zip(tests, ids_list, strict=True)]
    repeated = {k for k, n in Counter(keys).items() if n > 1 and k is not None}
    plans: dict[Hashable, _Plan | None] = {}
    out: list[str] = []
    for entry, ids, key in zip(tests, ids_list, keys, strict=True):
        text = None
        if template is not None and key in repeated:
            if key not in plans:
                plans[key] = _build(template, task, entry, ids)
            plan = plans[key]
            if plan is not None:
                text = plan.fill(entry, task.output_field, task.token)
        out.append(task.one(entry, ids) if text is None else text)
    return out


def _key(compat: bool, entry: object, ids: Sequence[int]) -> Hashable:
    # compat plans hold for any entry; default-mode plans for one set of field names
    if not isinstance(entry, Mapping):
        return None
    try:
        return tuple(ids) if compat else (tuple(ids), frozenset(entry))
    except TypeError:
        return None


class _Plan:
    """The final text of a choice of examples as literal pieces and holes."""

    __slots__ = ("compat", "fields", "pieces", "read", "texts")

    def __init__(
        self,
        pieces: list[Piece],
        *,
        compat: bool,
        texts: Sequence[str] = (),
        fields: Sequence[Any] = (),
        read: Sequence[Any] = (),
    ):
        self.pieces = pieces
        self.compat = compat
        self.texts = list(texts)  # compat: the unfilled text of each hole
        self.fields = list(fields)  # default: the field each hole takes
        self.read = list(read)  # default: the fields filled in and then cut away by the meta template

    def fill(self, entry: object, output_field: str | None, token: str) -> str | None:
        """The sample's text, or None where the plan cannot speak for it."""
        if not isinstance(entry, Mapping):
            return None
        return self._fill_compat(entry, output_field, token) if self.compat else self._fill_default(entry)

    def _fill_compat(self, entry: Entry, output_field: str | None, token: str) -> str | None:
        values: Mapping[Any, Any] = entry
        if output_field is not None:
            values = dict(entry)
            values[output_field] = token  # upstream's order: the field keeps its place, or comes last
        pairs = [("{" + str(k) + "}", str(v)) for k, v in values.items()]
        filled = []
        for text in self.texts:
            for needle, value in pairs:
                if needle in text:  # an absent needle leaves the text as it is
                    text = text.replace(needle, value)
            if not text:
                return None
            filled.append(text)
        return "".join(p if isinstance(p, str) else filled[p] for p in self.pieces)

    def _fill_default(self, entry: Entry) -> str | None:
        if not all(isinstance(entry.get(name), (str, int, float)) for name in self.read):
            return None  # the per-sample path fills it (and refuses its type) before the cut drops it
        filled = []
        for name in self.fields:
            value = entry.get(name)
            if not isinstance(value, (str, int, float)):
                return None
            text = as_text(value, name)
            if not text:
                return None
            filled.append(text)
        return "".join(p if isinstance(p, str) else filled[p] for p in self.pieces)


def _build(template: PromptTemplate, task: _Task, entry: object, ids: Sequence[int]) -> _Plan | None:
    try:
        if not isinstance(entry, Mapping):
            return None
        if template.compat is not None:
            return _build_compat(template, task, ids)
        return _build_default(task, entry, ids)
    except Exception:  # noqa: BLE001 - whatever the per-sample path does with this choice, it does per sample
        return None


def _build_compat(template: PromptTemplate, task: _Task, ids: Sequence[int]) -> _Plan | None:
    unfilled = task.unfilled(template, task.retriever.generate_ice(ids, task.ice_template))
    texts: list[str] = []

    def stand_in(text: str) -> str:
        # only a text holding "{" can change when filled; the others stay as they are, empty ones included
        if "{" not in text:
            return text
        texts.append(text)
        return _stand_in(len(texts) - 1)

    if isinstance(unfilled, str):
        marked: str | PromptList = stand_in(unfilled)
    else:
        items: list[Any] = []
        for item in unfilled:
            if isinstance(item, str):
                items.append(stand_in(item))
            elif isinstance(item, dict) and isinstance(item.get("prompt"), str):
                items.append({**item, "prompt": stand_in(item["prompt"])})
            else:
                items.append(item)
        marked = type(unfilled)(items)
    pieces = _cut(task.meta.parse(marked, mode=task.mode), len(texts))
    return None if pieces is None else _Plan(pieces, compat=True, texts=texts)


def _build_default(task: _Task, entry: Entry, ids: Sequence[int]) -> _Plan | None:
    fields = list(entry)
    stand_ins = {name: _stand_in(i) for i, name in enumerate(fields)}
    filled = task.filled(stand_ins, ids)
    pieces = _cut(task.meta.parse(filled, mode=task.mode), len(fields))
    if pieces is None:
        return None
    used = sorted({p for p in pieces if isinstance(p, int)})
    hole = {field_index: h for h, field_index in enumerate(used)}
    texts = list(_strings(filled))
    read = [name for i, name in enumerate(fields) if i not in hole and any(stand_ins[name] in t for t in texts)]
    plan = [p if isinstance(p, str) else hole[p] for p in pieces]
    return _Plan(plan, compat=False, fields=[fields[i] for i in used], read=read)


def _strings(value: object) -> Iterator[str]:
    """Every string in a filled prompt (a str, or a prompt list of strings and turn dicts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _cut(text: object, holes: int) -> list[Piece] | None:
    """``text`` cut at the stand-ins; None if it holds a marker that is not one (the template's own text)."""
    if not isinstance(text, str):
        return None
    pieces: list[Piece] = []
    at = 0
    for match in _HOLE.finditer(text):
        index = int(match.group(1))
        if index >= holes:
            return None
        if match.start() > at:
            pieces.append(text[at : match.start()])
        pieces.append(index)
        at = match.end()
    if at < len(text):
        pieces.append(text[at:])
    if sum(p.count(_MARK) for p in pieces if isinstance(p, str)):
        return None
    return pieces

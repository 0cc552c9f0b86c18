"""Retrievers: which in-context examples each test sample gets, and the text they make.

A retriever holds the index set (the examples to choose from) and answers two
questions: :meth:`~BaseRetriever.retrieve` (the example indices for each test
sample) and :meth:`~BaseRetriever.generate_ice` (those examples rendered by the ice
template, joined with ``ice_separator`` and closed by ``ice_eos_token``, as
OpenCompass does; a dialogue ice template uses neither). Then
:meth:`~BaseRetriever.generate_prompt` (Gen) and
:meth:`~BaseRetriever.generate_label_prompt` (PPL) put them where the prompt
template's ``ice_token`` is.

* :class:`ZeroRetriever`: no examples (its end token defaults to ``""``);
* :class:`FixKRetriever`: the same ``fix_id_list`` for every sample;
* :class:`RandomRetriever`: ``ice_num`` distinct examples per sample, seeded; the
  indices equal OpenCompass's (numpy's legacy ``seed`` + ``choice``): numpy draws them
  when it is installed, else the same generator in Python;
* :class:`BM25Retriever`: the ``ice_num`` examples most similar to the sample (Okapi BM25), the
  examples OpenCompass's ``BM25Retriever`` chooses for the same words, found through an inverted index.

>>> from prompter.templates import PromptTemplate
>>> index = [{"q": "1+1", "a": "2"}, {"q": "2+2", "a": "4"}]
>>> r = FixKRetriever(index, fix_id_list=[0, 1], output_column="a")
>>> ice = r.generate_ice([0, 1], PromptTemplate("{q}={a}"))
>>> r.generate_prompt({"q": "3+3", "a": "6"}, ice, prompt_template=PromptTemplate("</E>{q}=", ice_token="</E>"))
'1+1=2\\n2+2=4\\n3+3='

Why this file is long: the four retrievers share one base whose prompt methods
mirror OpenCompass's template-selection rules; splitting them would scatter one contract.
"""

from __future__ import annotations

import heapq
import importlib
import math
import re
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from prompter.errors import EvalTemplateError, InputTypeError
from prompter.templates.compat import Compat, check_compat, pl_add
from prompter.templates.prompt_list import PromptList
from prompter.templates.prompt_template import PromptTemplate
from prompter.templates.slots import check_config_type
from prompter.templates.treebank import treebank_words

__all__ = ["BM25Retriever", "BaseRetriever", "FixKRetriever", "RandomRetriever", "ZeroRetriever", "legacy_choice"]

Entry = Mapping[str, Any]


class BaseRetriever:
    """The index set and the rules that turn chosen examples into prompt text; see the module docstring."""

    def __init__(
        self,
        index: Sequence[Entry] = (),
        *,
        ice_separator: str = "\n",
        ice_eos_token: str = "\n",
        ice_num: int = 1,
        output_column: str | None = None,
        input_columns: Sequence[str] | None = None,
        compat: Compat | None = None,
        type: object = None,  # noqa: A002 - the key of a pasted config block
    ) -> None:
        check_config_type(type, self.__class__.__name__)
        if isinstance(index, (str, Mapping)) or not isinstance(index, Sequence):
            raise InputTypeError(f"index: expected a list of dicts (the examples), got {index.__class__.__name__}")
        for i, example in enumerate(index):
            if not isinstance(example, Mapping):
                raise InputTypeError(f"index[{i}]: expected a dict of fields, got {example.__class__.__name__}")
        for name, value in (("ice_separator", ice_separator), ("ice_eos_token", ice_eos_token)):
            if not isinstance(value, str):
                raise EvalTemplateError(f"{name}: expected a string, got {value!r}")
        if not isinstance(ice_num, int) or isinstance(ice_num, bool) or ice_num < 0:
            raise EvalTemplateError(f"ice_num: expected a whole number >= 0, got {ice_num!r}")
        self.index = list(index)
        self.ice_separator = ice_separator
        self.ice_eos_token = ice_eos_token
        self.ice_num = ice_num
        self.output_column = output_column
        if isinstance(input_columns, str):
            input_columns = input_columns.split()  # OpenCompass's reader: a string is space-separated names
        self.input_columns = None if input_columns is None else list(input_columns)
        self.compat = check_compat(compat)
        # (examples, template id) -> (template, the examples as they were, the ice written from them)
        self._ice_cache: dict[tuple[tuple[int, ...], int], tuple[PromptTemplate | None, list[Any], Any]] = {}

    def retrieve(self, tests: Sequence[Entry]) -> list[list[int]]:
        """The indices (into the index set) of each test sample's examples."""
        raise NotImplementedError

    # -- the in-context examples -------------------------------------------------------------------

    def generate_ice(self, idx_list: Sequence[int], ice_template: PromptTemplate | None = None) -> Any:
        """The in-context examples ``idx_list`` rendered by ``ice_template``.

        String examples are joined with ``ice_separator`` and end with
        ``ice_eos_token`` (written even with no examples, as OpenCompass does); a
        dialogue ice template joins with ``""`` and ends with ``""``. Without an ice
        template there can be no examples.
        """
        key = (tuple(idx_list), id(ice_template))
        cached = self._ice_cache.get(key)
        if cached is not None and cached[0] is ice_template and self._unchanged(idx_list, cached[1]):
            # the examples of a FixK (or repeated) choice are written once while they stay as they were
            return _fresh(cached[2])
        ice = self._generate_ice(idx_list, ice_template)
        if len(self._ice_cache) < 4096:
            snapshot = [_fresh(self.index[i]) for i in idx_list]  # what they were, to notice an edit
            self._ice_cache[key] = (ice_template, snapshot, _fresh(ice))
        return ice

    def _unchanged(self, idx_list: Sequence[int], snapshot: list[Any]) -> bool:
        """Whether the examples *idx_list* still equal *snapshot* (an index example edited since is rewritten,
        as OpenCompass reads the dataset each time)."""
        return len(snapshot) == len(idx_list) and all(
            0 <= i < len(self.index) and self.index[i] == was for i, was in zip(idx_list, snapshot, strict=True)
        )

    def _generate_ice(self, idx_list: Sequence[int], ice_template: PromptTemplate | None) -> Any:
        if ice_template is None:
            if idx_list:
                raise EvalTemplateError(
                    "generate_ice: examples were retrieved but there is no ice_template to write them; "
                    "give an ice_template or use ZeroRetriever"
                )
            return self.ice_eos_token
        _check_template(ice_template, "ice_template")
        examples = [self._example(i) for i in idx_list]
        if ice_template.compat is not None:
            return ice_template.generate_ice(
                examples,
                label_field=self._label_field(ice_template),
                separator=self.ice_separator,
                eos=self.ice_eos_token,
            )
        # dialogue examples (a dialogue template, or one whose labels are dialogues) take no separators
        dialogue = ice_template._is_dialogue_only()
        separator, eos = ("", "") if dialogue else (self.ice_separator, self.ice_eos_token)
        items = [ice_template.generate_ice_item(e, self._label(e, ice_template)) for e in examples]
        if items and isinstance(items[0], PromptList):
            out = PromptList()
            for item in items:
                out += PromptList(pl_add(list(item), separator))
            out += eos
            return out
        return separator.join(str(item) for item in items) + eos

    def _example(self, i: object) -> Entry:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(self.index):
            raise EvalTemplateError(
                f"example index {i!r} is out of range of the index set ({len(self.index)} examples)"
            )
        return self.index[i]

    def _label_field(self, template: PromptTemplate) -> str | None:
        if template.kind == "labels" and self.output_column is None:
            raise EvalTemplateError("a label ice_template needs output_column, the column holding each example's label")
        return self.output_column

    def _label(self, example: Entry, template: PromptTemplate) -> Hashable:
        field = self._label_field(template)
        if field is None or template.kind != "labels":
            return None
        if field not in example:
            raise EvalTemplateError(f"example has no output column {field!r} (its fields: {sorted(example)})")
        label: Hashable = example[field]
        return label

    # -- the prompts -------------------------------------------------------------------------------

    def _template(self, ice_template: PromptTemplate | None, prompt_template: PromptTemplate | None) -> PromptTemplate:
        """OpenCompass's choice: the prompt template if given, else the ice template; ice needs an ice_token."""
        if prompt_template is not None:
            _check_template(prompt_template, "prompt_template")
            if ice_template is not None and prompt_template.ice_token is None:
                raise EvalTemplateError(
                    "prompt_template has no ice_token, so the in-context examples of ice_template have nowhere "
                    "to go; add ice_token='</E>' to prompt_template and put '</E>' where the examples belong"
                )
            return prompt_template
        if ice_template is None:
            raise EvalTemplateError("give a prompt_template, an ice_template, or both")
        _check_template(ice_template, "ice_template")
        if ice_template.ice_token is None:
            raise EvalTemplateError(
                "ice_template is used as the prompt template but has no ice_token; add ice_token='</E>'"
            )
        return ice_template

    def generate_prompt(
        self,
        entry: Entry,
        ice: Any,
        *,
        ice_template: PromptTemplate | None = None,
        prompt_template: PromptTemplate | None = None,
        gen_field_replace_token: str = "",
    ) -> Any:
        """The generation (Gen) prompt of ``entry``: its output column blanked, ``ice`` in place."""
        template = self._template(ice_template, prompt_template)
        return template.generate_item(
            entry,
            output_field=self.output_column,
            output_field_replace_token=gen_field_replace_token,
            ice_field_replace_token=ice,
        )

    def generate_label_prompt(
        self,
        entry: Entry,
        ice: Any,
        label: Hashable,
        *,
        ice_template: PromptTemplate | None = None,
        prompt_template: PromptTemplate | None = None,
        remain_sep: bool = False,
    ) -> Any:
        """The PPL candidate prompt of ``entry`` for ``label``."""
        template = self._template(ice_template, prompt_template)
        return template.generate_label_prompt_item(entry, ice, label, remain_sep)

    def get_labels(
        self,
        tests: Sequence[Entry] = (),
        *,
        ice_template: PromptTemplate | None = None,
        prompt_template: PromptTemplate | None = None,
    ) -> list[Hashable]:
        """The PPL candidates: the label template's keys, else the test column's values (first-seen order).

        (OpenCompass takes ``set()`` of the column, whose order changes from run to run.)
        """
        if prompt_template is not None and prompt_template.kind == "labels":
            return list(prompt_template.labels)
        if ice_template is not None and ice_template.ice_token is not None and ice_template.kind == "labels":
            return list(ice_template.labels)
        if self.output_column is None:
            raise EvalTemplateError("no label template and no output_column: there is nothing to take labels from")
        labels: dict[Hashable, None] = {}
        for i, test in enumerate(tests):
            if self.output_column not in test:
                raise EvalTemplateError(f"tests[{i}]: no output column {self.output_column!r}")
            label = test[self.output_column]
            try:
                labels[label] = None
            except TypeError:  # a list of gold answers, say: no one candidate to score
                raise InputTypeError(
                    f"tests[{i}][{self.output_column!r}]: a PPL label must be one value (a str or number), got "
                    f"{type(label).__name__}; key the prompt template by label, or give the labels to the inferencer"
                ) from None
        return list(labels)


def _check_template(template: object, name: str) -> None:
    if not isinstance(template, PromptTemplate):
        raise InputTypeError(f"{name}: expected a PromptTemplate, got {type(template).__name__}")


class ZeroRetriever(BaseRetriever):
    """No in-context examples (0-shot); the end token defaults to ``""``."""

    def __init__(self, index: Sequence[Entry] = (), *, ice_eos_token: str = "", **options: Any) -> None:
        super().__init__(index, ice_separator="", ice_eos_token=ice_eos_token, ice_num=0, **options)

    def retrieve(self, tests: Sequence[Entry]) -> list[list[int]]:
        return [[] for _ in tests]


class FixKRetriever(BaseRetriever):
    """The same examples, ``fix_id_list``, for every test sample."""

    def __init__(self, index: Sequence[Entry] = (), *, fix_id_list: Sequence[int], **options: Any) -> None:
        super().__init__(index, **options)
        if isinstance(fix_id_list, (str, bytes)) or not isinstance(fix_id_list, Sequence):
            raise EvalTemplateError(f"fix_id_list: expected a list of example indices, got {fix_id_list!r}")
        for i in fix_id_list:
            self._example(i)
        self.fix_id_list = list(fix_id_list)

    def retrieve(self, tests: Sequence[Entry]) -> list[list[int]]:
        return [list(self.fix_id_list) for _ in tests]


class RandomRetriever(BaseRetriever):
    """``ice_num`` distinct random examples per sample; the same seed gives OpenCompass's indices."""

    def __init__(self, index: Sequence[Entry] = (), *, seed: int = 43, **options: Any) -> None:
        super().__init__(index, **options)
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
            raise EvalTemplateError(f"seed: expected a whole number in [0, 2**32), got {seed!r}")
        if self.ice_num > len(self.index):
            raise EvalTemplateError(f"ice_num={self.ice_num} is more than the {len(self.index)} examples of the index")
        self.seed = seed

    def retrieve(self, tests: Sequence[Entry]) -> list[list[int]]:
        n = len(self.index)
        numpy = _numpy()
        if numpy is not None:
            # each choice permutes the whole index set: in C that is ~50 times faster, the same indices
            legacy = numpy.random.RandomState(self.seed)
            return [legacy.choice(n, self.ice_num, replace=False).tolist() for _ in tests]
        state = _MT19937(self.seed)
        return [legacy_choice(n, self.ice_num, state) for _ in tests]


def _numpy() -> Any:
    """numpy when it is installed (it is optional), else None."""
    try:
        return importlib.import_module("numpy")
    except ImportError:
        return None


class _MT19937:
    """The Mersenne Twister as numpy's legacy ``RandomState(seed)`` seeds it (init_genrand)."""

    def __init__(self, seed: int) -> None:
        mt = [seed & 0xFFFFFFFF]
        for i in range(1, 624):
            mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
        self.mt, self.pos = mt, 624

    def next32(self) -> int:
        if self.pos >= 624:
            mt = self.mt
            for i in range(624):
                y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
                mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            self.pos = 0
        y = self.mt[self.pos]
        self.pos += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)


def legacy_choice(n: int, k: int, state: _MT19937) -> list[int]:
    """numpy's legacy ``choice(n, k, replace=False)``: the first ``k`` of a Fisher-Yates permutation."""
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        mask = i
        for shift in (1, 2, 4, 8, 16):
            mask |= mask >> shift
        j = state.next32() & mask
        while j > i:
            j = state.next32() & mask
        perm[i], perm[j] = perm[j], perm[i]
    return perm[:k]


_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class BM25Retriever(BaseRetriever):
    """The ``ice_num`` examples whose input columns score highest (Okapi BM25) for each sample.

    Texts are the sample's ``input_columns`` joined with spaces (all columns but the
    output column when not given), split into words and punctuation, lower-cased; with
    ``compat``, split as upstream's NLTK ``word_tokenize`` splits them, case kept
    (:func:`~prompter.templates.treebank.treebank_words`).
    Scores are ``rank_bm25.BM25Okapi``'s to the bit (the same operations in the same
    order) and the ranking is OpenCompass's ``np.argsort(scores)[::-1]``. Each sample
    costs the examples that share a word with it (an inverted index), not the whole
    index; only when equal scores decide the choice is the whole score array sorted
    as upstream sorts it (by numpy when it is installed, whose order of equal scores
    depends on its sort; without numpy, the later example first).
    """

    k1 = 1.5
    b = 0.75
    epsilon = 0.25

    def __init__(self, index: Sequence[Entry] = (), **options: Any) -> None:
        super().__init__(index, **options)
        docs = [Counter(self._words(e)) for e in self.index]  # each word's count, in first-seen order
        lengths = [sum(d.values()) for d in docs]
        self._avg = sum(lengths) / len(lengths) if lengths else 0.0
        frequency: Counter[str] = Counter()
        for doc in docs:
            frequency.update(doc.keys())
        n = len(docs)
        idf = {w: math.log(n - f + 0.5) - math.log(f + 0.5) for w, f in frequency.items()}
        floor = self.epsilon * (sum(idf.values()) / len(idf)) if idf else 0.0
        self._idf = {w: (v if v >= 0 else floor) for w, v in idf.items()}
        # word -> (example, the word's term in that example's score), the term computed as rank_bm25 computes it
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for i, (doc, length) in enumerate(zip(docs, lengths, strict=True)):
            norm = self.k1 * (1 - self.b + self.b * length / self._avg) if self._avg else 0.0
            for w, tf in doc.items():
                self._postings.setdefault(w, []).append((i, self._idf[w] * (tf * (self.k1 + 1) / (tf + norm))))

    def _words(self, entry: Entry) -> list[str]:
        columns = self.input_columns or [k for k in entry if k != self.output_column]
        text = " ".join(_text(entry.get(c, "")) for c in columns)
        if self.compat is not None:
            return treebank_words(text)  # upstream's words: NLTK's word_tokenize, case kept
        return [w.lower() for w in _WORD.findall(text)]

    def _sparse_scores(self, query: Sequence[str]) -> dict[int, float]:
        """The scores of the examples sharing a word with *query*; every other example scores 0.0.

        Each score adds its terms in the query's order (repeated words again), as
        ``BM25Okapi.get_scores`` does; the terms it adds for absent words are zeros.
        """
        acc: dict[int, float] = {}
        for w in query:
            for i, term in self._postings.get(w, ()):
                acc[i] = acc.get(i, 0.0) + term
        return acc

    def _full_scores(self, query: Sequence[str], sparse: Mapping[int, float]) -> list[float]:
        # with every example empty, upstream's average length is 0 and each word's terms are 0/0: NaN
        fill = math.nan if query and not self._avg else 0.0
        out = [fill] * len(self.index)
        for i, score in sparse.items():
            out[i] = score
        return out

    def scores(self, entry: Entry) -> list[float]:
        """The BM25 score of every example of the index for ``entry`` (``BM25Okapi.get_scores``)."""
        query = self._words(entry)
        return self._full_scores(query, self._sparse_scores(query))

    def retrieve(self, tests: Sequence[Entry]) -> list[list[int]]:
        return [self._top(self._words(test)) for test in tests]

    def _top(self, query: Sequence[str]) -> list[int]:
        n = len(self.index)
        k = min(self.ice_num, n)
        if k == 0:
            return []
        sparse = self._sparse_scores(query)
        if self._avg or not query:
            # the examples scoring above 0 come first; if the first k + 1 scores are all different, no sort
            # order can choose otherwise
            need = min(k + 1, n)
            best = heapq.nlargest(need, ((s, i) for i, s in sparse.items() if s > 0))
            distinct = all(best[j][0] > best[j + 1][0] for j in range(len(best) - 1))
            if len(best) >= k and distinct:
                return [i for _, i in best[:k]]
        # equal scores decide: sort the whole array as upstream does
        full = self._full_scores(query, sparse)
        numpy = _numpy()
        if numpy is not None:
            return [int(i) for i in numpy.argsort(numpy.array(full, dtype=numpy.float64))[::-1][:k]]
        return sorted(range(n), key=lambda i: (full[i], i), reverse=True)[:k]


def _text(value: Any) -> str:
    """A column's text as upstream's ``str(value)``; a str subclass gives its characters, its methods never run."""
    return str.__str__(value) if isinstance(value, str) else str(value)


def _fresh(value: Any) -> Any:
    """A copy of *value* no caller shares: strings as they are, lists, dicts and prompt lists copied at every
    depth (a caller editing the turns it got must not change what the next call gets)."""
    if isinstance(value, PromptList):
        return PromptList(_fresh(item) for item in value)
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item) for item in value]
    return value

"""Gen and PPL inferencers: what one sample asks of a model, and the model's answer.

An inferencer works in two steps so that dataset runs can spread the second over
processes: :meth:`job` renders a sample's prompt(s) into a plain, picklable dict
(pure, fast), :meth:`answer` runs a module on it.

* :class:`GenInferencer`: the prompt is generated from, at most ``max_out_len``
  tokens, cut at the first of ``stopping_criteria``; the output field is blanked, or
  holds ``gen_field_replace_token`` (as in OpenCompass).
* :class:`PPLInferencer`: one candidate prompt per label; the prediction is the label
  whose continuation has the lowest mean token loss. The continuation is what
  follows the template's ``sep_token`` when it has one, else what follows the
  candidates' common beginning, moved back to where the word they differ in begins.
  In compat mode each candidate's whole text is scored, as OpenCompass scores it
  (with ``compat="opencompass"``, a module whose ``score`` takes ``compat=`` is asked
  for upstream's number: ``TrainableModule.score``, OpenCompass's ``get_ppl``);
  ``normalizing_str`` (both modes) scores the answer after the first ``sep_token``
  less the same answer after ``normalizing_str``, as OpenCompass does.

Any module works for Gen: a local module is given the raw text (``prepare_text``),
any other is called with it. PPL needs a module with ``score(pairs)``
(:meth:`modules.local.trainable.TrainableModule.score`, or
:meth:`modules.online.module.OnlineChatModule.score` over a server's ``/completions``
logprobs, :mod:`modules.online.scoring`).

Why this file is long: the three inferencers share the job/answer contract and the PPL scoring rules
(split, compat, normalizing_str, spans) that only make sense read together.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from modules.errors import ModuleConfigError
from modules.eval.api_prompts import api_input, api_prompt, chat_template_input
from modules.eval.candidates import as_written, at_sep, marking_sep, split_candidates
from prompter.templates import MetaTemplate, PromptTemplate
from prompter.templates.batch import render_label_prompts, render_prompts
from prompter.templates.markup import parse_with_spans
from prompter.templates.retrievers import BaseRetriever
from prompter.templates.slots import check_config_type

__all__ = ["GenInferencer", "MultiTurnGenInferencer", "PPLInferencer", "Prompts", "cut_at_stop_words"]


@dataclass(frozen=True)
class Prompts:
    """The templates and the model's meta template one dataset is rendered with."""

    retriever: BaseRetriever
    meta: MetaTemplate
    ice_template: PromptTemplate | None = None
    prompt_template: PromptTemplate | None = None
    api: bool = False  # whether the model is asked in turns (an API model: modules.eval.api_prompts)
    # whether Gen jobs carry the spans of their data ("user_spans"): a local model then reads the meta
    # template's own text as markup, its <|im_start|> as the control token (prompter.templates.markup)
    markup: bool = False
    # whether the turns are written by a local model's chat template (OpenCompass's HuggingFacewithChatTemplate):
    # it is given them as upstream gives them, empty turns left out and one role's neighbours joined
    chat: bool = False


def cut_at_stop_words(text: str, stops: Sequence[str]) -> str:
    """``text`` up to the first stop word (OpenCompass cuts generations the same way)."""
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return text if cut < 0 else text[:cut]


UPSTREAM_OPTIONS = frozenset({
    "model", "max_seq_len", "min_out_len", "batch_size", "output_json_filepath", "output_json_filename",
    "save_every", "multiround", "dump_timer", "dump_res_length", "dump_only_message_path", "generation_kwargs",
    "labels", "max_out_len", "normalizing_str", "fix_id_list",
})  # fmt: skip
"""Inferencer options of OpenCompass/AISBench configs that a pasted config may give and are not used here."""


def _check_options(name: str, extra: Mapping[str, Any], used: Sequence[str]) -> None:
    """A misspelled option (close to one we use, and no upstream option) is an error naming it; other upstream
    options are ignored, as OpenCompass ignores the options an inferencer does not take. A ``fix_id_list``
    (older configs gave it to the inferencer) is refused as OpenCompass refuses it: ignored, the run is zero-shot."""
    if extra.get("fix_id_list"):
        raise ModuleConfigError(f"{name}: fix_id_list goes to retriever=dict(type='FixKRetriever', fix_id_list=...)")
    for key in extra:
        close = difflib.get_close_matches(str(key), used, 1)
        if key not in UPSTREAM_OPTIONS and close:
            raise ModuleConfigError(f"{name}: unknown option {key!r} (did you mean {close[0]!r}?); it takes {[*used]}")


def _text(prompt: Any) -> str:
    return prompt if isinstance(prompt, str) else str(prompt)


class GenInferencer:
    """Generation: one prompt per sample, the answer as generated (see the module docstring)."""

    def __init__(
        self,
        max_out_len: int = 256,
        stopping_criteria: Sequence[str] | None = (),
        batch_size: int = 1,
        gen_field_replace_token: str = "",
        type: object = None,  # noqa: A002 - the key of a pasted config block
        **_ignored: Any,
    ) -> None:
        check_config_type(type, "GenInferencer")
        _check_options("GenInferencer", _ignored, ("max_out_len", "stopping_criteria", "gen_field_replace_token"))
        if not isinstance(gen_field_replace_token, str):
            raise ModuleConfigError(
                f"gen_field_replace_token: expected a string (what stands in the output field), "
                f"got {gen_field_replace_token!r}"
            )
        if not isinstance(max_out_len, int) or isinstance(max_out_len, bool) or max_out_len < 1:
            raise ModuleConfigError(f"max_out_len: expected an int >= 1, got {max_out_len!r}")
        stops = () if stopping_criteria is None else stopping_criteria  # None: none, as the plan reads it
        if not isinstance(stops, (list, tuple)) or not all(isinstance(s, str) and s for s in stops):
            raise ModuleConfigError(
                f"stopping_criteria: expected a list of non-empty strings, got {stopping_criteria!r:.80}"
            )
        self.max_out_len = max_out_len
        self.stopping_criteria = tuple(stops)
        self.batch_size = batch_size
        self.gen_field_replace_token = gen_field_replace_token

    def job(self, prompts: Prompts, index: int, entry: Mapping[str, Any], ice_ids: Sequence[int]) -> dict[str, Any]:
        """The rendered prompt of one sample."""
        r = prompts.retriever
        ice = r.generate_ice(ice_ids, prompts.ice_template)
        prompt = r.generate_prompt(
            entry,
            ice,
            ice_template=prompts.ice_template,
            prompt_template=prompts.prompt_template,
            gen_field_replace_token=self.gen_field_replace_token,
        )
        gold = entry.get(r.output_column) if r.output_column else None
        if prompts.markup and not prompts.api:
            text, spans = parse_with_spans(prompts.meta, prompt, mode="gen")
            job = {"index": index, "kind": "gen", "origin_prompt": text, "gold": gold, "user_spans": list(spans)}
            return {**job, **_added_tokens(prompts)}
        asked = api_prompt(prompts.meta, prompt) if prompts.api else _text(prompts.meta.parse(prompt, mode="gen"))
        job = {"index": index, "kind": "gen", "origin_prompt": asked, "gold": gold}
        return {**job, "chat_template": True} if prompts.api and prompts.chat else {**job, **_added_tokens(prompts)}

    def jobs(
        self, prompts: Prompts, tests: Sequence[Mapping[str, Any]], ice_ids: Sequence[Sequence[int]]
    ) -> list[dict[str, Any]]:
        """Every sample's :meth:`job`, rendered as a batch (the same text, the shared work done once)."""
        if prompts.api or prompts.markup:  # per sample: the turns, or the text with its spans
            return [self.job(prompts, i, entry, ids) for i, (entry, ids) in enumerate(zip(tests, ice_ids, strict=True))]
        r = prompts.retriever
        texts = render_prompts(
            r, tests, prompts.meta, ice_template=prompts.ice_template, prompt_template=prompts.prompt_template,
            ice_ids=ice_ids, gen_field_replace_token=self.gen_field_replace_token,
        )  # fmt: skip
        return [
            {
                "index": i,
                "kind": "gen",
                "origin_prompt": _text(text),
                "gold": entry.get(r.output_column) if r.output_column else None,
                **_added_tokens(prompts),
            }
            for i, (entry, text) in enumerate(zip(tests, texts, strict=True))
        ]

    def answer(self, module: Any, job: Mapping[str, Any]) -> dict[str, Any]:
        """Generate for one job; the record written to the predictions file."""
        prompt = job["origin_prompt"]
        stops = list(self.stopping_criteria)
        options: dict[str, Any] = {"max_new_tokens": self.max_out_len, **({"stop": stops} if stops else {})}
        if isinstance(prompt, str) and hasattr(module, "prepare_text") and hasattr(module, "generate"):
            spans = job.get("user_spans")
            marked: dict[str, Any] = {} if spans is None else {"user_spans": [tuple(span) for span in spans]}
            if job.get("add_special_tokens") and _takes(module.prepare_text, "add_special_tokens"):
                marked["add_special_tokens"] = True
            text = module.generate(module.prepare_text(prompt, **marked, **options)).text
        else:
            options = {"max_tokens": self.max_out_len, **({"stop": stops} if stops else {})}
            text = module((chat_template_input if job.get("chat_template") else api_input)(prompt), **options)
            if not isinstance(text, str):
                raise ModuleConfigError(f"the module answered {type(text).__name__}, not text; Gen needs text answers")
        record = {k: v for k, v in job.items() if k not in ("user_spans", "chat_template", "add_special_tokens")}
        return {**record, "prediction": cut_at_stop_words(text, stops)}


class PPLInferencer:
    """Perplexity: the label whose candidate the model finds likeliest (see the module docstring)."""

    def __init__(
        self,
        labels: Sequence[Hashable] | None = None,
        batch_size: int = 8,
        normalizing_str: str | None = None,
        type: object = None,  # noqa: A002 - the key of a pasted config block
        **_ignored: Any,
    ) -> None:
        check_config_type(type, "PPLInferencer")
        _check_options("PPLInferencer", _ignored, ("labels", "normalizing_str"))
        if normalizing_str is not None and not isinstance(normalizing_str, str):
            raise ModuleConfigError(f"normalizing_str: expected a string or None, got {normalizing_str!r}")
        if labels is not None and not isinstance(labels, (list, tuple)):
            raise ModuleConfigError(
                f"labels: expected a list of the template's labels (or None: the template's own), got {labels!r:.80}"
            )
        self.labels = None if labels is None else list(labels)
        self.batch_size = batch_size
        self.normalizing_str = normalizing_str

    def _sep(self, prompts: Prompts) -> tuple[str | None, bool]:
        """The template's ``sep_token``, and whether the candidates keep it (OpenCompass: only to normalize)."""
        template = prompts.prompt_template or prompts.ice_template
        sep = template.sep_token if template is not None else None
        if self.normalizing_str is not None and sep is None:
            raise ModuleConfigError(
                "normalizing_str: the template has no sep_token to split the context from the answer at; "
                "give the PromptTemplate sep_token='</S>' and put '</S>' where the answer begins"
            )
        return sep, self.normalizing_str is not None or (sep is not None and _compat(prompts) is None)

    def job(
        self,
        prompts: Prompts,
        index: int,
        entry: Mapping[str, Any],
        ice_ids: Sequence[int],
        labels: Sequence[Hashable],
    ) -> dict[str, Any]:
        """Every label's candidate prompt of one sample, each split into context and continuation."""
        return self._job(self._marked(prompts), index, entry, ice_ids, labels)

    def _marked(self, prompts: Prompts) -> Prompts:
        """Default mode: the candidates' template with its own sep_token told apart from data that spells it."""
        template = prompts.prompt_template or prompts.ice_template
        if template is None or template.sep_token is None or self.normalizing_str is not None or _compat(prompts):
            return prompts  # compat and normalizing_str split at the first sep_token, data or not, as upstream
        if prompts.prompt_template is not None:
            return replace(prompts, prompt_template=marking_sep(template))
        return replace(prompts, ice_template=marking_sep(template))  # its examples drop the marker as the token

    def _job(
        self, prompts: Prompts, index: int, entry: Mapping[str, Any], ice_ids: Sequence[int], labels: Sequence[Hashable]
    ) -> dict[str, Any]:
        r = prompts.retriever
        ice = r.generate_ice(ice_ids, prompts.ice_template)
        sep, keep = self._sep(prompts)
        texts: list[str] = []
        spans: list[list[tuple[int, int]]] = []
        for label in labels:
            prompt = r.generate_label_prompt(
                entry, ice, label, ice_template=prompts.ice_template, prompt_template=prompts.prompt_template,
                remain_sep=keep,
            )  # fmt: skip
            if prompts.markup:  # with the spans of its data: a local model reads the meta template as markup
                text, data = parse_with_spans(prompts.meta, prompt, mode="ppl")
                texts.append(text)
                spans.append(list(data))
            else:
                texts.append(_text(prompts.meta.parse(prompt, mode="ppl")))
        return self._record(prompts, index, entry, labels, texts, sep, spans if prompts.markup else None)

    def _record(  # noqa: PLR0913 - one sample's parts
        self, prompts: Prompts, index: int, entry: Mapping[str, Any], labels: Sequence[Hashable], texts: list[str],
        sep: str | None, spans: list[list[tuple[int, int]]] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        r = prompts.retriever
        norm = self.normalizing_str
        if norm is not None:
            pairs = [at_sep(t, sep or "", strict=True) for t in texts]
        elif _compat(prompts) is not None:
            pairs = [("", t) for t in texts]  # OpenCompass scores each candidate's whole text
        else:
            pairs = split_candidates(texts, sep)
        job = {
            "index": index,
            "kind": "ppl",
            "labels": [as_written(label) for label in labels],
            "origin_prompt": [c + t for c, t in pairs],
            "pairs": pairs,
            "gold": entry.get(r.output_column) if r.output_column else None,
        }
        if norm is not None:
            job["norm_pairs"] = [(norm, answer) for _, answer in pairs]
        if _compat(prompts) == "opencompass":  # a module whose score() takes compat= gives upstream's number
            job["score_as"] = "opencompass"
        if spans is not None:  # a pair cut from its text as it stands keeps the text's spans (else: all data)
            job["user_spans"] = [s if "".join(p) == t else None for p, s, t in zip(pairs, spans, texts, strict=True)]
        return job

    def jobs(
        self,
        prompts: Prompts,
        tests: Sequence[Mapping[str, Any]],
        ice_ids: Sequence[Sequence[int]],
        labels: Sequence[Hashable],
    ) -> list[dict[str, Any]]:
        """Every sample's :meth:`job`, each label's candidates rendered as a batch (the same text)."""
        prompts = self._marked(prompts)
        sep, keep = self._sep(prompts)
        if prompts.markup:  # per sample: each candidate with the spans of its data
            return [self._job(prompts, i, e, d, labels) for i, (e, d) in enumerate(zip(tests, ice_ids, strict=True))]
        try:
            by_label = self._by_label(prompts, tests, ice_ids, labels, keep)
        except Exception:  # noqa: BLE001 - label by label, the first error met may not be the per-sample one
            # the per-sample loop meets the samples in order and raises the error it raises
            return [self._job(prompts, i, e, d, labels) for i, (e, d) in enumerate(zip(tests, ice_ids, strict=True))]
        return [
            self._record(prompts, i, entry, labels, [_text(texts[i]) for texts in by_label], sep)
            for i, entry in enumerate(tests)
        ]

    @staticmethod
    def _by_label(
        prompts: Prompts,
        tests: Sequence[Mapping[str, Any]],
        ice_ids: Sequence[Sequence[int]],
        labels: Sequence[Hashable],
        keep_sep: bool,
    ) -> list[list[str]]:
        r = prompts.retriever
        return [
            render_label_prompts(
                r, tests, prompts.meta, label, ice_template=prompts.ice_template,
                prompt_template=prompts.prompt_template, ice_ids=ice_ids, remain_sep=keep_sep,
            )  # fmt: skip
            for label in labels
        ]

    def answer(self, module: Any, job: Mapping[str, Any]) -> dict[str, Any]:
        """Score one job's candidates together (and their answers after ``normalizing_str``); the record."""
        score = getattr(module, "score", None)
        if score is None:
            raise ModuleConfigError(
                f"{type(module).__name__} cannot score continuations; PPL needs a module with score(pairs) "
                "such as TrainableModule, or OnlineChatModule on a server with /completions logprobs"
            )
        pairs = [tuple(p) for p in job["pairs"]]
        norm = [tuple(p) for p in job.get("norm_pairs", ())]
        options: dict[str, Any] = {"compat": job["score_as"]} if job.get("score_as") and _takes(score, "compat") else {}
        if norm and "compat" in options and _takes(score, "mask_empty_context"):  # each context masks, "" too
            options["mask_empty_context"] = True
        if job.get("user_spans") is not None and _takes(score, "user_spans"):
            options["user_spans"] = [*job["user_spans"], *[None] * len(norm)]
        losses = score(pairs + norm, batch_size=max(len(pairs) + len(norm), 1), **options)
        if norm:
            losses = [a - b for a, b in zip(losses[: len(pairs)], losses[len(pairs) :], strict=True)]
        best = min(range(len(losses)), key=lambda i: (losses[i], i))
        record = {k: v for k, v in job.items() if k not in ("pairs", "norm_pairs", "score_as", "user_spans")}
        record["label_losses"] = dict(zip(map(str, job["labels"]), (round(x, 6) for x in losses), strict=True))
        record["prediction"] = job["labels"][best]
        return record


def _compat(prompts: Prompts) -> str | None:
    """The templates' compat mode, else the retriever's: in compat mode, candidates are scored whole (without
    ``normalizing_str``), as OpenCompass scores them."""
    template = prompts.prompt_template or prompts.ice_template
    return template.compat if template is not None and template.compat is not None else prompts.retriever.compat


def _added_tokens(prompts: Prompts) -> dict[str, bool]:
    """What a Gen job of a text prompt says about the ids the tokenizer adds: in ``compat="opencompass"``
    mode a local model generates from ``tokenizer(text)``'s ids, a bos included where the tokenizer adds one,
    as OpenCompass's Hugging Face base models do (and as its ``get_ppl``, which that mode's PPL gives)."""
    return {"add_special_tokens": True} if _compat(prompts) == "opencompass" else {}


def _takes(score: Any, keyword: str) -> bool:
    """Whether ``score`` takes *keyword* (TrainableModule's ``compat=`` and ``user_spans=``; not a server's)."""
    try:
        return keyword in inspect.signature(score).parameters
    except (TypeError, ValueError):
        return False


class MultiTurnGenInferencer:
    """AISBench's multi-turn inference: one generation per answer turn of a sample.

    ``infer_mode``: ``"every"`` (earlier turns carry the model's own answers),
    ``"every_with_gt"`` (the ground truth) or ``"last"`` (only the last turn is asked).
    The prompt template is a :class:`~prompter.templates.MultiTurnPromptTemplate`.
    """

    def __init__(
        self,
        infer_mode: str = "every",
        max_out_len: int = 256,
        stopping_criteria: Sequence[str] = (),
        type: object = None,  # noqa: A002 - the key of a pasted config block
        **_ignored: Any,
    ) -> None:
        check_config_type(type, "MultiTurnGenInferencer")
        _check_options("MultiTurnGenInferencer", _ignored, ("infer_mode", "max_out_len", "stopping_criteria"))
        if infer_mode not in ("every", "every_with_gt", "last"):
            raise ModuleConfigError(f"infer_mode: expected 'every', 'every_with_gt' or 'last', got {infer_mode!r}")
        self.infer_mode = infer_mode
        self.gen = GenInferencer(max_out_len=max_out_len, stopping_criteria=stopping_criteria)
        self.meta: MetaTemplate | None = None  # set by the plan, with api and chat: answer() writes each turn with them
        self.api = self.chat = False

    def job(self, prompts: Prompts, index: int, entry: Mapping[str, Any], ice_ids: Sequence[int]) -> dict[str, Any]:
        """The whole sample, every turn answered with the ground truth (the turns are cut from it)."""
        self.meta, self.api, self.chat = prompts.meta, prompts.api, prompts.chat
        template: Any = prompts.prompt_template
        if not hasattr(template, "generate_turns"):
            raise ModuleConfigError("MultiTurnGenInferencer needs a MultiTurnPromptTemplate as prompt_template")
        r = prompts.retriever
        full = template.generate_item(entry) if template.compat else template.generate_item(entry, r.output_column)
        gold = entry.get(r.output_column) if r.output_column else None
        return {"index": index, "kind": "multiturn", "origin_prompt": _text(full), "full": list(full), "gold": gold}

    def answer(self, module: Any, job: Mapping[str, Any]) -> dict[str, Any]:
        """Ask every turn of ``infer_mode`` in order; the answers in turn order."""
        from prompter.templates.compat_aisbench import multi_turn_prompts

        meta = self.meta or MetaTemplate()
        predictions: list[str] = []
        texts: list[Any] = []

        def respond(prompt: Any) -> str:
            job: dict[str, Any] = {}
            if self.api:
                text: Any = api_prompt(meta, prompt)
                job["chat_template"] = self.chat
            else:  # with the spans of its data: a local model reads the meta template's text as markup
                text, spans = parse_with_spans(meta, prompt, mode="gen")
                job["user_spans"] = list(spans)
            texts.append(text)
            reply: str = self.gen.answer(module, {**job, "origin_prompt": text})["prediction"]
            predictions.append(reply)
            return reply

        turns = multi_turn_prompts(job["full"], self.infer_mode, respond if self.infer_mode == "every" else None)
        if self.infer_mode != "every":
            for prompt in turns:
                respond(prompt)
        record = {k: v for k, v in job.items() if k != "full"}
        return {**record, "turn_prompts": texts, "prediction": predictions}

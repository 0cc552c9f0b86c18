"""Parity mode against upstream's own output: ``compat="opencompass"`` / ``"aisbench"``.

``data/upstream_corpus.json`` holds cases run through the real OpenCompass 0.5.4 and
AISBench prompt code (PromptTemplate, the retriever's ``generate_ice`` and prompt
methods, LMTemplateParser, APITemplateParser, PromptList ``str()``); each records
upstream's output. The corpus covers the behaviours scores depend on: multi-pass
filling, ``str()`` of non-str values, missing fields kept, the zero-shot end token,
separator tokens, label-keyed and dialogue in-context examples, every meta role in
every round, strings inside rounds, reserved and fallback roles, API begin and
extra roles, OpenAI messages passed through, AISBench's JSON ``str()``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompter.errors import PromptError
from prompter.templates import MetaTemplate, MMPromptTemplate, MultiTurnPromptTemplate, PromptTemplate
from prompter.templates.compat import new_prompt_list
from prompter.templates.retrievers import FixKRetriever, ZeroRetriever

CORPUS = json.loads((Path(__file__).parent / "data" / "upstream_corpus.json").read_text(encoding="utf-8"))
EQUAL = [c for c in CORPUS if "expected" in c]
CRASHED = [c for c in CORPUS if "upstream_error" in c]


def _template(spec: dict[str, Any] | None, compat: str) -> PromptTemplate | None:
    if spec is None:
        return None
    return PromptTemplate(
        spec["template"],
        ice_token=spec.get("ice_token"),
        sep_token=spec.get("sep_token"),
        compat=compat,  # type: ignore[arg-type]
    )


def replay(case: dict[str, Any]) -> list[Any] | Any:
    """The corpus case run through prompter in compat mode, shaped as the corpus records upstream's output."""
    compat = case["harness"]
    meta = None if case.get("meta") is None else MetaTemplate(**case["meta"], compat=compat)
    if case.get("kind") in ("direct", "plist", "batch"):
        return _replay_direct(case, meta)
    if "kind" in case:
        return _replay_aisbench(case, meta)
    if "messages" in case:
        assert meta is not None
        return meta.parse_api(case["messages"], mode=case["mode"])
    prompt_t, ice_t = _template(case["prompt_template"], compat), _template(case["ice_template"], compat)
    rc = case["retriever"]
    options: dict[str, Any] = dict(output_column=case["output_column"], compat=compat)
    if rc["kind"] == "zero":
        retriever: Any = ZeroRetriever(case["index"], ice_eos_token=rc["ice_eos_token"], **options)
    else:
        retriever = FixKRetriever(
            case["index"],
            fix_id_list=rc["fix_id_list"],
            ice_separator=rc["ice_separator"],
            ice_eos_token=rc["ice_eos_token"],
            **options,
        )
    ice = retriever.generate_ice(rc["fix_id_list"], ice_t)
    if case["task"] == "gen":
        prompts = [retriever.generate_prompt(case["test"], ice, ice_template=ice_t, prompt_template=prompt_t)]
    else:
        assert prompt_t is not None
        prompts = [
            retriever.generate_label_prompt(
                case["test"],
                ice,
                label,
                ice_template=ice_t,
                prompt_template=prompt_t,
                remain_sep=case["task"] == "ppl_sep",
            )
            for label in retriever.get_labels([case["test"]], ice_template=ice_t, prompt_template=prompt_t)
        ]
    out = []
    for prompt in prompts:
        if case["parser"] in ("none", "str"):
            out.append(prompt if isinstance(prompt, str) else str(prompt))
        elif case["parser"] == "lm":
            assert meta is not None
            out.append(meta.parse(prompt, mode=case["mode"]))
        else:
            assert meta is not None
            out.append(meta.parse_api(prompt, mode=case["mode"]))
    return json.loads(json.dumps(out))


def _replay_aisbench(case: dict[str, Any], meta: MetaTemplate | None) -> Any:
    def parse(prompt: Any) -> Any:
        if case["parser"] == "item":
            return list(prompt)
        if case["parser"] == "str":
            return str(prompt)
        assert meta is not None
        if case["parser"] == "lm":
            return meta.parse(prompt, mode=case["mode"])
        return meta.parse_api(prompt, mode=case["mode"])

    if case["kind"] == "mm":
        mm = MMPromptTemplate(case["template"], compat="aisbench")
        return json.loads(json.dumps([parse(mm.generate_item(case["entry"]))]))
    mt = MultiTurnPromptTemplate(case["template"], compat="aisbench")
    if case["turn_mode"] == "full":
        prompts = [mt.generate_item(case["entry"])]
    else:
        prompts = mt.generate_turns(case["entry"], case["turn_mode"])
    return json.loads(json.dumps([parse(p) for p in prompts]))


def _replay_direct(case: dict[str, Any], meta: MetaTemplate | None) -> Any:
    compat = case["harness"]
    if case["kind"] == "plist":
        pl = new_prompt_list(compat, case["items"])
        if case["op"] == "format":
            out: Any = pl.format(**case["entry"])
        elif case["op"] == "replace_str":
            out = pl.replace("</E>", "ICE")
        elif case["op"] == "replace_pl":
            out = pl.replace("</E>", new_prompt_list(compat, [{"role": "BOT", "prompt": "e1"}, "s"]))
        else:
            out = "" + ((pl + "tail") + new_prompt_list(compat, ["more"]))
        return json.loads(json.dumps([list(out), str(out)]))
    if case["kind"] == "batch":
        meta = meta or MetaTemplate(compat=compat)
        pl = new_prompt_list(
            compat, [{"section": "round", "pos": "begin"}, *case["items"], {"section": "round", "pos": "end"}]
        )
        batch = ["plain", pl, "x"]
        got = meta.parse_api_batch(batch) if case["parser"] == "api" else meta.parse_batch(batch)
        return json.loads(json.dumps(got))
    spec = case["spec"]
    t = PromptTemplate(
        spec["template"], ice_token=spec.get("ice_token"), sep_token=spec.get("sep_token"), compat=compat
    )
    e, op = case["entry"], case["op"]
    labels = list(t.labels) if t.kind == "labels" else [None]
    results: list[Any] = []
    if op == "item":
        results.append(t.generate_item(e, output_field="a", ice_field_replace_token="ICE\n"))
    elif op == "item_nofield":
        results.append(t.generate_item(e))
    elif op == "ice_item":
        results.extend(t.generate_ice_item(e, label) for label in labels)
    else:
        results.extend(t.generate_label_prompt_item(e, "ICE {q}\n", label, op.endswith("sep")) for label in labels)
    return json.loads(json.dumps([r if isinstance(r, str) else [list(r), str(r)] for r in results]))


def test_the_corpus_is_large_and_covers_both_harnesses() -> None:
    assert len(EQUAL) >= 150
    assert {c["harness"] for c in EQUAL} == {"opencompass", "aisbench"}


@pytest.mark.parametrize("case", EQUAL, ids=[c["id"] for c in EQUAL])
def test_compat_mode_writes_upstreams_exact_text(case: dict[str, Any]) -> None:
    assert replay(case) == case["expected"]


@pytest.mark.parametrize("case", CRASHED, ids=[c["id"] for c in CRASHED])
def test_where_upstream_crashes_compat_mode_gives_a_result_or_a_typed_error(case: dict[str, Any]) -> None:
    try:
        replay(case)
    except PromptError:
        pass

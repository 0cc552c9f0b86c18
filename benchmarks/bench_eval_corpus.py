"""Regenerates tests/templates/data/upstream_corpus.json by running upstream's own prompt code.

The corpus's expected outputs come from OpenCompass 0.5.4 (its installed package
source: PromptTemplate, PromptList, BaseRetriever, LMTemplateParser,
APITemplateParser) and AISBench (a git checkout: the same plus its multi-turn and
multimodal templates). Only those classes are loaded, from upstream's files at run
time, with stand-ins for the registry and logger; nothing of upstream is kept here.

    python benchmarks/bench_eval_corpus.py --opencompass-src .opencompass-venv/lib/python3.11/site-packages \\
        --aisbench-git /path/to/AISBench/benchmark/.git
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import subprocess
import sys
import types
import warnings

warnings.simplefilter("ignore")
OC = ""  # set by main()
AIS_GIT = ""  # set by main()


def ais(path):
    return subprocess.run(
        ["git", "-C", AIS_GIT, "show", "HEAD:" + path], capture_output=True, text=True, check=True
    ).stdout


def extract(src, names):
    tree = ast.parse(src)
    out = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in names:
            out.append(ast.get_source_segment(src, node))
    return "\n\n".join(out)


class _Reg:
    def register_module(self, *a, **k):
        return lambda c: c


def _ns(extra):
    import copy
    import json
    import warnings as w
    from collections.abc import Hashable
    from copy import deepcopy
    from typing import Optional, Union

    ns = dict(
        copy=copy,
        json=json,
        warnings=w,
        deepcopy=deepcopy,
        Dict=dict,
        Hashable=Hashable,
        List=list,
        Optional=Optional,
        Tuple=tuple,
        Union=Union,
        ICL_PROMPT_TEMPLATES=_Reg(),
        __name__="oracle",
    )
    ns.update(extra)
    return ns


def load_oc():
    ns = _ns({})
    exec(
        "from __future__ import annotations\n"
        + extract(open(OC + "opencompass/utils/prompt.py").read(), {"safe_format", "PromptList"}),
        ns,
    )
    exec(extract(open(OC + "opencompass/utils/types.py").read(), {"_check_type_list"}), ns)
    ns["PromptType"] = ns["Union"][ns["PromptList"], str]
    exec(extract(open(OC + "opencompass/openicl/icl_prompt_template.py").read(), {"PromptTemplate"}), ns)
    exec(extract(open(OC + "opencompass/models/base.py").read(), {"LMTemplateParser"}), ns)
    exec(extract(open(OC + "opencompass/models/base_api.py").read(), {"APITemplateParser"}), ns)
    src = extract(open(OC + "opencompass/openicl/icl_retriever/icl_base_retriever.py").read(), {"BaseRetriever"})
    rns = dict(ns, is_main_process=lambda: True, abstractmethod=lambda f: f)
    exec(src, rns)
    ns["BaseRetriever"] = rns["BaseRetriever"]
    return types.SimpleNamespace(**ns)


class _AISErr(Exception):
    def __init__(self, code=None, msg=""):
        super().__init__(msg)


class _Codes:
    def __getattr__(self, name):
        return name


class _Logger:
    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        return lambda *a, **k: None


def load_ais():
    ns = _ns(
        dict(
            AISBenchTypeError=_AISErr,
            AISBenchValueError=_AISErr,
            AISBenchKeyError=_AISErr,
            AISBenchImplementationError=_AISErr,
            UTILS_CODES=_Codes(),
            ICLR_CODES=_Codes(),
            MODEL_CODES=_Codes(),
            AISLogger=_Logger,
            ast=ast,
        )
    )
    src = ais("ais_bench/benchmark/utils/prompt/prompt.py")
    consts = "\n".join(line for line in src.splitlines() if re.match(r"^AIS_\w+ = ", line))
    exec(
        "from __future__ import annotations\n"
        + consts
        + "\n"
        + extract(src, {"safe_format", "PromptList", "get_round_index", "is_mm_prompt"}),
        ns,
    )
    ns["check_type_list"] = lambda obj, tl: obj
    ns["PromptType"] = ns["Union"][ns["PromptList"], str, dict]
    exec(
        extract(
            ais("ais_bench/benchmark/openicl/icl_prompt_template/icl_prompt_template_base.py"), {"BasePromptTemplate"}
        ),
        ns,
    )
    exec(extract(ais("ais_bench/benchmark/openicl/icl_prompt_template/icl_prompt_template.py"), {"PromptTemplate"}), ns)
    exec(
        extract(ais("ais_bench/benchmark/openicl/icl_prompt_template/icl_prompt_template_mm.py"), {"MMPromptTemplate"}),
        ns,
    )
    exec(
        extract(
            ais("ais_bench/benchmark/openicl/icl_prompt_template/icl_prompt_template_multiturn.py"),
            {"MultiTurnPromptTemplate"},
        ),
        ns,
    )
    exec(extract(ais("ais_bench/benchmark/models/local_models/base.py"), {"LMTemplateParser"}), ns)
    exec(extract(ais("ais_bench/benchmark/models/api_models/base_api.py"), {"APITemplateParser"}), ns)
    # AISBench's retriever keeps its templates on itself; its generate_ice logic is OpenCompass's, line for line
    src = extract(open(OC + "opencompass/openicl/icl_retriever/icl_base_retriever.py").read(), {"BaseRetriever"})
    rns = dict(ns, is_main_process=lambda: True, abstractmethod=lambda f: f)
    exec(src, rns)
    ns["BaseRetriever"] = rns["BaseRetriever"]
    return types.SimpleNamespace(**ns)


H = dict(role="HUMAN")
B = dict(role="BOT")
METAS = {
    "none": None,
    "lm_chat": dict(
        round=[
            dict(role="HUMAN", begin="<|User|>:", end="\n"),
            dict(role="BOT", begin="<|Bot|>:", end="<eoa>\n", generate=True),
        ]
    ),
    "lm_sys": dict(
        round=[dict(role="HUMAN", begin="[H]", end="[/H]"), dict(role="BOT", begin="[B]", end="[/B]", generate=True)],
        reserved_roles=[dict(role="SYSTEM", begin="[S]", end="[/S]")],
        begin="<s>",
        end="</s>",
    ),
    "lm_default_prompt": dict(
        round=[dict(role="HUMAN", begin="Q:", end="\n"), dict(role="BOT", begin="A:", end="\n", generate=True)],
        reserved_roles=[dict(role="SYSTEM", begin="S:", end="\n", prompt="You are kind.")],
    ),
    "lm_three": dict(
        round=[
            dict(role="SYSTEM", begin="<sys>", end="</sys>", prompt="sys default"),
            dict(role="HUMAN", begin="<u>", end="</u>"),
            dict(role="BOT", begin="<a>", end="</a>", generate=True),
        ]
    ),
    "api": dict(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)]),
    "api_sys": dict(
        round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)],
        reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM")],
    ),
    "api_begin": dict(
        round=[
            dict(role="HUMAN", api_role="HUMAN", begin="[u]", end="[/u]"),
            dict(role="BOT", api_role="BOT", generate=True),
        ],
        reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM"), dict(role="TOOL", api_role="TOOL")],
        begin="BEGIN",
    ),
}
IDX = [
    {"q": "1+1=?", "a": "2", "c": "math"},
    {"q": "Is {a} a number?", "a": "yes", "c": "{q}"},
    {"q": "2+2=?", "a": "4", "c": None},
]
TESTS = [
    {"q": "5+5=?", "a": "10", "c": "math"},
    {"q": "Say {a} and {c}", "a": "ok", "c": "{q}!"},
    {"c": ["x", 1], "q": "list {c}", "a": None},
    {"q": "what is {missing}?", "a": {"k": 1}, "c": 3.5},
]
STR_T = {
    "s_plain": dict(template="Q: {q}\nA: {a}"),
    "s_ice": dict(template="</E>Q: {q}\nA: {a}", ice_token="</E>"),
    "s_ctx": dict(template="{c}\n</E>Question: {q}\nAnswer: {a}", ice_token="</E>"),
    "s_sep": dict(template="</E>{q}<SEP> {a}", ice_token="</E>", sep_token="<SEP>"),
}
DLG_T = {
    "d_plain": dict(template=dict(round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt="A: {a}")])),
    "d_begin_ice": dict(
        template=dict(begin="</E>", round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt="A: {a}")]),
        ice_token="</E>",
    ),
    "d_sys": dict(
        template=dict(
            begin=[dict(role="SYSTEM", fallback_role="HUMAN", prompt="Solve {c}."), "</E>"],
            round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")],
        ),
        ice_token="</E>",
    ),
    "d_human_only": dict(template=dict(round=[dict(role="HUMAN", prompt="{q} -> {a}")])),
    "d_str_in_round": dict(
        template=dict(round=[dict(role="HUMAN", prompt="{q}"), "--", dict(role="BOT", prompt="{a}")])
    ),
    "d_multi_round": dict(
        template=dict(
            round=[
                dict(role="HUMAN", prompt="1+1"),
                dict(role="BOT", prompt="2"),
                dict(role="HUMAN", prompt="{q}"),
                dict(role="BOT", prompt="{a}"),
            ]
        )
    ),
    "d_no_prompt_bot": dict(template=dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT")])),
    "d_empty_begin": dict(
        template=dict(begin="", round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")])
    ),
}
LBL_T = {
    "l_str": dict(template={"A": "</E>{q} Answer: A", "B": "</E>{q} Answer: B"}, ice_token="</E>"),
    "l_sep": dict(template={"yes": "</E>{q}<S> yes", "no": "</E>{q}<S> no"}, ice_token="</E>", sep_token="<S>"),
    "l_dlg": dict(
        template={
            "A": dict(begin="</E>", round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="A")]),
            "B": dict(begin="</E>", round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="B")]),
        },
        ice_token="</E>",
    ),
}
ICE_FOR = {
    "s_ice": dict(template="Q: {q}\nA: {a}"),
    "s_ctx": dict(template="Question: {q}\nAnswer: {a}"),
    "s_sep": dict(template="{q}<SEP> {a}"),
    "d_begin_ice": dict(template=dict(round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt="A: {a}")])),
    "d_sys": dict(template=dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")])),
    "l_str": dict(template={"2": "{q} -> two", "yes": "{q} -> yes", "4": "{q} -> four"}),
    "l_sep": dict(template={"2": "{q}<S> two", "yes": "{q}<S> yes", "4": "{q}<S> four"}, sep_token="<S>"),
    "l_dlg": dict(
        template={
            "2": dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="two")]),
            "yes": dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="yes")]),
            "4": dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="four")]),
        }
    ),
}


def cases():
    out = []
    for harness in ("opencompass", "aisbench"):
        for name, spec in {**STR_T, **DLG_T, **LBL_T}.items():
            metas = ["none"] if name.startswith("s_") else list(METAS)
            if name.startswith("s_"):
                metas = ["none", "lm_chat", "api"]
            for meta in metas:
                for ti, test in enumerate(TESTS):
                    if (ti + len(meta) + len(name)) % 3 and ti != 0:
                        continue  # keep the corpus a manageable size
                    ice = ICE_FOR.get(name)
                    for retr in ["zero"] if ice is None else ["zero", "fixk"]:
                        task = "ppl" if name.startswith("l_") else "gen"
                        case = dict(
                            harness=harness,
                            prompt_template=spec,
                            ice_template=ice if retr == "fixk" else None,
                            retriever=dict(
                                kind=retr,
                                fix_id_list=[0, 1] if retr == "fixk" else [],
                                ice_separator="\n",
                                ice_eos_token="" if retr == "zero" else "\n",
                            ),
                            index=IDX,
                            test=test,
                            output_column="a",
                            task=task,
                            parser="none" if meta == "none" else ("api" if meta.startswith("api") else "lm"),
                            meta=METAS[meta],
                            mode="ppl" if task == "ppl" else "gen",
                        )
                        case["id"] = f"{harness}-{name}-{meta}-t{ti}-{retr}"
                        out.append(case)
        # ppl mode on a dialogue (every meta role in every round), and ppl for gen templates
        for meta in ("lm_chat", "lm_sys", "api"):
            out.append(
                dict(
                    id=f"{harness}-d_human_only-{meta}-pplmode",
                    harness=harness,
                    prompt_template=DLG_T["d_human_only"],
                    ice_template=None,
                    retriever=dict(kind="zero", fix_id_list=[], ice_separator="", ice_eos_token=""),
                    index=IDX,
                    test=TESTS[0],
                    output_column="a",
                    task="gen",
                    parser="api" if meta == "api" else "lm",
                    meta=METAS[meta],
                    mode="ppl",
                )
            )
        # sep kept in PPL (remain_sep) and in ice items
        out.append(
            dict(
                id=f"{harness}-l_sep-remain",
                harness=harness,
                prompt_template=LBL_T["l_sep"],
                ice_template=ICE_FOR["l_sep"],
                retriever=dict(kind="fixk", fix_id_list=[0, 2], ice_separator="\n", ice_eos_token="\n"),
                index=IDX,
                test=TESTS[0],
                output_column="a",
                task="ppl_sep",
                parser="none",
                meta=None,
                mode="ppl",
            )
        )
        # str() of the PromptList itself
        for name in ("d_plain", "d_sys", "d_str_in_round"):
            out.append(
                dict(
                    id=f"{harness}-{name}-str",
                    harness=harness,
                    prompt_template=DLG_T[name],
                    ice_template=None,
                    retriever=dict(kind="zero", fix_id_list=[], ice_separator="", ice_eos_token=""),
                    index=IDX,
                    test=TESTS[1],
                    output_column="a",
                    task="gen",
                    parser="str",
                    meta=None,
                    mode="gen",
                )
            )
    # OpenAI-style messages given to an API parser (OpenCompass passes them through)
    msgs = [dict(role="system", content="Be brief."), dict(role="user", content="hi {q}")]
    out.append(
        dict(
            id="opencompass-messages-api",
            harness="opencompass",
            messages=msgs,
            parser="api",
            meta=METAS["api"],
            mode="gen",
        )
    )
    return out


def run_upstream(case):
    ns = load_oc() if case["harness"] == "opencompass" else load_ais()
    if "messages" in case:
        return ns.APITemplateParser(copy.deepcopy(case["meta"])).parse_template(
            copy.deepcopy(case["messages"]), mode=case["mode"]
        )

    def pt(spec):
        return (
            None
            if spec is None
            else ns.PromptTemplate(
                copy.deepcopy(spec["template"]), ice_token=spec.get("ice_token"), sep_token=spec.get("sep_token")
            )
        )

    prompt_t, ice_t = pt(case["prompt_template"]), pt(case["ice_template"])
    r = (
        ns.BaseRetriever.__new__(ns.BaseRetriever)
        if hasattr(ns, "BaseRetriever")
        else load_oc().BaseRetriever.__new__(load_oc().BaseRetriever)
    )
    rc = case["retriever"]
    r.ice_separator, r.ice_eos_token, r.ice_num = rc["ice_separator"], rc["ice_eos_token"], len(rc["fix_id_list"])
    r.index_ds = copy.deepcopy(case["index"])
    r.test_ds = [copy.deepcopy(case["test"])]
    r.dataset_reader = types.SimpleNamespace(output_column=case["output_column"])
    ice = r.generate_ice(rc["fix_id_list"], ice_template=ice_t)
    if case["task"] == "gen":
        prompts = [r.generate_prompt_for_generate_task(0, ice, ice_template=ice_t, prompt_template=prompt_t)]
    else:
        labels = list(prompt_t.template.keys())
        prompts = [
            r.generate_label_prompt(
                0, ice, lb, ice_template=ice_t, prompt_template=prompt_t, remain_sep=case["task"] == "ppl_sep"
            )
            for lb in labels
        ]
    out = []
    for p in prompts:
        if case["parser"] == "none":
            out.append(str(p) if not isinstance(p, str) else p)
        elif case["parser"] == "str":
            out.append(str(p))
        elif case["parser"] == "lm":
            out.append(ns.LMTemplateParser(copy.deepcopy(case["meta"])).parse_template(p, mode=case["mode"]))
        else:
            out.append(ns.APITemplateParser(copy.deepcopy(case["meta"])).parse_template(p, mode=case["mode"]))
    return out


MM_T = {
    "mm_img": dict(
        round=[
            dict(
                role="HUMAN",
                prompt_mm={
                    "text": {"type": "text", "text": "Q: {question}"},
                    "image": {"type": "image_url", "image_url": {"url": "file://{image}"}},
                },
            ),
            dict(role="BOT", prompt=""),
        ]
    ),
    "mm_str_url": dict(
        begin=["Look {c}: "],
        round=[
            dict(
                role="HUMAN",
                prompt_mm={
                    "text": {"type": "text", "text": "{question}"},
                    "video": {"type": "video_url", "video_url": "{video}"},
                    "audio": {"type": "audio_url", "audio_url": {"url": "{audio}"}},
                },
            )
        ],
    ),
}
MM_E = [
    {"content": "<AIS_TEXT_START>What is this?<AIS_CONTENT_TAG><AIS_IMAGE_START>cat.jpg<AIS_CONTENT_TAG>", "c": "here"},
    {
        "content": "<AIS_IMAGE_START>a.png<AIS_CONTENT_TAG><AIS_TEXT_START>{question} two<AIS_CONTENT_TAG><AIS_IMAGE_START>b.png<AIS_CONTENT_TAG>",
        "c": 1,
    },
    {
        "content": "<AIS_VIDEO_START>v.mp4<AIS_CONTENT_TAG>untagged<AIS_CONTENT_TAG><AIS_AUDIO_START>s.wav<AIS_CONTENT_TAG><AIS_TEXT_START>hear<AIS_CONTENT_TAG>",
        "c": "{c}",
    },
]
MT_T = {
    "mt_plain": dict(round=[dict(role="HUMAN", prompt="{question}"), dict(role="BOT", prompt="{answer}")]),
    "mt_begin": dict(
        begin=[dict(role="SYSTEM", fallback_role="HUMAN", prompt="Sys {topic}")],
        round=[dict(role="HUMAN", prompt="Q: {question}"), dict(role="BOT", prompt="A: {answer}")],
    ),
}
MT_E = [
    {"question": ["1+1?", "and {answer}?", "3+3?"], "answer": ["2", "4", "6"], "topic": "math"},
    {"question": ["only"], "answer": [None], "topic": None},
]


def mm_mt_cases():
    out = []
    for name, tpl in MM_T.items():
        for ei, e in enumerate(MM_E):
            if name == "mm_img" and ei == 2:
                continue
            for meta in ("none", "api", "lm_chat"):
                out.append(
                    dict(
                        id=f"aisbench-{name}-{meta}-e{ei}",
                        harness="aisbench",
                        kind="mm",
                        template=tpl,
                        entry=e,
                        parser={"none": "item", "api": "api", "lm_chat": "lm"}[meta],
                        meta=METAS.get(meta),
                        mode="gen",
                    )
                )
    for name, tpl in MT_T.items():
        for ei, e in enumerate(MT_E):
            for mode in ("every_with_gt", "last", "full"):
                for meta in ("none", "lm_sys", "api_sys"):
                    out.append(
                        dict(
                            id=f"aisbench-{name}-{mode}-{meta}-e{ei}",
                            harness="aisbench",
                            kind="mt",
                            template=tpl,
                            entry=e,
                            turn_mode=mode,
                            parser={"none": "str", "lm_sys": "lm", "api_sys": "api"}[meta],
                            meta=METAS.get(meta),
                            mode="gen",
                        )
                    )
    return out


def run_mm_mt(case):
    ns = load_ais()
    meta = copy.deepcopy(case.get("meta"))

    def parse(p):
        if case["parser"] == "item":
            return list(p)
        if case["parser"] == "str":
            return str(p)
        if case["parser"] == "lm":
            return ns.LMTemplateParser(copy.deepcopy(meta)).parse_template(p, mode=case["mode"])
        return ns.APITemplateParser(copy.deepcopy(meta)).parse_template(p, mode=case["mode"])

    if case["kind"] == "mm":
        t = ns.MMPromptTemplate(copy.deepcopy(case["template"]))
        return [parse(t.generate_item(copy.deepcopy(case["entry"])))]
    t = ns.MultiTurnPromptTemplate(copy.deepcopy(case["template"]))
    chat = t.generate_item(copy.deepcopy(case["entry"]))
    if case["turn_mode"] == "full":
        return [parse(chat)]
    # the inferencer's own slicing (icl_multiturn_inferencer.infer_last / infer_every_with_gt)
    left_idx, right_idx = ns.get_round_index(chat)
    left_prompt, chat, right_prompt = chat[:left_idx], chat[left_idx:right_idx], chat[right_idx:]
    bot = [i for i, item in enumerate(chat) if item["role"] == "BOT"]
    if case["turn_mode"] == "last":
        return [parse(ns.PromptList(left_prompt + chat[: bot[-1]] + right_prompt))]
    return [parse(ns.PromptList(left_prompt + chat[:i] + right_prompt)) for i in bot]


def direct_cases():
    out = []
    specs = {**STR_T, **DLG_T, **LBL_T}
    entries = TESTS + [{"q": "x", "a": "y", "c": "z", "extra": "{q}{a}"}]
    for harness in ("opencompass", "aisbench"):
        for name, spec in specs.items():
            for ei, e in enumerate(entries):
                for op in ("item", "item_nofield", "ice_item", "label_item", "label_item_sep"):
                    if op.startswith("label") and not name.startswith("l_") and ei % 2:
                        continue
                    out.append(
                        dict(
                            id=f"{harness}-direct-{name}-{op}-e{ei}",
                            harness=harness,
                            kind="direct",
                            spec=spec,
                            entry=e,
                            op=op,
                        )
                    )
        # PromptList operations and batch parsing
        pl = [dict(role="HUMAN", prompt="{q} and {a}"), "{a}-{q}", dict(section="round", pos="begin"), dict(role="BOT")]
        for ei, e in enumerate(entries):
            out.append(
                dict(id=f"{harness}-plist-format-e{ei}", harness=harness, kind="plist", items=pl, op="format", entry=e)
            )
        out.append(
            dict(
                id=f"{harness}-plist-replace-str",
                harness=harness,
                kind="plist",
                items=["a</E>b", dict(role="HUMAN", prompt="x</E>y")],
                op="replace_str",
                entry={},
            )
        )
        out.append(
            dict(
                id=f"{harness}-plist-replace-pl",
                harness=harness,
                kind="plist",
                items=["a</E>b", "</E>", dict(role="HUMAN", prompt="xy")],
                op="replace_pl",
                entry={},
            )
        )
        out.append(
            dict(
                id=f"{harness}-plist-add",
                harness=harness,
                kind="plist",
                items=["a", dict(role="HUMAN", prompt="b")],
                op="add",
                entry={},
            )
        )
        for meta in ("lm_chat", "api", "none"):
            out.append(
                dict(
                    id=f"{harness}-batch-{meta}",
                    harness=harness,
                    kind="batch",
                    meta=METAS[meta],
                    parser="api" if meta == "api" else "lm",
                    items=[dict(role="HUMAN", prompt="q1"), dict(role="BOT", prompt="a1")],
                )
            )
    return out


def run_direct(case):
    ns = load_oc() if case["harness"] == "opencompass" else load_ais()
    if case["kind"] == "plist":
        pl = ns.PromptList(copy.deepcopy(case["items"]))
        if case["op"] == "format":
            r = pl.format(**case["entry"])
        elif case["op"] == "replace_str":
            r = pl.replace("</E>", "ICE")
        elif case["op"] == "replace_pl":
            r = pl.replace("</E>", ns.PromptList([dict(role="BOT", prompt="e1"), "s"]))
        else:
            r = (pl + "tail") + ns.PromptList(["more"])
            r = "" + r
        return [list(r), str(r)]
    if case["kind"] == "batch":
        pl = ns.PromptList(
            [dict(section="round", pos="begin"), *copy.deepcopy(case["items"]), dict(section="round", pos="end")]
        )
        parser = (ns.APITemplateParser if case["parser"] == "api" else ns.LMTemplateParser)(copy.deepcopy(case["meta"]))
        return parser.parse_template(["plain", pl, "x"], mode="gen")
    spec = case["spec"]
    t = ns.PromptTemplate(
        copy.deepcopy(spec["template"]), ice_token=spec.get("ice_token"), sep_token=spec.get("sep_token")
    )
    e = copy.deepcopy(case["entry"])
    labels = list(spec["template"].keys()) if case["spec"] in LBL_T.values() else [None]
    op = case["op"]
    res = []
    if op == "item":
        res.append(t.generate_item(e, output_field="a", ice_field_replace_token="ICE\n"))
    elif op == "item_nofield":
        res.append(t.generate_item(e))
    elif op == "ice_item":
        for lb in labels:
            res.append(t.generate_ice_item(e, lb))
    else:
        for lb in labels:
            res.append(t.generate_label_prompt_item(e, "ICE {q}\n", lb, remain_sep=op.endswith("sep")))
    return [[list(r), str(r)] if not isinstance(r, str) else r for r in res]


def main() -> None:
    global OC, AIS_GIT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opencompass-src", required=True, help="the folder holding the opencompass package")
    parser.add_argument("--aisbench-git", required=True, help="the .git folder of an AISBench checkout")
    parser.add_argument("--output", default="tests/templates/data/upstream_corpus.json")
    args = parser.parse_args()
    OC, AIS_GIT = args.opencompass_src.rstrip("/") + "/", args.aisbench_git
    result = []
    for case in cases() + mm_mt_cases() + direct_cases():
        try:
            kind = case.get("kind")
            runner = run_direct if kind in ("direct", "plist", "batch") else run_mm_mt if kind else run_upstream
            case["expected"] = json.loads(json.dumps(runner(case)))
        except Exception as exc:  # noqa: BLE001 - an upstream crash is a fact to record
            case["upstream_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
        result.append(case)
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write("[\n" + ",\n".join(json.dumps(c, ensure_ascii=False) for c in result) + "\n]\n")
    print(len(result), "cases,", sum("expected" in c for c in result), "outputs", file=sys.stderr)


if __name__ == "__main__":
    main()

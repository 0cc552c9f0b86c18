"""A config value of the wrong type anywhere in a pasted dataset or model config (``retriever=None``,
``infer_cfg="..."``, ``output_column=["a"]``, ``meta_template=dict(round=None)``, ``path=None``, an output
path that is a number) is a typed error naming the key and what it expects, never a bare ``TypeError`` or
``AttributeError`` from deep inside, and the caller's config is left as it was."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from modules.errors import ModuleConfigError
from modules.eval import plan, run_eval
from prompter.errors import EvalTemplateError, PromptError

ROUND = [dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")]
DATASET: dict[str, Any] = dict(
    path=[{"q": "1", "a": "2", "l": "A"}, {"q": "3", "a": "4", "l": "B"}],
    reader_cfg=dict(input_columns=["q"], output_column="a"),
    infer_cfg=dict(
        ice_template=dict(type="PromptTemplate", template=dict(round=ROUND)),
        prompt_template=dict(
            type="PromptTemplate",
            template=dict(begin=[dict(role="SYSTEM", fallback_role="HUMAN", prompt="S"), "</E>"], round=ROUND),
            ice_token="</E>",
            sep_token="</S>",
        ),
        retriever=dict(type="FixKRetriever", fix_id_list=[0]),
        inferencer=dict(type="GenInferencer", max_out_len=4, stopping_criteria=["\n"]),
    ),
)
MODEL: dict[str, Any] = dict(
    type="OnlineChatModule",
    meta_template=dict(
        round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)],
        reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM")],
    ),
    stop_words=["x"],
)
INFERENCERS = {
    "gen": None,
    "ppl": dict(type="PPLInferencer"),
    "multiturn": dict(type="MultiTurnGenInferencer", infer_mode="every"),
}


def _set(config: dict[str, Any], where: tuple[Any, ...], value: Any) -> dict[str, Any]:
    config = copy.deepcopy(config)
    node = config
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return config


@pytest.mark.parametrize(
    ("where", "value", "says"),
    [
        (("infer_cfg", "retriever"), None, r"infer_cfg\['retriever'\]: expected a dict\(type=\.\.\.\) config block"),
        (("infer_cfg", "inferencer"), 7, r"infer_cfg\['inferencer'\]: expected a dict\(type=\.\.\.\)"),
        (("infer_cfg", "prompt_template"), -1, r"infer_cfg\['prompt_template'\]: expected a dict\(type=\.\.\.\)"),
        (("infer_cfg", "ice_template"), b"b", r"infer_cfg\['ice_template'\]: expected a dict\(type=\.\.\.\)"),
        (("infer_cfg",), "{q}", r"infer_cfg: expected a dict of prompt_template, retriever and inferencer"),
        (("reader_cfg", "output_column"), ["a"], r"reader_cfg\['output_column'\]: expected a column name"),
        (("path",), None, r"dataset: expected a \.jsonl/\.json/\.csv path, a list of sample dicts"),
    ],
    ids=["retriever-none", "inferencer-int", "prompt-template-int", "ice-template-bytes", "infer-cfg-str",
         "output-column-list", "path-none"],  # fmt: skip
)
@pytest.mark.parametrize("inferencer", sorted(INFERENCERS))
def test_a_dataset_value_of_the_wrong_type_is_a_config_error_naming_it(
    where: tuple[str, ...], value: Any, says: str, inferencer: str
) -> None:
    dataset = DATASET if INFERENCERS[inferencer] is None else _set(DATASET, ("infer_cfg", "inferencer"), INFERENCERS[inferencer])
    dataset = _set(dataset, where, value)
    with pytest.raises(ModuleConfigError, match=says):
        plan(dataset, MODEL).jobs()


@pytest.mark.parametrize("key", ["round", "reserved_roles"])
@pytest.mark.parametrize("value", [None, 1.5], ids=["none", "float"])
def test_meta_template_roles_of_the_wrong_type_are_a_template_error_naming_the_key(key: str, value: Any) -> None:
    with pytest.raises(EvalTemplateError, match=rf"{key}: expected a list of dict\(role=\.\.\., \.\.\.\)"):
        plan(DATASET, _set(MODEL, ("meta_template", key), value))


def test_a_model_config_that_is_no_dict_is_named_without_its_contents() -> None:
    with pytest.raises(ModuleConfigError, match=r"model: expected a dict config.*got list") as caught:
        plan(DATASET, [{"type": "OnlineChatModule", "api_key": "sk-secret-value"}])  # type: ignore[arg-type]
    assert "sk-secret" not in str(caught.value)


@pytest.mark.parametrize("output", [-1, 1.5, True, [1], b"p"], ids=["int", "float", "bool", "list", "bytes"])
def test_an_output_that_is_no_path_is_a_config_error(tmp_path: Path, output: Any) -> None:
    config = dict(dataset=DATASET, model=MODEL, output=output)
    with pytest.raises(ModuleConfigError, match=r"output: expected the predictions file's path"):
        run_eval(config, base_dir=tmp_path, progress=False)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at] if at else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*at, i))
    return out


PATHS = [("dataset", *p) for p in _paths(DATASET)] + [("model", *p) for p in _paths(MODEL)]
ODD = [None, 0, -1, 1.5, True, "", "{q}", [], {}, [1], {"a": 1}, b"b", ("t",), float("nan"), 10**30, [None]]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    where=st.sampled_from(PATHS),
    value=st.sampled_from(ODD),
    compat=st.sampled_from([None, "opencompass", "aisbench"]),
    inferencer=st.sampled_from(sorted(INFERENCERS)),
)
def test_any_config_value_of_any_type_gives_prompts_or_a_typed_error(
    where: tuple[Any, ...], value: Any, compat: Any, inferencer: str
) -> None:
    dataset = DATASET if INFERENCERS[inferencer] is None else _set(DATASET, ("infer_cfg", "inferencer"), INFERENCERS[inferencer])
    configs = {"dataset": dataset, "model": MODEL}
    assume(where[:-1] in _paths(configs) or len(where) == 2)  # the inferencer replaced may lack the key
    configs = _set(configs, where, value)
    before = copy.deepcopy(configs)
    try:
        plan(configs["dataset"], configs["model"], compat=compat).jobs()
    except (PromptError, ModuleConfigError):
        pass
    assert repr(configs) == repr(before)  # nothing the caller gave was changed (repr: nan != nan)

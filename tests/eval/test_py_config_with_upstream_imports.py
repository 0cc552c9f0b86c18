"""A ``.py`` config pasted as OpenCompass writes it, ``from opencompass... import PromptTemplate`` lines
and all, runs without OpenCompass: each imported name stands for itself, which ``type=`` accepts. An
import that cannot be met is a one-line config error, not a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval.cli import load_config

PASTED = '''\
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import FixKRetriever
from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.datasets import GSM8KDataset, gsm8k_postprocess, Gsm8kEvaluator
from opencompass.models import HuggingFacewithChatTemplate

reader_cfg = dict(input_columns=['question'], output_column='answer')
infer_cfg = dict(
    ice_template=dict(
        type=PromptTemplate,
        template=dict(round=[
            dict(role='HUMAN', prompt='Question: {question}'),
            dict(role='BOT', prompt='The answer is {answer}\\n'),
        ])),
    prompt_template=dict(
        type=PromptTemplate,
        template=dict(begin='</E>', round=[
            dict(role='HUMAN', prompt='Question: {question}'),
            dict(role='BOT', prompt='The answer is {answer}\\n'),
        ]),
        ice_token='</E>'),
    retriever=dict(type=FixKRetriever, fix_id_list=[1]),
    inferencer=dict(type=GenInferencer, max_out_len=512))
eval_cfg = dict(evaluator=dict(type=Gsm8kEvaluator), pred_postprocessor=dict(type=gsm8k_postprocess))
datasets = [dict(abbr='gsm8k', type=GSM8KDataset, path='toy.jsonl',
                 reader_cfg=reader_cfg, infer_cfg=infer_cfg, eval_cfg=eval_cfg)]
models = [dict(type=HuggingFacewithChatTemplate, abbr='tiny', path='no-such-model', max_out_len=64,
               meta_template=dict(round=[dict(role='HUMAN', begin='<u>', end='\\n'),
                                         dict(role='BOT', begin='<b>', end='\\n', generate=True)]))]
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    rows = [{"question": "1+1?", "answer": "2"}, {"question": "2+2?", "answer": "4"}]
    (tmp_path / "toy.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "gsm8k_gen.py").write_text(PASTED)
    return tmp_path


def test_a_config_pasted_with_its_opencompass_imports_renders(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(folder / "gsm8k_gen.py")]) == 0
    out = capsys.readouterr().out
    assert out == (
        "--- sample 0 (gen) ---\n<u>Question: 2+2?\n<b>The answer is 4\n\n<u>Question: 1+1?\n<b>\n"
        "--- sample 1 (gen) ---\n<u>Question: 2+2?\n<b>The answer is 4\n\n<u>Question: 2+2?\n<b>\n"
    )
    config = load_config(folder / "gsm8k_gen.py")
    assert config["models"][0]["type"] == "HuggingFacewithChatTemplate"
    assert "opencompass" not in sys.modules  # nothing was imported


def test_an_import_the_config_cannot_meet_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "base.py").write_text("from mmengine.config import read_base\nwith read_base():\n    from .x import y\n")
    with pytest.raises(ModuleConfigError, match=r"base\.py.*paste the blocks it imports"):
        load_config(tmp_path / "base.py")
    (tmp_path / "rel.py").write_text("from .gsm8k_gen import datasets\n")
    with pytest.raises(ModuleConfigError, match=r"rel\.py"):
        load_config(tmp_path / "rel.py")


def test_a_config_still_imports_what_is_installed(tmp_path: Path) -> None:
    (tmp_path / "own.py").write_text(
        "import json\nfrom prompter.templates import PromptTemplate\n"
        "dataset = json.loads('{\"path\": []}')\nkind = PromptTemplate\n"
    )
    config = load_config(tmp_path / "own.py")
    assert config["dataset"] == {"path": []}
    assert config["kind"].__module__ == "prompter.templates.prompt_template"

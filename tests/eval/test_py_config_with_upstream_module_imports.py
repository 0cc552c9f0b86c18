"""A pasted ``.py`` config may import upstream modules, not only names from them:
``import opencompass.openicl.icl_prompt_template as M`` then ``type=M.PromptTemplate``, or a plain
``import opencompass`` then the whole dotted name. Each such name stands for itself (a plain str),
as ``from ... import PromptTemplate`` does, instead of failing with "cannot import name
'icl_prompt_template' from '<unknown module name>'". Reading another config file this way is still a
config error naming it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval.cli import load_config

BLOCKS = '''\
reader_cfg = dict(input_columns=['question'], output_column='answer')
infer_cfg = dict(
    prompt_template=dict(type={template}, template=dict(round=[
        dict(role='HUMAN', prompt='Question: {{question}}'), dict(role='BOT', prompt='{{answer}}')])),
    retriever=dict(type={retriever}),
    inferencer=dict(type={inferencer}, max_out_len=16))
datasets = [dict(abbr='toy', path='toy.jsonl', reader_cfg=reader_cfg, infer_cfg=infer_cfg)]
models = [dict(type={model}, abbr='m', path='no-such-model',
               meta_template=dict(round=[dict(role='HUMAN', begin='<u>', end='\\n'),
                                         dict(role='BOT', begin='<b>', end='\\n', generate=True)]))]
'''

FORMS = {
    "import as": (
        "import opencompass.openicl.icl_prompt_template as T\nimport opencompass.openicl.icl_retriever as R\n"
        "import opencompass.openicl.icl_inferencer as I\nimport opencompass.models as models\n",
        dict(template="T.PromptTemplate", retriever="R.ZeroRetriever", inferencer="I.GenInferencer",
             model="models.HuggingFacewithChatTemplate"),
    ),
    "plain import": (
        "import opencompass\n",
        dict(template="opencompass.openicl.icl_prompt_template.PromptTemplate",
             retriever="opencompass.openicl.icl_retriever.ZeroRetriever",
             inferencer="opencompass.openicl.icl_inferencer.GenInferencer",
             model="opencompass.models.HuggingFacewithChatTemplate"),
    ),
    "dotted import": (
        "import opencompass.openicl.icl_prompt_template\nimport opencompass.openicl.icl_retriever\n"
        "import ais_bench.benchmark.openicl.icl_inferencer\nimport opencompass.models\n",
        dict(template="opencompass.openicl.icl_prompt_template.PromptTemplate",
             retriever="opencompass.openicl.icl_retriever.ZeroRetriever",
             inferencer="ais_bench.benchmark.openicl.icl_inferencer.GenInferencer",
             model="opencompass.models.HuggingFacewithChatTemplate"),
    ),
    "submodule from package": (
        "from opencompass.openicl import icl_prompt_template, icl_retriever as R\n"
        "from opencompass import openicl, models\n",
        dict(template="icl_prompt_template.PromptTemplate", retriever="R.ZeroRetriever",
             inferencer="openicl.icl_inferencer.GenInferencer", model="models.HuggingFacewithChatTemplate"),
    ),
}


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    (tmp_path / "toy.jsonl").write_text(json.dumps({"question": "1+1?", "answer": "2"}) + "\n")
    return tmp_path


@pytest.mark.parametrize("form", FORMS)
def test_names_read_off_an_imported_module_stand_for_themselves(toy: Path, form: str) -> None:
    imports, names = FORMS[form]
    (toy / "cfg.py").write_text(imports + BLOCKS.format(**names))
    config = load_config(toy / "cfg.py")
    infer = config["datasets"][0]["infer_cfg"]
    kinds = [infer["prompt_template"]["type"], infer["retriever"]["type"], infer["inferencer"]["type"],
             config["models"][0]["type"]]
    assert kinds == ["PromptTemplate", "ZeroRetriever", "GenInferencer", "HuggingFacewithChatTemplate"]
    assert all(type(kind) is str for kind in kinds)  # plain text, as a `from ... import` name is
    assert "opencompass" not in sys.modules and "ais_bench" not in sys.modules  # nothing was imported


@pytest.mark.parametrize("form", FORMS)
def test_a_config_importing_modules_renders_as_one_importing_names(
    toy: Path, form: str, capsys: pytest.CaptureFixture[str]
) -> None:
    imports, names = FORMS[form]
    (toy / "cfg.py").write_text(imports + BLOCKS.format(**names))
    assert main(["view", str(toy / "cfg.py")]) == 0
    assert capsys.readouterr().out == "--- sample 0 (gen) ---\n<u>Question: 1+1?\n<b>\n"


def test_a_block_used_twice_stays_one_block(tmp_path: Path) -> None:
    (tmp_path / "cfg.py").write_text(
        "import opencompass.openicl.icl_prompt_template as T\nt = dict(type=T.PromptTemplate)\nboth = [t, (t,)]\n"
    )
    both = load_config(tmp_path / "cfg.py")["both"]
    assert both == [{"type": "PromptTemplate"}, ({"type": "PromptTemplate"},)]
    assert both[0] is both[1][0]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("import opencompass.configs.datasets.gsm8k.gsm8k_gen as G\n", "'import opencompass.configs.datasets.gsm8k"),
        ("from opencompass import configs\n", "'from opencompass import configs'"),
        ("import opencompass\ndatasets = opencompass.configs.datasets.gsm8k.gsm8k_gen.gsm8k_datasets\n",
         "'opencompass.configs'"),
        ("import opencompass.datasets as D\ndatasets = D.configs\n", "'opencompass.datasets.configs'"),
    ],
    ids=["import as", "from package", "attribute of package", "attribute of module"],
)
def test_reading_another_config_file_through_a_module_is_a_config_error_naming_it(
    tmp_path: Path, body: str, named: str
) -> None:
    (tmp_path / "cfg.py").write_text(body)
    with pytest.raises(ModuleConfigError, match="reads another config file") as caught:
        load_config(tmp_path / "cfg.py")
    assert named in str(caught.value) and "paste the blocks" in str(caught.value)

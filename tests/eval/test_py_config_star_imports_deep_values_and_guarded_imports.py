"""Three ways a pasted .py config ended in a Python traceback, now one-line typed errors naming the fix:
``from opencompass... import *`` imported no names (a bare NameError later); a value nested too deep raised
RecursionError; ``try: from opencompass.configs... import x / except Exception: pass`` hid the refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.errors import ModuleConfigError
from modules.eval.cli import load_config

BLOCK = """
datasets = [dict(path=[{"q": "1+1", "a": "2"}], reader_cfg=dict(input_columns=["q"], output_column="a"),
                 infer_cfg=dict(prompt_template=dict(type=PromptTemplate, template="{q}="),
                                retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer")))]
"""


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("from opencompass.openicl.icl_prompt_template import *\n" + BLOCK, "import each name"),
        ("x = []\nfor _ in range(100000):\n    x = [x]\nPromptTemplate = 'PromptTemplate'\n" + BLOCK, "nested too deep"),
        (
            "try:\n    from opencompass.configs.datasets.gsm8k import gsm8k_datasets\nexcept Exception:\n    pass\n"
            "PromptTemplate = 'PromptTemplate'\n" + BLOCK,
            "reads another config file",
        ),
    ],
    ids=["star-import", "deep-value", "guarded-configs-import"],
)
def test_the_config_mistake_is_a_one_line_error(tmp_path: Path, source: str, said: str) -> None:
    path = tmp_path / "cfg.py"
    path.write_text(source, encoding="utf-8")
    with pytest.raises(ModuleConfigError, match=said):
        load_config(path)

"""A pasted config with a misspelled key gets an error that names the key it resembles."""

from __future__ import annotations

import pytest

from modules.errors import ModuleConfigError
from modules.eval.pipeline import plan


def test_a_misspelled_infer_cfg_key_names_the_key_it_resembles() -> None:
    dataset = {
        "path": [{"q": "1+1=?", "a": "2"}],
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "prompt_template": {"type": "PromptTemplate", "template": "Q: {q}\nA: {a}"},
            "retreiver": {"type": "ZeroRetriever"},
            "inferencer": {"type": "GenInferencer", "max_out_len": 4},
        },
    }
    with pytest.raises(ModuleConfigError, match=r"did you mean 'retriever' for 'retreiver'\?") as caught:
        plan(dataset, model={})
    assert "'prompt_template'" in str(caught.value)  # and the keys an infer_cfg takes

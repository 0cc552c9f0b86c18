"""OpenCompass's new-style configs import datasets and models from ``opencompass.configs...`` (inside
``read_base()`` or not). Those are other config files: they are not followed, and the error says so and
names the import, instead of the imported list becoming a bare string (``datasets = gsm8k_datasets``)
that later fails as "expected a list of dict configs, got str" or as 14 one-letter datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.cli import main
from modules.errors import ModuleConfigError
from modules.eval.cli import load_config

IMPORT = "from opencompass.configs.datasets.gsm8k.gsm8k_gen import gsm8k_datasets\n"


@pytest.mark.parametrize(
    "body",
    [
        IMPORT + "datasets = gsm8k_datasets\n",
        IMPORT + "datasets = [*gsm8k_datasets]\n",
        "with open(__file__):\n    " + IMPORT + "datasets = gsm8k_datasets\n",
        "from ais_bench.benchmark.configs.models.vllm_api.vllm_api_general import models\n",
    ],
    ids=["assigned", "unpacked", "indented", "aisbench"],
)
def test_an_import_from_upstream_config_files_is_a_config_error_naming_it(tmp_path: Path, body: str) -> None:
    (tmp_path / "new_style.py").write_text(body + "models = [dict(type='TrainableModule', path='x')]\n")
    with pytest.raises(ModuleConfigError, match=r"new_style\.py.*reads another config file.*paste the blocks"):
        load_config(tmp_path / "new_style.py")


def test_prompter_view_reports_the_import_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "eval_demo.py").write_text(IMPORT + "datasets = gsm8k_datasets\n")
    with pytest.raises(SystemExit):
        main(["view", str(tmp_path / "eval_demo.py")])
    err = capsys.readouterr().err
    assert "opencompass.configs.datasets.gsm8k.gsm8k_gen import gsm8k_datasets" in err
    assert "Traceback" not in err


def test_names_from_upstream_packages_still_stand_for_themselves(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text(
        "from opencompass.openicl.icl_prompt_template import PromptTemplate\n"
        "from opencompass.datasets import gsm8k_postprocess\nkind, post = PromptTemplate, gsm8k_postprocess\n"
    )
    config = load_config(tmp_path / "ok.py")
    assert (config["kind"], config["post"]) == ("PromptTemplate", "gsm8k_postprocess")

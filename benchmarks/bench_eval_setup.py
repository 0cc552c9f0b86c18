"""Installs OpenCompass 0.5.4 into its own venv, .opencompass-venv, for bench_eval.py.

OpenCompass is installed with --no-deps, plus only what importing its prompt
template, retrievers and LM template parser needs (found by trial: its package
``__init__`` files import the dataset reader, the evaluators and mmengine). The
venv sees this project's venv's packages (torch, transformers, numpy) through a
``.pth`` file, so nothing large is downloaded. Safe to run repeatedly.

    python benchmarks/bench_eval_setup.py
"""

from __future__ import annotations

import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".opencompass-venv"
PACKAGES = [
    "opencompass==0.5.4",
    "mmengine-lite",
    "datasets",
    "multiprocess",
    "pandas",
    "pyarrow",
    "dill",
    "xxhash",
    "yapf",
    "addict",
    "termcolor",
    "importlib_metadata",
    "lazy_importer",
    "jieba",
    "scipy",
    "scikit-learn",
    "joblib",
    "cloudpickle",
    "narwhals",
    "threadpoolctl",
    "evaluate",
    "rouge_chinese",
    "six",
    "nltk",
    "rank_bm25",
]


def main() -> None:
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    target = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (Path(target) / "project_venv.pth").write_text(site.getsitepackages()[0] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", *PACKAGES], check=True
    )
    code = "import opencompass; from opencompass.models.base import LMTemplateParser; print('opencompass', opencompass.__version__, 'ok')"
    subprocess.run([str(python), "-c", code], check=True, cwd="/tmp")


if __name__ == "__main__":
    main()

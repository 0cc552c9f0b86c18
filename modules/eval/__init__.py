"""Evaluation over any module: retrievers and templates from ``prompter.templates``, Gen/PPL inference here.

>>> from modules.eval import GenInferencer, PPLInferencer, run_eval
"""

from modules.eval.datasets import load_samples
from modules.eval.inferencers import GenInferencer, PPLInferencer
from modules.eval.pipeline import build_module, plan
from modules.eval.runner import RunStats, run_eval, run_plan

__all__ = ["GenInferencer", "PPLInferencer", "RunStats", "build_module", "load_samples", "plan", "run_eval", "run_plan"]

"""Renders the benchmark's 5-shot gen config with the real OpenCompass; run by bench_eval.py in its own venv.

Reads ``{"index": [...], "tests": [...], "ice_template": ..., "prompt_template": ...,
"meta_template": ..., "fix_id_list": [...]}`` as JSON on stdin; prints
``{"version": ..., "seconds": ..., "prompts": [...]}``. It imports nothing from this
repository (see bench_eval_setup.py for the venv).
"""

from __future__ import annotations

import json
import sys
import time
import types


def main() -> None:
    import opencompass
    from opencompass.models.base import LMTemplateParser
    from opencompass.openicl.icl_prompt_template import PromptTemplate
    from opencompass.openicl.icl_retriever import FixKRetriever

    spec = json.load(sys.stdin)
    dataset = types.SimpleNamespace(
        reader=types.SimpleNamespace(output_column="answer"), train=spec["index"], test=spec["tests"]
    )
    start = time.process_time()
    ice_t = PromptTemplate(spec["ice_template"])
    prompt_t = PromptTemplate(spec["prompt_template"], ice_token="</E>")
    retriever = FixKRetriever(dataset, fix_id_list=spec["fix_id_list"])
    parser = LMTemplateParser(spec["meta_template"])
    prompts = []
    for idx, ids in enumerate(retriever.retrieve()):
        ice = retriever.generate_ice(ids, ice_template=ice_t)
        prompt = retriever.generate_prompt_for_generate_task(idx, ice, ice_template=ice_t, prompt_template=prompt_t)
        prompts.append(parser.parse_template(prompt, mode="gen"))
    seconds = time.process_time() - start
    json.dump({"version": opencompass.__version__, "seconds": seconds, "prompts": prompts}, sys.stdout)


if __name__ == "__main__":
    main()

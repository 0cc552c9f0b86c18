"""A dataset rendered at once refuses what one sample rendered alone refuses, even in a turn the cut drops.

In Gen mode the meta template cuts the prompt at the answer's turn, so a field filled there (``A: {a}``)
never shows. Rendering one sample fills it first, and a value that is no text (``None``) is an
``InputTypeError`` naming the field; the batch's plan only took the fields that show, so the same entry
rendered at once came out as text. Found by the batch-equals-per-sample property.
"""

from __future__ import annotations

import pytest

from prompter.errors import InputTypeError
from prompter.templates import MetaTemplate, PromptTemplate
from prompter.templates.batch import render_one, render_prompts
from prompter.templates.retrievers import ZeroRetriever

META = MetaTemplate(round=[{"role": "HUMAN", "begin": "<u>", "end": "</u>\n"}, {"role": "BOT", "begin": "<b>", "generate": True}])
PROMPT = PromptTemplate({"round": [{"role": "HUMAN", "prompt": "Q: {q}"}, {"role": "BOT", "prompt": "A: {a}"}]})


@pytest.mark.parametrize("bad", [None, ["a list"], {"a": "dict"}], ids=["none", "list", "dict"])
def test_a_value_of_no_text_in_the_cut_turn_is_refused_in_a_batch_as_alone(bad: object) -> None:
    retriever = ZeroRetriever([{"q": "x", "a": "y"}], output_column="q")
    tests = [{"q": "1", "a": "one"}, {"q": "2", "a": "two"}, {"q": "3", "a": bad}]  # the first two: a plan
    with pytest.raises(InputTypeError, match=r"entry\['a'\]"):
        render_one(retriever, tests[2], [], META, prompt_template=PROMPT)
    with pytest.raises(InputTypeError, match=r"entry\['a'\]"):
        render_prompts(retriever, tests, META, prompt_template=PROMPT)
    assert render_prompts(retriever, tests[:2], META, prompt_template=PROMPT) == [
        render_one(retriever, t, [], META, prompt_template=PROMPT) for t in tests[:2]
    ]

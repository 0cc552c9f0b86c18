"""An evaluation harness's prompts, end to end, with no model and no network.

One small arithmetic dataset is rendered the way OpenCompass renders it: few-shot
generation prompts for a local model (its meta template derived from a ModelFormat)
and for an API model, PPL candidates for a multiple-choice question, a multi-turn
sample answered by a stand-in model, and a multimodal sample.

Run: python examples/evaluation.py
"""

from __future__ import annotations

import json

from prompter import ModelFormat
from prompter.templates import (
    MetaTemplate,
    MMPromptTemplate,
    MultiTurnPromptTemplate,
    PromptList,
    PromptTemplate,
)
from prompter.templates.meta_template import api_to_messages

TRAIN = [
    {"question": "2+2=?", "answer": "4"},
    {"question": "3+3=?", "answer": "6"},
]
TEST = [
    {"question": "1+1=?", "answer": "2"},
    # a value that looks like template syntax stays as it is
    {"question": "What is {answer} + </E>?", "answer": "?"},
]

QA = [dict(role="HUMAN", prompt="{question}"), dict(role="BOT", prompt="{answer}")]
ICE_TEMPLATE = PromptTemplate(dict(round=QA))
PROMPT_TEMPLATE = PromptTemplate(
    dict(begin=[dict(role="SYSTEM", fallback_role="HUMAN", prompt="Solve the following questions."), "</E>"], round=QA),
    ice_token="</E>",
)

LOCAL_MODEL = MetaTemplate.from_model_format(ModelFormat.get("qwen2.5"))
API_MODEL = MetaTemplate(
    round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)],
    reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM")],
)


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * (60 - len(title)))


def few_shot_generation() -> None:
    ice = ICE_TEMPLATE.generate_ice(TRAIN)
    for sample in TEST:
        prompt = PROMPT_TEMPLATE.generate_item(sample, output_field="answer", ice_field_replace_token=ice)
        banner(f"gen, local model: {sample['question']}")
        print(LOCAL_MODEL.parse(prompt, mode="gen"))
        banner(f"gen, API model: {sample['question']}")
        print(json.dumps(api_to_messages(API_MODEL.parse_api(prompt, mode="gen")), indent=1, ensure_ascii=False))
        banner("gen, no meta template (a base model)")
        print(MetaTemplate().parse(prompt, mode="gen"))


def perplexity_candidates() -> None:
    stem = "Question: Which is true?\nA. {A}\nB. {B}\nAnswer: "
    template = PromptTemplate({"A": stem + "A", "B": stem + "B"})
    sample = {"A": "1 > 2", "B": "2 > 1", "answer": "B"}
    banner("ppl candidates")
    for label in template.labels:
        print(f"[{label}]", repr(template.generate_label_prompt_item(sample, "", label)))


def multi_turn() -> None:
    template = MultiTurnPromptTemplate(dict(round=QA))
    sample = {"question": ["1+1=?", "Double it.", "And halve that?"], "answer": ["2", "4", "2"]}

    def stand_in_model(prompt: PromptList) -> str:
        text = LOCAL_MODEL.parse(prompt, mode="gen")
        return f"<answer after {text.count('<|im_start|>user')} question(s)>"

    for mode in ("every", "every_with_gt", "last"):
        banner(f"multi-turn, mode={mode}")
        print(template.run(sample, mode, output_field="answer", respond=stand_in_model))
    (last,) = template.generate_turns(sample, "last", output_field="answer")
    print(LOCAL_MODEL.parse(last, mode="gen"))


def multimodal() -> None:
    template = MMPromptTemplate(
        dict(
            round=[
                dict(
                    role="HUMAN",
                    prompt_mm={
                        "text": {"type": "text", "text": "Question: {question}"},
                        "image": {"type": "image_url", "image_url": {"url": "file://{image}"}},
                    },
                )
            ]
        )
    )
    sample = {
        "question": "<AIS_TEXT_START>What is this?<AIS_CONTENT_TAG><AIS_IMAGE_START>cat.jpg<AIS_CONTENT_TAG>",
        "answer": "a cat",
    }
    banner("multimodal, API model")
    prompt = template.generate_item(sample, output_field="answer")
    print(json.dumps(api_to_messages(API_MODEL.parse_api(prompt)), indent=1))


if __name__ == "__main__":
    few_shot_generation()
    perplexity_candidates()
    multi_turn()
    multimodal()

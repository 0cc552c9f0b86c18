"""Training examples are built by the inference path: same prompt ids, label and end-of-turn learnt, specials as data.

One row per model family (tiny models with the family's real chat template and
control tokens). The oracle for the prompt is ``module.build_request`` (the ids a call
sends); the oracle for the learnt part is the label followed by the family's
end-of-turn text, the text generation must produce before it stops.
"""

from __future__ import annotations

import copy
from collections import Counter
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.local.safe_tokens import control_token_ids
from modules.local.training.example import IGNORE_INDEX, TrainingExampleError
from prompter import ChatPrompter

# family -> the text after the label that the model learns (through its stop token)
END_OF_TURN = {
    "qwen2.5": "<|im_end|>",
    "llama-3.1": "<|eot_id|>",
    "gemma-2": "<end_of_turn>",
    "deepseek-v3": "<｜end▁of▁sentence｜>",
    "chatml": "<|im_end|>",
    "phi-3": "<|end|>",  # the turn's own end (Phi stops there); not the eos the template writes after the last turn
    "glm-4": "<|endoftext|>",  # the template closes no turn: the stop word is appended so the model learns to stop
    "alpaca": "</s>",  # the template rewrites earlier turns once an answer follows: label + stop word after the prompt
}
# a leading text the template writes before the answer, learnt with it (the model generates it)
LEAD = {"glm-4": "\n"}


@cache
def module(family: str) -> Any:
    """A TrainableModule on the family's tiny model, with a short instruction and no system prompt."""
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter("Answer briefly.", enable_system=False))


def learnt_text(m: Any, example: Any) -> str:
    ids = [t for t, label in zip(example["input_ids"], example["labels"]) if label != IGNORE_INDEX]
    return str(m.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))


@pytest.mark.parametrize("family", sorted(END_OF_TURN))
def test_prompt_ids_are_the_inference_ids(family: str) -> None:
    m = module(family)
    history = [["What is 1+1?", "two"]]
    example = m.training_example("What is 2+2?", history, label="four")
    request = m.build_request("What is 2+2?", history)
    assert example["input_ids"][: example.prompt_length] == list(request.input_ids)
    assert example["labels"][: example.prompt_length] == [IGNORE_INDEX] * example.prompt_length
    assert example["attention_mask"] == [1] * len(example["input_ids"])
    assert len(example["labels"]) == len(example["input_ids"])


@pytest.mark.parametrize("family", sorted(END_OF_TURN))
def test_learnt_tokens_are_the_label_and_the_end_of_turn(family: str) -> None:
    m = module(family)
    example = m.training_example("What is 2+2?", [["What is 1+1?", "two"]], label="four, of course")
    assert learnt_text(m, example) == LEAD.get(family, "") + "four, of course" + END_OF_TURN[family]


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "gemma-2"])
def test_train_on_history_also_learns_the_history_answers(family: str) -> None:
    m = module(family)
    example = m.training_example("q2", [["q1", "a1"]], label="a2", train_on_history=True)
    eot = END_OF_TURN[family]
    assert learnt_text(m, example) == f"a1{eot}a2{eot}"


def _control_counts(m: Any, ids: list[int]) -> Counter[int]:
    control = control_token_ids(m.tokenizer)
    return Counter(i for i in ids if i in control)


_SPECIALS = st.sampled_from(
    ["<|im_start|>", "<|im_end|>", "<|eot_id|>", "<|start_header_id|>", "<end_of_turn>", "<eos>", "<|endoftext|>",
     "<|end|>", "<|user|>", "[INST]", "</s>", "<s>", "<|begin_of_text|>", "<start_of_turn>"]
)  # fmt: skip
_TEXT = st.lists(st.one_of(_SPECIALS, st.text(max_size=8)), max_size=6).map("".join)


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "gemma-2", "phi-3"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(label=_TEXT, question=_TEXT, past_q=_TEXT, past_a=_TEXT)
def test_forged_control_tokens_in_label_or_history_add_no_control_ids(
    family: str, label: str, question: str, past_q: str, past_a: str
) -> None:
    """Control tokens typed into the label, the question or the history are data: the control ids of
    the example are those of the same example with plain words in their place."""
    m = module(family)
    example = m.training_example(question, [[past_q, past_a]], label=label, train_on_history=True)
    plain = m.training_example("q", [["pq", "pa"]], label="x", train_on_history=True)
    assert _control_counts(m, example["input_ids"]) == _control_counts(m, plain["input_ids"])
    learnt = [t for t, lab in zip(example["input_ids"], example["labels"]) if lab != IGNORE_INDEX]
    learnt_plain = [t for t, lab in zip(plain["input_ids"], plain["labels"]) if lab != IGNORE_INDEX]
    assert _control_counts(m, learnt) == _control_counts(m, learnt_plain)
    request = m.build_request(question, [[past_q, past_a]])
    answered = [*request.messages, {"role": "assistant", "content": label}]
    rendered = m.model_format.render(answered, add_generation_prompt=False)[len(request.text) :]
    tail = example["input_ids"][example.prompt_length :]
    decoded = m.tokenizer.decode(tail, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    normalizer = m.tokenizer.backend_tokenizer.normalizer  # Qwen2's NFC: "\uf900" is "\u8c48" at inference too
    expected = normalizer.normalize_str(rendered) if normalizer is not None else rendered
    assert decoded.startswith(expected)  # the label's text survives, as the template writes it


def test_caller_history_is_not_mutated() -> None:
    m = module("qwen2.5")
    history = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"}]
    before = copy.deepcopy(history)
    m.training_example("q2", history, label="a2", train_on_history=True)
    assert history == before


def test_max_length_cuts_the_example_and_says_so() -> None:
    m = module("qwen2.5")
    full = m.training_example("q", label="a long answer " * 10)
    cut = m.training_example("q", label="a long answer " * 10, max_length=full.prompt_length + 3)
    assert cut.truncated and not full.truncated
    assert cut["input_ids"] == full["input_ids"][: full.prompt_length + 3]
    assert len(cut["labels"]) == len(cut["attention_mask"]) == full.prompt_length + 3


@pytest.mark.parametrize("label", [None, 3, ["four"]], ids=["none", "int", "list"])
def test_a_label_that_is_not_text_is_a_typed_error(label: Any) -> None:
    with pytest.raises(TrainingExampleError, match="label"):
        module("qwen2.5").training_example("q", label=label)


# -- templates that mark the assistant's text with {% generation %} ----------------------------------

GENERATION_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'assistant' %}{{ '<|im_start|>assistant\\n' }}"
    "{% generation %}{{ message['content'] + '<|im_end|>\\n' }}{% endgeneration %}"
    "{% else %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


@pytest.fixture(scope="module")
def generation_module(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tiny chatml model with a template whose {% generation %} span also covers the newline after <|im_end|>."""
    import shutil

    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    folder = tmp_path_factory.mktemp("generation") / "model"
    shutil.copytree(cached_tiny_model("chatml"), folder)
    (folder / "chat_template.jinja").write_text(GENERATION_TEMPLATE, encoding="utf-8")
    return TrainableModule(folder).prompt(ChatPrompter("Answer briefly.", enable_system=False))


@pytest.mark.parametrize("train_on_history", [True, False], ids=["with-history", "last-turn"])
def test_generation_tags_give_transformers_assistant_mask(generation_module: Any, train_on_history: bool) -> None:
    m = generation_module
    example = m.training_example("q2", [["q1", "a1"]], label="a2", train_on_history=train_on_history)
    messages = [*m.build_request("q2", [["q1", "a1"]]).messages, {"role": "assistant", "content": "a2"}]
    hf = m.tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    assert example["input_ids"] == list(hf["input_ids"])
    expected = [t if mark else IGNORE_INDEX for t, mark in zip(hf["input_ids"], hf["assistant_masks"])]
    if not train_on_history:
        expected[: example.prompt_length] = [IGNORE_INDEX] * example.prompt_length
    assert example["labels"] == expected
    assert learnt_text(m, example).endswith("a2<|im_end|>\n")  # the template's span, newline included


def test_forged_control_tokens_in_label_stay_data_under_generation_tags(generation_module: Any) -> None:
    m = generation_module
    example = m.training_example("q", [["<|im_end|>", "<|im_start|>system"]], label="a<|im_end|><|im_start|>",
                                 train_on_history=True)  # fmt: skip
    plain = m.training_example("q", [["x", "y system"]], label="a", train_on_history=True)
    assert _control_counts(m, example["input_ids"]) == _control_counts(m, plain["input_ids"])
    learnt = [t for t, lab in zip(example["input_ids"], example["labels"]) if lab != IGNORE_INDEX]
    learnt_plain = [t for t, lab in zip(plain["input_ids"], plain["labels"]) if lab != IGNORE_INDEX]
    assert _control_counts(m, learnt) == _control_counts(m, learnt_plain)
    assert learnt_text(m, example).startswith("<|im_start|>system")  # the history answer, as text

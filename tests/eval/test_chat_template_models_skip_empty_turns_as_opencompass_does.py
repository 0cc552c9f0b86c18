"""OpenCompass's ``HuggingFacewithChatTemplate`` gives its chat template the turns its ``APITemplateParser``
writes after one more step (``_convert_chat_messages``): a turn whose prompt is empty is left out, and then
consecutive messages of one role are joined with ``"\\n"``. So an in-context example with an empty answer
leaves no empty assistant message between two user turns: the two questions are one user message. The
predictions file keeps the turns as the parser writes them, as upstream's ``origin_prompt`` does.

Before, the empty assistant turn went to the chat template as it was, which writes another prompt."""

from __future__ import annotations

from typing import Any

from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.eval import plan

ROUND = [dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")]
MODEL = dict(type="HuggingFacewithChatTemplate", abbr="tiny-hf", path="unused", max_out_len=2)


def _upstream_messages(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    """Upstream's conversion, written from its documented steps: skip empty prompts, map roles, merge."""
    roles = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}
    merged: list[dict[str, str]] = []
    for turn in turns:
        if turn["prompt"] == "":
            continue
        if merged and merged[-1]["role"] == roles[turn["role"]]:
            merged[-1]["content"] += "\n" + turn["prompt"]
        else:
            merged.append({"role": roles[turn["role"]], "content": turn["prompt"]})
    return merged


class _Recorder:
    """The module, with each chat request it is asked for recorded."""

    def __init__(self, module: Any) -> None:
        self.module, self.requests = module, []

    def __call__(self, messages: Any, **options: Any) -> Any:
        self.requests.append(self.module.build_request(messages, **options))
        return self.module(messages, **options)


def _dataset(samples: list[dict[str, str]], inferencer: dict[str, Any]) -> dict[str, Any]:
    return dict(
        path=samples,
        reader_cfg=dict(input_columns=["q"], output_column="a"),
        infer_cfg=dict(
            ice_template=dict(type="PromptTemplate", template=dict(round=ROUND)),
            prompt_template=dict(type="PromptTemplate", template=dict(begin="</E>", round=ROUND), ice_token="</E>"),
            retriever=dict(type="FixKRetriever", fix_id_list=[0]),
            inferencer=inferencer,
        ),
    )


def test_an_example_with_an_empty_answer_leaves_no_empty_assistant_message(started_module: Any) -> None:  # noqa: F811
    samples = [{"q": "2+2=?", "a": ""}, {"q": "1+1=?", "a": "2"}]
    p = plan(_dataset(samples, dict(type="GenInferencer")), MODEL)
    job = p.jobs()[1]
    turns = [{"role": "HUMAN", "prompt": "2+2=?"}, {"role": "BOT", "prompt": ""}, {"role": "HUMAN", "prompt": "1+1=?"}]
    assert job["origin_prompt"] == turns  # the record: the parser's turns, as upstream's origin_prompt
    recorder = _Recorder(started_module)
    record = p.inferencer.answer(recorder, job)
    (request,) = recorder.requests
    want = _upstream_messages(turns)
    assert want == [{"role": "user", "content": "2+2=?\n1+1=?"}]
    tokenizer = started_module.tokenizer
    assert request.text == tokenizer.apply_chat_template(want, add_generation_prompt=True, tokenize=False)
    assert record["origin_prompt"] == turns
    assert set(record) == {"index", "kind", "origin_prompt", "gold", "prediction"}


def test_an_empty_question_is_left_out_and_its_neighbours_stay_apart(started_module: Any) -> None:  # noqa: F811
    samples = [{"q": "", "a": "4"}, {"q": "1+1=?", "a": "2"}]
    p = plan(_dataset(samples, dict(type="GenInferencer")), MODEL)
    job = p.jobs()[1]
    recorder = _Recorder(started_module)
    p.inferencer.answer(recorder, job)
    (request,) = recorder.requests
    want = _upstream_messages(job["origin_prompt"])
    assert want == [{"role": "assistant", "content": "4"}, {"role": "user", "content": "1+1=?"}]
    tokenizer = started_module.tokenizer
    assert request.text == tokenizer.apply_chat_template(want, add_generation_prompt=True, tokenize=False)


def test_an_online_model_is_still_sent_every_turn_as_opencompass_api_models_send_them() -> None:
    samples = [{"q": "2+2=?", "a": ""}, {"q": "1+1=?", "a": "2"}]
    meta = dict(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)])
    p = plan(_dataset(samples, dict(type="GenInferencer")), dict(type="OnlineChatModule", meta_template=meta))
    sent: list[Any] = []

    def module(messages: Any, **options: Any) -> str:
        sent.append(messages)
        return "2"

    p.inferencer.answer(module, p.jobs()[1])
    assert sent == [[{"role": "user", "content": "2+2=?"}, {"role": "assistant", "content": ""},
                     {"role": "user", "content": "1+1=?"}]]  # fmt: skip


def test_a_sample_whose_turns_are_all_empty_is_still_asked(started_module: Any) -> None:  # noqa: F811
    # upstream's apply_chat_template refuses the empty conversation its skipping leaves; here the turns go as written
    dataset = _dataset([{"q": "", "a": ""}], dict(type="GenInferencer"))
    dataset["infer_cfg"]["retriever"] = dict(type="ZeroRetriever")
    p = plan(dataset, MODEL)
    recorder = _Recorder(started_module)
    record = p.inferencer.answer(recorder, p.jobs()[0])
    (request,) = recorder.requests
    tokenizer = started_module.tokenizer
    want = [{"role": "user", "content": ""}]
    assert request.text == tokenizer.apply_chat_template(want, add_generation_prompt=True, tokenize=False)
    assert isinstance(record["prediction"], str)

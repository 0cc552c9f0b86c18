"""compat="opencompass" with a tokenizer that adds a bos: Gen and PPL read the text as upstream reads it.

OpenCompass's Hugging Face base models (``HuggingFaceBaseModel``, ``HuggingFace``, ``HuggingFaceCausalLM``)
generate from ``tokenizer(text)`` with ``add_special_tokens=True``, as their ``get_ppl`` scores; the compat
PPL added the bos and the compat Gen did not. And ``normalizing_str``'s calls mask ``get_token_len(context)``
tokens, which is 1 (the bos) for an empty context (a ``sep_token`` that stands first, or
``normalizing_str=""``), while a whole candidate is scored unmasked: the two were scored alike.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ppl_compat_scores_as_opencompass_get_ppl import _token_len, upstream_get_ppl
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import ModuleConfigError
from modules.eval.inferencers import GenInferencer, PPLInferencer, Prompts
from modules.local.trainable import TrainableModule
from prompter.templates import MetaTemplate, PromptTemplate
from prompter.templates.retrievers import ZeroRetriever

BEGIN_USER, BEGIN_BOT, END = "<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_end|>\n"
META = dict(round=[dict(role="HUMAN", begin=BEGIN_USER, end=END), dict(role="BOT", begin=BEGIN_BOT, generate=True)])
ENTRY = {"q": "Is it?", "a": "yes", "label": "Y"}


@pytest.fixture(scope="module")
def bos_module(tiny_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrainableModule]:  # noqa: F811
    """The tiny model with a tokenizer that puts a bos (``<|im_start|>``, not the pad token) before every text."""
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("bos-gen") / "model"
    shutil.copytree(tiny_model_path, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    bos = tokenizer.convert_tokens_to_ids("<|im_start|>")
    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single="<|im_start|> $A", special_tokens=[("<|im_start|>", bos)]
    )
    tokenizer.save_pretrained(folder)
    module = TrainableModule(folder, max_new_tokens=4).start()
    assert module.tokenizer("a")["input_ids"][0] == bos
    yield module
    module.stop()


def _gen_prompts(compat: str | None, markup: bool) -> Prompts:
    template = PromptTemplate(
        dict(round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt="{a}")]), compat=compat
    )
    meta = MetaTemplate(compat=compat, **META)  # type: ignore[arg-type]
    return Prompts(ZeroRetriever(output_column="a", compat=compat), meta, None, template, markup=markup)


@pytest.mark.parametrize("markup", [True, False], ids=["markup", "text"])
def test_compat_gen_generates_from_the_ids_upstreams_tokenizer_gives(bos_module: TrainableModule, markup: bool) -> None:
    inferencer = GenInferencer(max_out_len=3)
    prompts = _gen_prompts("opencompass", markup)
    job = inferencer.job(prompts, 0, ENTRY, [])
    assert job == inferencer.jobs(prompts, [ENTRY], [[]])[0]
    text = job["origin_prompt"]
    spans = [tuple(s) for s in job.get("user_spans", [(0, len(text))])]
    request = bos_module.prepare_text(text, user_spans=spans, add_special_tokens=True, max_new_tokens=3)
    upstream = bos_module.tokenizer(text, add_special_tokens=True)["input_ids"]  # HuggingFaceBaseModel.generate's
    if markup:
        assert list(request.input_ids) == upstream
    else:  # the whole text is data: the same ids but the meta template's control tokens, after the same bos
        assert request.input_ids[0] == upstream[0] and len(request.input_ids) > len(upstream)
    record = inferencer.answer(bos_module, job)
    assert record["prediction"] == bos_module.generate(request).text
    assert set(record) == {"index", "kind", "origin_prompt", "gold", "prediction"}


def test_compat_gen_reads_the_ids_compat_ppl_scores(bos_module: TrainableModule) -> None:
    from modules.local.scoring import added_ids

    text = "Q: Is it?\nA:"
    before, after = added_ids(bos_module.tokenizer)
    request = bos_module.prepare_text(text, add_special_tokens=True)
    assert list(request.input_ids) == bos_module.tokenizer(text)["input_ids"] == [*before, *request.input_ids[1:]]
    assert before and not after


def test_the_default_mode_and_plain_prepare_text_add_no_token(bos_module: TrainableModule) -> None:
    inferencer = GenInferencer(max_out_len=3)
    job = inferencer.job(_gen_prompts(None, True), 0, ENTRY, [])
    assert "add_special_tokens" not in job
    text = "Q: Is it?\nA:"
    assert list(bos_module.prepare_text(text).input_ids) == bos_module.tokenizer(text, add_special_tokens=False)[
        "input_ids"
    ]


@pytest.mark.parametrize("value", [1, "yes", None], ids=repr)
def test_add_special_tokens_of_the_wrong_type_is_a_typed_error(bos_module: TrainableModule, value: Any) -> None:
    with pytest.raises(ModuleConfigError, match="add_special_tokens: expected True or False"):
        bos_module.prepare_text("hi", add_special_tokens=value)


def test_an_empty_context_masks_the_bos_when_asked_as_normalizing_str_masks_it(bos_module: TrainableModule) -> None:
    answer = "yes it is"
    masked = bos_module.score([("", answer)], compat="opencompass", mask_empty_context=True)
    assert masked == pytest.approx(upstream_get_ppl(bos_module, [answer], [_token_len(bos_module, "")]), rel=1e-5)
    whole = bos_module.score([("", answer)], compat="opencompass")  # a whole candidate: upstream's unmasked call
    assert whole == pytest.approx(upstream_get_ppl(bos_module, [answer]), rel=1e-5)
    assert _token_len(bos_module, "") == 1 and masked != pytest.approx(whole, rel=1e-3)


@pytest.mark.parametrize(
    ("template", "norm"),
    [
        ({"Y": "</S> yes, it is", "N": "</S> no, it is not"}, "Answer:"),  # the sep_token stands first
        ({"Y": "Q: {q}</S> yes", "N": "Q: {q}</S> no"}, ""),  # normalizing_str is empty
    ],
    ids=["sep-first", "empty-normalizing-str"],
)
def test_compat_normalizing_str_masks_an_empty_context_as_upstream(
    bos_module: TrainableModule, template: dict[str, str], norm: str
) -> None:
    t = PromptTemplate(template, sep_token="</S>", compat="opencompass")
    prompts = Prompts(ZeroRetriever(output_column="label", compat="opencompass"), MetaTemplate(compat="opencompass"), None, t)
    inferencer = PPLInferencer(normalizing_str=norm)
    job = inferencer.job(prompts, 0, ENTRY, [], ["Y", "N"])
    record = inferencer.answer(bos_module, job)
    want = []
    for context, answer in job["pairs"]:
        res1 = upstream_get_ppl(bos_module, [context + answer], [_token_len(bos_module, context)])[0]
        res2 = upstream_get_ppl(bos_module, [norm + answer], [_token_len(bos_module, norm)])[0]
        want.append(res1 - res2)
    assert [record["label_losses"][k] for k in "YN"] == pytest.approx(want, abs=2e-5)


@pytest.mark.parametrize("value", [1, "yes", None], ids=repr)
def test_mask_empty_context_of_the_wrong_type_is_a_typed_error(bos_module: TrainableModule, value: Any) -> None:
    with pytest.raises(ModuleConfigError, match="mask_empty_context: expected True or False"):
        bos_module.score([("", "hi")], compat="opencompass", mask_empty_context=value)


def test_mask_empty_context_outside_compat_is_a_typed_error(bos_module: TrainableModule) -> None:
    with pytest.raises(ModuleConfigError, match="only with compat='opencompass'"):
        bos_module.score([("", "hi")], mask_empty_context=True)

"""compat="opencompass" PPL gives OpenCompass's numbers: its Hugging Face models' ``get_ppl`` sums the token
losses of the whole text (tokenized with the tokens the tokenizer adds) after ``mask_length`` tokens and
divides by the count of non-pad tokens, the first included, less ``mask_length``. The default mode keeps its
documented number: the mean loss of the continuation's tokens."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModuleConfigError
from modules.eval.inferencers import PPLInferencer, Prompts
from modules.local.trainable import TrainableModule
from prompter.templates import MetaTemplate, PromptTemplate
from prompter.templates.retrievers import FixKRetriever, ZeroRetriever

ENTRY = {"q": "Is it?", "label": "Y"}


def upstream_get_ppl(module: Any, texts: list[str], mask_length: list[int] | None = None) -> list[float]:
    """OpenCompass's formula, computed here with torch and the model's own tokenizer (right-padded batch)."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    tokenizer, model = module.tokenizer, module._backend.model
    side, tokenizer.padding_side = tokenizer.padding_side, "right"
    try:
        tokens = tokenizer(texts, padding=True, add_special_tokens=True, return_tensors="pt")
    finally:
        tokenizer.padding_side = side  # the tokenizer is the session's
    with torch.no_grad():
        logits = model(**tokens).logits.float()
    labels = tokens["input_ids"][:, 1:]
    loss = F.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]), labels.reshape(-1),
        ignore_index=tokenizer.pad_token_id, reduction="none",
    ).view(labels.shape)  # fmt: skip
    lens = (tokens["input_ids"] != tokenizer.pad_token_id).sum(-1)
    if mask_length is not None:
        keep = torch.zeros_like(labels)
        for row, n in enumerate(mask_length):
            keep[row, max(n - 1, 0) :] = 1  # loss j is token j + 1's: tokens from the n-th on count
        loss = loss * keep
        lens = lens - torch.tensor(mask_length)
    return [float(s) / float(n) for s, n in zip(loss.sum(-1), lens, strict=True)]


def _token_len(module: Any, text: str) -> int:
    return len(module.tokenizer(text, add_special_tokens=True)["input_ids"])


TEXTS = ["Q: Is it?\nA: yes", "Q: Is it?\nA: yeah, it is", "Hello", "x" * 30 + " y"]


def test_whole_texts_score_as_get_ppl_without_a_mask(started_module: Any) -> None:  # noqa: F811
    got = started_module.score([("", t) for t in TEXTS], compat="opencompass")
    want = upstream_get_ppl(started_module, TEXTS)
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)
    # the first token has no loss term but counts in the divisor
    n = len(started_module.tokenizer(TEXTS[0])["input_ids"])
    assert n > 2 and not math.isclose(got[0] * n / (n - 1), got[0])


def test_a_context_is_masked_by_its_token_count_as_normalizing_str_masks_it(
    started_module: Any,  # noqa: F811
) -> None:
    pairs = [("Q: Is it?", "\nA: yes!"), ("A:", "\nA: no"), ("Q: Was it? no\nQ: Is it?", " yes")]
    got = started_module.score(pairs, compat="opencompass")
    want = upstream_get_ppl(started_module, [c + t for c, t in pairs], [_token_len(started_module, c) for c, _ in pairs])
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_the_default_mode_keeps_the_mean_continuation_loss(started_module: Any) -> None:  # noqa: F811
    whole = started_module.score([("", t) for t in TEXTS])
    assert whole != pytest.approx(upstream_get_ppl(started_module, TEXTS), rel=1e-3)


def _prompts(template: dict[str, str], compat: Any, sep: str | None = None) -> Prompts:
    t = PromptTemplate(template, sep_token=sep, compat=compat)
    return Prompts(ZeroRetriever(output_column="label", compat=compat), MetaTemplate(compat=compat), None, t)


def test_the_compat_ppl_inferencer_records_opencompass_losses(started_module: Any) -> None:  # noqa: F811
    prompts = _prompts({"Y": "Q: {q}\nA: yes", "N": "Q: {q}\nA: no, it is not"}, "opencompass")
    inferencer = PPLInferencer()
    record = inferencer.answer(started_module, inferencer.job(prompts, 0, ENTRY, [], ["Y", "N"]))
    want = upstream_get_ppl(started_module, ["Q: Is it?\nA: yes", "Q: Is it?\nA: no, it is not"])
    assert [record["label_losses"][k] for k in "YN"] == pytest.approx(want, abs=2e-6)
    assert record["prediction"] == "YN"[want.index(min(want))]
    assert "score_as" not in record and "pairs" not in record


def test_the_compat_normalizing_str_losses_are_opencompass_masked_differences(
    started_module: Any,  # noqa: F811
) -> None:
    r = FixKRetriever([{"q": "Was it?", "label": "N"}], fix_id_list=[0], output_column="label", compat="opencompass")
    ice_t = PromptTemplate(
        {"Y": "</E>Q: {q}</S> yes", "N": "</E>Q: {q}</S> no"}, ice_token="</E>", sep_token="</S>", compat="opencompass"
    )
    prompts = Prompts(r, MetaTemplate(compat="opencompass"), ice_t, None)
    inferencer = PPLInferencer(normalizing_str="Answer:")
    job = inferencer.job(prompts, 0, ENTRY, [0], ["Y", "N"])
    record = inferencer.answer(started_module, job)
    want = []
    for context, answer in job["pairs"]:
        res1 = upstream_get_ppl(started_module, [context + answer], [_token_len(started_module, context)])[0]
        res2 = upstream_get_ppl(started_module, ["Answer:" + answer], [_token_len(started_module, "Answer:")])[0]
        want.append(res1 - res2)
    assert [record["label_losses"][k] for k in "YN"] == pytest.approx(want, abs=2e-6)


@pytest.fixture(scope="module")
def bos_module(tiny_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrainableModule]:  # noqa: F811
    """The tiny model with a tokenizer that puts a bos (``<|im_start|>``, not the pad token) before every text."""
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("bos") / "model"
    shutil.copytree(tiny_model_path, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    bos = tokenizer.convert_tokens_to_ids("<|im_start|>")
    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single="<|im_start|> $A", special_tokens=[("<|im_start|>", bos)]
    )
    tokenizer.save_pretrained(folder)
    module = TrainableModule(folder).start()
    assert module.tokenizer("a")["input_ids"][0] == bos != module.tokenizer.pad_token_id
    yield module
    module.stop()


def test_a_tokenizer_that_adds_a_bos_is_scored_with_it_as_upstream_tokenizes(bos_module: TrainableModule) -> None:
    got = bos_module.score([("", t) for t in TEXTS], compat="opencompass")
    assert got == pytest.approx(upstream_get_ppl(bos_module, TEXTS), rel=1e-5, abs=1e-6)
    pairs = [("Q: Is it?", "\nA: yes!"), ("A:", "\nA: no")]
    got = bos_module.score(pairs, compat="opencompass")
    want = upstream_get_ppl(bos_module, [c + t for c, t in pairs], [_token_len(bos_module, c) for c, _ in pairs])
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("compat", ["aisbench", "OpenCompass", 1], ids=repr)
def test_an_unknown_scoring_compat_is_a_typed_error(started_module: Any, compat: Any) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match="compat: expected None or 'opencompass'"):
        started_module.score([("", "hi")], compat=compat)

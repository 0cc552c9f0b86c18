"""Threat: one scoring request (``echo`` + ``logprobs`` + ``max_tokens: 0``) holds the model for everyone.

Two faults made the server's scoring endpoint a way to stall every other client:

* ``text_offset`` decoded every prefix of the prompt again (``decode(ids[:t])`` for each
  token ``t``): time quadratic in the prompt, 0.43 s for 2,000 tokens of the tiny model and
  minutes for a 32k-token prompt of a real one;
* ``TrainableModule.text_logprobs`` held the model's lock for the whole request (up to 64
  prompts at the full context), so a "hi" sent beside 16 long prompts waited 8.4 s instead
  of 0.03 s.

Now the offsets cost a bounded window per token (and equal the quadratic ones), and the
lock is held for each prompt's forward pass only.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local import scoring
from modules.local.tiny_model import build_tiny_tokenizer
from modules.local.trainable import TrainableModule

WORDS = "the cat sat on a mat and then it ran far away over blue hills".split()
ODD = ["é", "€", "😀", "\ufffd", "中文", " .", "'s", "<|im_start|>", "\u200b", "\n"]


def _text(seed: int, n: int) -> str:
    r = random.Random(seed)
    return " ".join(r.choice(WORDS + ODD) for _ in range(n))


def _quadratic_offsets(tokenizer: Any, ids: list[int]) -> list[int]:
    out: list[int] = []
    for t in range(len(ids)):
        at = len(tokenizer.decode(ids[:t])) if t else 0
        out.append(max(at, out[-1]) if out else at)
    return out


class _Counting:
    """A tokenizer whose ``decode`` counts the ids it decodes."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.decoded = inner, 0

    def decode(self, ids: list[int], **kw: Any) -> Any:
        self.decoded += len(ids)
        return self.inner.decode(ids, **kw)


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "mistral-v0.3-tools", "llama-2"])
def test_text_offsets_are_the_prefix_lengths_at_a_cost_linear_in_the_prompt(family: str) -> None:
    tokenizer = build_tiny_tokenizer(family)
    for seed in range(4):
        ids = scoring._as_data(tokenizer, _text(seed, 150))
        assert scoring._offsets(tokenizer, ids) == _quadratic_offsets(tokenizer, ids)
    ids = scoring._as_data(tokenizer, "\ufffd" * 300 + "😀" * 300)  # no clean checkpoint for a while
    assert scoring._offsets(tokenizer, ids) == _quadratic_offsets(tokenizer, ids)
    ids = scoring._as_data(tokenizer, _text(9, 1500))
    counting = _Counting(tokenizer)
    scoring._offsets(counting, ids)
    assert counting.decoded <= 200 * len(ids)  # the quadratic version decodes len(ids)**2 / 2 ids


class _RecordingLock:
    def __init__(self) -> None:
        self.held = False
        self.entries = 0

    @contextmanager
    def hold(self) -> Iterator[None]:
        assert not self.held
        self.held, self.entries = True, self.entries + 1
        try:
            yield
        finally:
            self.held = False


def test_text_logprobs_holds_the_lock_for_each_forward_pass_only(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path).start()
    try:
        model, lock = module._weights(), _RecordingLock()
        calls: list[bool] = []

        class _Model:
            device = model.device

            def __call__(self, **kw: Any) -> Any:
                calls.append(lock.held)
                return model(**kw)

        class _Lock:
            def __enter__(self) -> None:
                self.cm = lock.hold()
                self.cm.__enter__()

            def __exit__(self, *exc: Any) -> None:
                self.cm.__exit__(*exc)

        texts = [_text(i, 40) for i in range(5)]
        got = scoring.text_logprobs(_Model(), module.tokenizer, texts, max_context=2048, top=2, lock=_Lock())  # type: ignore[arg-type]
        assert calls == [True] * 5 and lock.entries == 5 and not lock.held
        assert got == scoring.text_logprobs(model, module.tokenizer, texts, max_context=2048, top=2)
    finally:
        module.stop()


def test_a_generation_runs_between_the_prompts_of_a_long_scoring_request(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=4).start()  # one lock for scoring and generation
    try:
        texts = [_text(i, 700) for i in range(12)]
        request = module.prepare([{"role": "user", "content": "hi"}], max_new_tokens=4)
        ended: dict[str, float] = {}

        def score() -> None:
            module.text_logprobs(texts, top=1)
            ended["scoring"] = time.perf_counter()

        scorer = threading.Thread(target=score)
        scorer.start()
        deadline = time.monotonic() + 30
        while not module._backend.lock._held and time.monotonic() < deadline:  # scoring has begun
            time.sleep(0.001)
        module.generate(request)
        ended["generation"] = time.perf_counter()
        scorer.join()
        assert ended["generation"] < ended["scoring"]
    finally:
        module.stop()

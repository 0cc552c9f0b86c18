"""A TrainableModule's error for an unknown call keyword lists the options it takes, not OpenAI's.

Before, the list was every OpenAI request field (``logit_bias``, ``n``, ``audio``...), which the
local model then refused anyway: the "known options" sent the caller to options it does not take.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules import ModuleConfigError
from modules.local.trainable import TrainableModule

_TAKEN = ["max_completion_tokens", "max_new_tokens", "max_tokens", "seed", "stop", "temperature", "top_k", "top_p"]
_OPENAI_ONLY = ["logit_bias", "n", "presence_penalty", "response_format", "tool_choice", "user", "audio", "model"]


def test_the_known_options_are_the_ones_the_local_model_takes(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path)
    assert module.known_options() == frozenset(_TAKEN)


@pytest.mark.parametrize("keyword", ["temprature", *_OPENAI_ONLY], ids=str)
def test_an_unknown_keyword_lists_only_what_the_local_model_takes(
    tiny_model_path: Path,  # noqa: F811
    keyword: str,
) -> None:
    module = TrainableModule(tiny_model_path, max_new_tokens=2)
    with pytest.raises(ModuleConfigError) as caught:
        module.build_request("hi", **{keyword: 1})
    message = str(caught.value)
    assert f"unknown call keyword {keyword!r}" in message
    listed = message.split("known options: ", 1)[1].split(";", 1)[0].split(", ")
    assert listed == _TAKEN
    assert not set(listed) & set(_OPENAI_ONLY)


def test_a_typo_still_gets_the_nearest_local_option(tiny_model_path: Path) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match=r"did you mean temperature\?"):
        TrainableModule(tiny_model_path).build_request("hi", temprature=0.5)


def test_every_listed_option_is_taken(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=4)
    values = {"max_completion_tokens": 2, "max_new_tokens": 2, "max_tokens": 2, "seed": 1, "stop": "x"}
    values |= {"temperature": 0.5, "top_k": 3, "top_p": 0.9}
    for name, value in values.items():
        assert module.build_request("hi", **{name: value}).options is not None


@pytest.mark.parametrize(
    "lengths",
    [
        {"max_new_tokens": 5, "max_tokens": 3},
        {"max_tokens": 2, "max_completion_tokens": 4},
        {"max_new_tokens": 1, "max_completion_tokens": 2},
    ],
    ids=["new-vs-max_tokens", "max_tokens-vs-completion", "new-vs-completion"],
)
def test_two_names_for_the_answer_length_that_disagree_are_refused(
    tiny_model_path: Path,  # noqa: F811
    lengths: dict[str, int],
) -> None:
    """Before, the first name silently won: ``m(q, max_tokens=3, max_new_tokens=5)`` answered 5 tokens."""
    module = TrainableModule(tiny_model_path)
    for call in (module.build_request, module.prepare_text):
        with pytest.raises(ModuleConfigError, match=r"disagree: they name the same answer length; give one of them"):
            call("hi", **lengths)


def test_two_names_for_the_same_length_agree(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path)
    assert module.build_request("hi", max_new_tokens=3, max_tokens=3, max_completion_tokens=None).options.max_new_tokens == 3

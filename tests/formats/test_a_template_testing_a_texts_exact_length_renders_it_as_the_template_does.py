"""A template that tests a text's exact length renders a text of that length as transformers does.

Fixed strings and per-shape skeletons are kept when they reproduce the template on probe texts: a
few characters, a hundred, six thousand. ``content | length == 13`` reacts to none of them, so a
13-character message lost the template's branch on every render (fixed strings) or from the second
render on (skeletons, for a template whose other tests keep fixed strings away). Texts as long as
each number the template names are now probed too.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.formats.model_format import ModelFormat

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

TESTS = {
    "thirteen-fixed-strings": ("m['content'] | length == 13", "a" * 13),
    "three-hundred-skeletons": ("m['content'] | length == 300", "c" * 300),
    "one-of-two-lengths": ("m['content'] | length in [5, 6]", "hello!"),
    "a-long-exact-length": ("m['content'] | length == 4096", "x" * 4096),
}


def oracle(source: str, messages: list[dict[str, Any]]) -> str:
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(model), eos_token="</s>")
    tok.chat_template = source
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", sorted(TESTS))
def test_a_text_of_the_tested_length_takes_the_templates_branch(case: str) -> None:
    test, hit = TESTS[case]
    source = (
        "{% for m in messages %}<|{{ m['role'] }}|>{% if " + test + " %}HIT {% endif %}{{ m['content'] }}<|end|>"
        "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    fmt = ModelFormat.from_chat_template(source, eos_token="</s>", name="measuring")
    for content in ("short", hit, "a longer text that is not the tested length", hit):
        messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": content}]
        expected = oracle(source, messages)
        for _ in range(3):  # the first render may run the template; later ones take whatever fast path it set up
            assert fmt.render(messages) == expected

"""A template that counts messages past the probed shapes renders long conversations as transformers does.

Fixed strings are derived by probing conversations of at most seven messages. A template that
branches on how many messages there are (``loop.index > 9``, ``messages | length == 8``) wrote
the same markup on every probe, so fixed strings were kept and a longer conversation lost the
template's branch: the first render was right (the template ran), the second (fixed strings)
was not. transformers' ``apply_chat_template`` on a tiny tokenizer carrying the template is the
oracle, rendered several times so that the fast path is taken.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.formats.model_format import ModelFormat

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

BRANCHES = {
    "loop-index-past-nine": "{% if loop.index > 9 %}[{{ loop.index }}]{% endif %}",
    "length-over-twelve": "{% if messages | length > 12 %}MANY {% endif %}",
    "length-exactly-eight": "{% if messages | length == 8 %}EIGHT {% endif %}",
    "index-zero-based-is-ten": "{% if loop.index0 == 10 %}TEN {% endif %}",
    "over-sixty-four": "{% if loop.index > 70 %}LATE {% endif %}",
    "a-float-threshold": "{% if loop.index > 9.5 %}F {% endif %}",
    "a-message-by-position": "{% if loop.first and messages | length > 10 %}{{ messages[10]['content'] }} {% endif %}",
}


def template(branch: str) -> str:
    return (
        "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>" + branch + "{{ m['content'] }}<|end|>"
        "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )


def oracle(source: str, messages: list[dict[str, Any]], add: bool) -> str:
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(model), bos_token="<s>", eos_token="</s>"
    )
    tok.chat_template = source
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=add)  # type: ignore[no-any-return]


def conversation(length: int, system: bool) -> list[dict[str, Any]]:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(length)]
    return [{"role": "system", "content": "S"}, *turns[:-1]] if system else turns


@pytest.mark.parametrize("branch", sorted(BRANCHES))
def test_a_long_conversation_takes_the_templates_counting_branch(branch: str) -> None:
    source = template(BRANCHES[branch])
    fmt = ModelFormat.from_chat_template(source, bos_token="<s>", eos_token="</s>", name="counting")
    for length in (1, 3, 7, 8, 9, 11, 13, 15, 73):
        for system in (False, True):
            messages = conversation(length, system)
            for add in (True, False):
                expected = oracle(source, messages, add)
                for _ in range(3):  # the first render runs the template; later ones may take fixed strings
                    assert fmt.render(messages, add_generation_prompt=add) == expected, (length, system, add)


def test_a_template_counting_no_further_than_the_probes_keeps_its_fixed_strings() -> None:
    # small numbers (an indent, an alternation test) do not cost a template its fast path
    source = template("{% if loop.index0 % 2 == 0 %}{% endif %}")
    fmt = ModelFormat.from_chat_template(source, bos_token="<s>", eos_token="</s>", name="alternating")
    assert (fmt.soh, fmt.eoh, fmt.soa, fmt.eoa) == ("<|user|>", "<|end|>", "<|assistant|>", "<|end|>")

"""On templates a model folder could bring, every render equals transformers' ``apply_chat_template``.

``from_chat_template`` derives fixed strings (and per-shape skeletons) by probing, and keeps them only
where they reproduce the template. Templates are generated here from pieces real templates use: role
markup, a default system block, content tests and transforms (``| trim``, ``[:n]``, ``'</think>' in``,
``replace``, empty content, an exact length), and branches on the position and the number of messages (``loop.first``,
``loop.index0 % k``, ``loop.index > n``, ``messages | length > n``, a namespace counter). Each is
rendered on several conversations of up to 16 messages, each twice, so that later renders take
whatever fast path the first ones set up; every text must equal transformers' on a tiny tokenizer
carrying the template, and where transformers raises, prompter raises a ``PromptError``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter.errors import PromptError
from prompter.formats.model_format import ModelFormat

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

C = "m['content']"
CONTENT = (
    f"{{{{ {C} }}}}",
    f"{{{{ {C} | trim }}}}",
    f"{{{{ {C}[:N] }}}}",
    f"{{{{ {C} | replace('a', 'b') }}}}",
    f"{{% if '</think>' in {C} %}}{{{{ {C}.split('</think>')[-1] | trim }}}}{{% else %}}{{{{ {C} }}}}{{% endif %}}",
    f"{{% if {C} %}}{{{{ {C} }}}}{{% else %}}EMPTY{{% endif %}}",
)
BRANCHES = (
    "",
    "{% if loop.first %}F{% endif %}",
    "{% if loop.last %}L{% endif %}",
    "{% if loop.index0 % K == 0 %}M{% endif %}",
    "{% if loop.index > N %}X{% endif %}",
    f"{{% if {C} | length > N %}}LONG{{% endif %}}",
    f"{{% if {C} | length == N %}}EXACT{{% endif %}}",
    f"{{% if {C} == messages[0]['content'] %}}SAME{{% endif %}}",
    "{% set ns.u = ns.u + 1 %}{% if ns.u > N %}U{% endif %}",
    "{% if messages | length > N %}MANY{% endif %}",
)
OPENINGS = (
    "<|{{ m['role'] }}|>\n",
    "{% if m['role'] == 'user' %}[INST] {% elif m['role'] == 'assistant' %} {% else %}<<SYS>>{% endif %}",
    "### {{ m['role'] | capitalize }}: ",
)
CLOSINGS = ("<|end|>\n", "{{ eos_token }}", "{% if m['role'] == 'assistant' %}{{ eos_token }}{% endif %}\n")
CONTENTS = ("a", "hello", "", " ", "  pad  ", "</think>x", "x</think> y", "aaaa aaaa aaaa aaaa", "Long text " * 3, "中文", "\n")


@st.composite
def templates(draw: Any) -> str:
    def numbered(piece: str) -> str:
        return piece.replace("K", str(draw(st.integers(2, 5)))).replace("N", str(draw(st.integers(1, 14))))

    parts = ["{{ bos_token }}{% set ns = namespace(u=0) %}"]
    if draw(st.booleans()):
        parts.append("{% if messages[0]['role'] != 'system' %}<|system|>DEFAULT<|end|>{% endif %}")
    parts += ["{% for m in messages %}", draw(st.sampled_from(OPENINGS))]
    parts += [numbered(draw(st.sampled_from(BRANCHES))) for _ in range(draw(st.integers(0, 2)))]
    parts += [numbered(draw(st.sampled_from(CONTENT))), draw(st.sampled_from(CLOSINGS))]
    parts.append("{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
    return "".join(parts)


@st.composite
def conversations(draw: Any) -> list[dict[str, str]]:
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(st.sampled_from(CONTENTS))})
    for i in range(draw(st.integers(1, 16))):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": draw(st.sampled_from(CONTENTS))})
    return messages


def tokenizer(source: str) -> Any:
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(model), bos_token="<s>", eos_token="</s>"
    )
    tok.chat_template = source
    return tok


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(templates(), st.lists(conversations(), min_size=3, max_size=6), st.booleans())
def test_every_render_equals_transformers(source: str, convs: list[list[dict[str, str]]], add: bool) -> None:
    tok = tokenizer(source)
    fmt = ModelFormat.from_chat_template(source, bos_token="<s>", eos_token="</s>", name="generated")
    for messages in convs * 2:
        try:
            expected = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=add)
        except Exception:  # noqa: BLE001 - whatever transformers raises, prompter must refuse too
            with pytest.raises(PromptError):
                fmt.render(messages, add_generation_prompt=add)
        else:
            assert fmt.render(messages, add_generation_prompt=add) == expected

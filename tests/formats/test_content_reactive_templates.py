"""Templates that react to what a message says must not be stood in for by fixed strings or skeletons.

The fast paths learn a template by probing it with sentinel and sample texts; a template that
escapes text, compares messages, tests a text against one of its own literals (``==``,
``startswith``), or reads numbers or capitals in it renders some conversations differently from
the probes; a template that calls a string method inspecting text (``.isalpha()``,
``.count()``) or maps its case (``| lower == 'hi'`` reacts to ``HI``) gets no fast path at all,
since no probe is sure to show what it reacts to; texts shorter than the probes' sentinels
(``| length < 3``) are probed too.
Each case below is rendered warm (the fast paths have seen the template, with text that does
not trigger the reaction) and must still equal what transformers' ``apply_chat_template``
renders, or raise where the template raises.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter.errors import TemplateError
from prompter.formats.model_format import ModelFormat

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")


def _template(body: str) -> str:
    return (
        "{% for m in messages %}" + body + "{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )


# id -> (template, a conversation that triggers the template's reaction)
CASES: dict[str, tuple[str, list[dict[str, str]]]] = {
    "html-escape": (
        _template("<|{{ m.role }}|>{{ m.content | e }}</s>"),
        [{"role": "user", "content": "a < b & 'c'"}],
    ),
    "equal-to-the-previous-message": (
        _template(
            "{% if loop.index0 and m.content == messages[loop.index0 - 1].content %}DUP{% endif %}"
            "<|{{ m.role }}|>{{ m.content }}</s>"
        ),
        [{"role": "system", "content": "same"}, {"role": "user", "content": "same"}],
    ),
    "equal-to-a-literal": (
        _template("<|{{ m.role }}|>{% if m.content == 'hi' %}GREETING {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "hi"}],
    ),
    "starts-with-a-literal": (
        _template("<|{{ m.role }}|>{% if m.content.startswith('/cmd') %}COMMAND {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "/cmd ls"}],
    ),
    "ends-with-a-literal": (
        _template("<|{{ m.role }}|>{% if m.content.endswith('?') %}QUESTION {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "Why?"}],
    ),
    "capitals": (
        _template("<|{{ m.role }}|>{% if m.content.isupper() %}SHOUTING {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "HELLO"}],
    ),
    "letters-only": (
        _template("<|{{ m.role }}|>{% if m.content.isalpha() %}WORD {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "abc"}],
    ),
    "counts-a-letter": (
        _template("<|{{ m.role }}|>{% if m.content.count('a') > 3 %}MANY {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "aaaa b"}],
    ),
    "numbers": (
        _template("<|{{ m.role }}|>{{ m.content | int }}</s>"),
        [{"role": "user", "content": "42"}],
    ),
    "short-text": (
        _template("<|{{ m.role }}|>{% if m.content.strip() | length < 3 %}SHORT {% endif %}{{ m.content }}</s>"),
        [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}],
    ),
    "one-letter": (
        _template("<|{{ m.role }}|>{% if m.content | length == 1 %}LETTER {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "y"}],
    ),
    "equal-to-a-literal-in-any-case": (
        _template("<|{{ m.role }}|>{% if m.content | lower == 'hi' %}GREETING {% endif %}{{ m.content }}</s>"),
        [{"role": "user", "content": "HI"}],
    ),
    "starts-with-a-literal-in-any-case": (
        _template(
            "<|{{ m.role }}|>{% if m.content.upper().startswith('/CMD') %}COMMAND {% endif %}{{ m.content }}</s>"
        ),
        [{"role": "user", "content": "/Cmd ls"}],
    ),
    "raises-on-a-literal": (
        _template(
            "{% if m.content == 'forbidden' %}{{ raise_exception('no forbidden words') }}{% endif %}"
            "<|{{ m.role }}|>{{ m.content }}</s>"
        ),
        [{"role": "user", "content": "forbidden"}],
    ),
}

WARM = [  # conversations that trigger none of the reactions, rendered first so the fast paths are taken
    [{"role": "user", "content": "Hello there"}],
    [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Tell me"}],
]


def _oracle(source: str, messages: list[dict[str, Any]]) -> str:
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(model), bos_token="<s>", eos_token="</s>"
    )
    tok.chat_template = source
    return str(tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("construct", ["from_chat_template", "direct"])
def test_a_warm_format_renders_what_the_template_renders(case: str, construct: str) -> None:
    source, messages = CASES[case]
    if construct == "direct":
        fmt = ModelFormat(chat_template=source, bos_token="<s>", eos_token="</s>")
    else:
        fmt = ModelFormat.from_chat_template(source, bos_token="<s>", eos_token="</s>")
    for warm in WARM:
        for _ in range(3):
            assert fmt.render(warm) == _oracle(source, warm)
    try:
        expected = _oracle(source, messages)
    except Exception as exc:  # noqa: BLE001 - whatever the template raised
        for _ in range(3):
            with pytest.raises(TemplateError, match=str(exc)):
                fmt.render(messages)
        return
    for _ in range(3):
        assert fmt.render(messages) == expected


def test_the_case_of_a_role_is_markup_so_openchat_keeps_its_fixed_strings() -> None:
    """OpenChat writes ``message['role'].title()``: a case mapping of a role, not of a text."""
    from prompter.formats.derive import derive_layout, inspects_text

    fmt = ModelFormat.get("openchat")
    assert fmt.chat_template is not None and ".title()" in fmt.chat_template
    assert not inspects_text(fmt.chat_template)
    assert derive_layout(fmt.chat_template, fmt.bos_token, fmt.eos_token, None) is not None
    assert inspects_text("{{ m.content | lower }}") and inspects_text("{{ m['content'].upper() }}")

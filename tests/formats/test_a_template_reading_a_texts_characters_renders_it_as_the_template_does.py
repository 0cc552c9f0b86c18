"""A template that reads a text's characters by position, or compares it alphabetically, renders every time
as transformers renders it.

``content[0] in 'aeiou'``, ``content[1:2] == 'p'``, ``content[-1] == '?'``, ``content | first`` and
``'a' < content < 'b'`` react to what no probe of the fixed strings or skeletons is sure to show: such a
template gets no fast path, so the second and later renders (which use a fast path where one was learnt)
equal the first. The shipped templates keep theirs (Gemma 3 reads ``content[0]['text']``: a part, by key).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prompter.formats.char_reads import reads_characters
from prompter.formats.model_format import ModelFormat

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

TEMPLATES = Path(__file__).resolve().parents[2] / "prompter" / "formats" / "chat_templates"

CASES = [
    ("first_in_class", "m['content'][0] in 'aeiou'", "apple"),
    ("slice", "m['content'][1:2] == 'p'", "apple"),
    ("last", "m.content[-1] == '?'", "why?"),
    ("first_filter", "(m.content | first) == 'a'", "apple"),
    ("between", "'a' < m['content'] < 'b'", "apple"),
    ("at_most", "m['content'] <= 'b'", "apple"),
    ("set_name", "c[0] == 'a'", "apple"),
    ("split_piece_first", "m.content.split(' ')[0][0] == 'a'", "apple pie"),
]

# the plain shape takes fixed strings; the dated one (a date-only ``strftime_now``) takes skeletons instead
SHAPES = {
    "fixed": "",
    "skeleton": "{{ strftime_now('%d %b %Y') }}",
}


def _source(condition: str, head: str) -> str:
    return (
        head + "{% for m in messages %}{% set c = m['content'] | trim %}<|{{ m['role'] }}|>{% if " + condition
        + " %}HIT{% endif %}{{ m['content'] }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )


def _transformers(source: str, messages: list[dict[str, str]]) -> str:
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(model), eos_token="</s>")
    tok.chat_template = source
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)  # type: ignore[no-any-return]


@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
@pytest.mark.parametrize(("condition", "content"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_render_equals_transformers(shape: str, condition: str, content: str) -> None:
    source = _source(condition, SHAPES[shape])
    fmt = ModelFormat.from_chat_template(source, name="chars", eos_token="</s>")
    conversations = [
        [{"role": "user", "content": content}],
        [{"role": "user", "content": "hello"}, {"role": "assistant", "content": content}, {"role": "user", "content": "x"}],
        [{"role": "system", "content": content}, {"role": "user", "content": content}],
    ]
    for messages in conversations:
        want = _transformers(source, messages)
        assert [fmt.render(messages) for _ in range(4)] == [want] * 4


@pytest.mark.parametrize("condition", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_a_template_reading_characters_is_found(condition: str) -> None:
    assert reads_characters(_source(condition, ""))


@pytest.mark.parametrize(
    "source",
    [
        "{{ messages[0]['content'][0]['text'] }}",
        "{% for m in messages[1:] %}{{ m.content.split('</think>')[-1] }}{% endfor %}",
        "{% for m in messages %}{{ m.content[0].type }}{% endfor %}",
    ],
    ids=["a_part_by_key", "a_piece_of_a_split_text", "a_part_by_attribute"],
)
def test_a_part_or_a_piece_is_no_character(source: str) -> None:
    assert not reads_characters(source)


def test_no_shipped_template_loses_its_fast_paths() -> None:
    sources = sorted(TEMPLATES.glob("*.jinja"))
    assert len(sources) == 40
    assert [p.name for p in sources if reads_characters(p.read_text(encoding="utf-8"))] == []

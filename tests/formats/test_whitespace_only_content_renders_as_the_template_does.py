"""A template that treats whitespace-only content as empty renders it so on the fast paths too.

A model folder's template may write a marker for, or skip, a message whose text is blank
(``content | trim | length == 0``, ``content and not content.strip()``). The fixed strings and the
skeletons were probed with empty text and with text padded by whitespace, never with whitespace
alone, so they wrote ``"  "`` as any other text: other bytes than the template's, from the first
render on. Whitespace-only text is probed now, and such a template renders it itself.
"""

from __future__ import annotations

import pytest

from prompter.formats.model_format import ModelFormat

transformers_chat = pytest.importorskip("transformers.utils.chat_template_utils")

_TAIL = "{% if add_generation_prompt %}<|assistant|>{% endif %}"
TEMPLATES = {
    # fixed strings are derived for these two
    "marks-blank": "{% for m in messages %}<|{{ m['role'] }}|>{% if m['content']|trim|length == 0 %}(blank){% endif %}"
    "{{ m['content'] }}<|end|>{% endfor %}" + _TAIL,
    "skips-blank": "{% for m in messages %}{% if m['content'] and not m['content'].strip() %}{% continue %}{% endif %}"
    "<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}" + _TAIL,
    # per-turn markup: these render through skeletons
    "marks-blank-last-turn": "{% for m in messages %}{% if loop.last and m['role'] == 'user' %}<LAST>{% endif %}"
    "<|{{ m['role'] }}|>{% if m['content']|trim|length == 0 %}(blank){% endif %}{{ m['content'] }}<|end|>{% endfor %}"
    + _TAIL,
    "skips-blank-dated": "{{ strftime_now('%Y') and '' }}{% for m in messages %}"
    "{% if m['content'] and not m['content'].strip() %}{% continue %}{% endif %}"
    "<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}" + _TAIL,
}
BLANKS = {"spaces": "  ", "newline": "\n", "tab": "\t", "ideographic-space": "\u3000", "no-break-space": "\u00a0"}


def _transformers(source: str, messages: list[dict[str, str]]) -> str:
    rendered, _ = transformers_chat.render_jinja_template([messages], chat_template=source, add_generation_prompt=True)
    return str(rendered[0])


@pytest.mark.parametrize("blank", BLANKS.values(), ids=BLANKS.keys())
@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_whitespace_only_content_renders_as_the_template_does_on_every_render(name: str, blank: str) -> None:
    source = TEMPLATES[name]
    fmt = ModelFormat.from_chat_template(source)
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": blank}, {"role": "user", "content": blank}]
    expected = _transformers(source, messages)
    for _ in range(4):  # the first renders and the ones the fast paths answer
        assert fmt.render(messages) == expected


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_ordinary_text_still_renders_as_the_template_does(name: str) -> None:
    source = TEMPLATES[name]
    fmt = ModelFormat.from_chat_template(source)
    for text in ["hi", " padded ", "two\nlines", ""]:
        messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": text}, {"role": "user", "content": "z"}]
        expected = _transformers(source, messages)
        for _ in range(3):
            assert fmt.render(messages) == expected

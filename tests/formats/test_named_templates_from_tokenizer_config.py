"""Named templates as a model folder's ``tokenizer_config.json`` stores them: a list of
``{"name": ..., "template": ...}`` entries, which transformers reads into ``{name: template}``.

Before, ``from_chat_template(json.load(config)["chat_template"])`` raised "expected jinja source
as str, got list" for every model that ships a ``tool_use`` template; it now renders as
transformers does with the same ``tokenizer_config.json``: ``tool_use`` when given tools, ``default``
otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompter.errors import TemplateError
from prompter.formats.model_format import ModelFormat

DEFAULT = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
TOOL_USE = "[TOOLS]{{ tools | tojson }}[/TOOLS]" + DEFAULT
USER = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "now", "description": "The time.", "parameters": {}}}]


def _folder(tmp_path: Path, templates: list[dict[str, str]]) -> Path:
    """A tokenizer folder whose tokenizer_config.json holds ``templates`` as its chat_template."""
    import tokenizers
    import transformers

    model = tokenizers.models.WordLevel({"<unk>": 0, "</s>": 1}, unk_token="<unk>")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(model), eos_token="</s>")
    tok.save_pretrained(tmp_path)
    config_path = tmp_path / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["chat_template"] = templates
    config_path.write_text(json.dumps(config), encoding="utf-8")
    for extra in tmp_path.glob("chat_template*"):  # the config alone carries the templates
        extra.unlink()
    return tmp_path


def test_the_list_a_tokenizer_config_holds_renders_as_transformers_does(tmp_path: Path) -> None:
    import transformers

    listed = [{"name": "default", "template": DEFAULT}, {"name": "tool_use", "template": TOOL_USE}]
    tok = transformers.AutoTokenizer.from_pretrained(_folder(tmp_path, listed))
    stored = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))["chat_template"]
    fmt = ModelFormat.from_chat_template(stored, eos_token="</s>")
    assert fmt.tool_chat_template == TOOL_USE
    for tools in (None, TOOLS, []):
        expected = tok.apply_chat_template(USER, tools=tools, tokenize=False, add_generation_prompt=True)
        assert fmt.render(USER, tools=tools) == expected
    assert fmt == ModelFormat.from_chat_template({"default": DEFAULT, "tool_use": TOOL_USE}, eos_token="</s>")


@pytest.mark.parametrize(
    ("listed", "message"),
    [
        ([{"name": "tool_use", "template": TOOL_USE}], r"need a 'default' one, got \['tool_use'\]"),
        ([{"name": "default", "template": DEFAULT}, {"name": "default", "template": TOOL_USE}], "given twice"),
        ([{"name": "default"}], r"item 0 is a dict without 'name' and 'template'"),
        ([{"name": 3, "template": DEFAULT}], r"chat template\[0\] name: expected"),
        ([{"name": "default", "template": 3}], r"chat template 'default': expected jinja source as str, got int"),
        ([DEFAULT], r"expected jinja source as str, got list; .* item 0 is str"),
    ],
    ids=["no-default", "name-twice", "no-template-key", "name-not-str", "template-not-str", "bare-string-in-list"],
)
def test_a_malformed_list_is_a_template_error_naming_the_entry(listed: list[Any], message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        ModelFormat.from_chat_template(listed)

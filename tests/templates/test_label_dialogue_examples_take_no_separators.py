"""In the default mode, in-context examples written by a label template whose labels are dialogues are
PromptLists joined with no separators (the table of mode differences, and ``PromptTemplate.generate_ice``
say so). The retriever added ``ice_separator`` / ``ice_eos_token`` string items between and after them,
which a meta template then wrote as stray ``"\\n"`` between the turns. Compat mode keeps upstream's."""

from __future__ import annotations

from prompter.templates import MetaTemplate, PromptList, PromptTemplate
from prompter.templates.retrievers import FixKRetriever

LABELS = {
    label: dict(round=[dict(role="HUMAN", prompt="Q: {q}"), dict(role="BOT", prompt=label)]) for label in ("yes", "no")
}
INDEX = [{"q": "x", "l": "no"}, {"q": "y", "l": "yes"}]
META = MetaTemplate(round=[dict(role="HUMAN", begin="<H>", end="\n"), dict(role="BOT", begin="<B>", end="\n")])


def test_the_retriever_writes_label_dialogue_examples_as_the_template_does() -> None:
    template = PromptTemplate(LABELS)
    ice = FixKRetriever(INDEX, fix_id_list=[0, 1], output_column="l").generate_ice([0, 1], template)
    assert ice == template.generate_ice(INDEX, label_field="l")
    assert isinstance(ice, PromptList)
    assert all(not isinstance(item, str) for item in ice.strip_sections())
    assert META.parse(ice, mode="ppl") == "<H>Q: x\n<B>no\n<H>Q: y\n<B>yes\n"


def test_compat_mode_keeps_upstreams_separator_items() -> None:
    template = PromptTemplate(LABELS, compat="opencompass")
    ice = FixKRetriever(INDEX, fix_id_list=[0, 1], output_column="l", compat="opencompass").generate_ice([0, 1], template)
    assert [item for item in ice if isinstance(item, str)] == ["\n", "\n", "\n"]

"""Every prompter, template and model format survives a pickle round trip.

Dataset-scale evaluation hands prompters and templates to worker processes, which
pickles them; a copy must render exactly what the original renders, including
after the original has been used (its caches filled).
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from prompter import AlpacaPrompter, ChatPrompter, EmptyPrompter, ModelFormat
from prompter.errors import PromptError
from prompter.formats.registry import FAMILIES
from prompter.templates import MetaTemplate, MMPromptTemplate, MultiTurnPromptTemplate, PromptList, PromptTemplate

CHAT_TEMPLATES = Path(__file__).resolve().parents[1] / "prompter" / "formats" / "chat_templates"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi {x}"}]


def _round_trip(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_model_format_and_a_bound_prompter_survive_pickle(name: str) -> None:
    fmt = ModelFormat.get(name)
    expected = fmt.render(MESSAGES)
    copy = _round_trip(fmt)
    assert copy == fmt
    assert copy.render(MESSAGES) == expected
    for prompter, value in (
        (ChatPrompter("Answer about {x}."), {"x": "cats", "input": "why?"}),
        (AlpacaPrompter("Answer about {x}."), {"x": "cats"}),
    ):
        before = prompter.generate_prompt(value, model_format=fmt)  # caches filled
        again = _round_trip(prompter)
        assert again.generate_prompt(value, model_format=fmt) == before


@pytest.mark.parametrize("path", sorted(CHAT_TEMPLATES.glob("*.jinja")), ids=lambda p: p.stem)
def test_a_format_derived_from_a_chat_template_survives_pickle(path: Path) -> None:
    fmt = ModelFormat.from_chat_template(path.read_text())
    assert _outcome(_round_trip(fmt), MESSAGES) == _outcome(fmt, MESSAGES)


def _outcome(fmt: ModelFormat, messages: list[dict[str, str]]) -> str:
    # a template may refuse this conversation (a tools-only one); the copy must refuse it too
    try:
        return fmt.render(messages)
    except PromptError as exc:
        return f"{type(exc).__name__}: {exc}"


_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize(
    ("prompter", "value"),
    [
        (
            ChatPrompter("You answer about {topic}.", extra_keys=["context"]),
            {"topic": "t", "context": "c", "input": "q"},
        ),
        (ChatPrompter({"system": "S {topic}", "user": "U"}, history=[["q", "a"]]), {"topic": "t", "input": "q"}),
        (ChatPrompter("hi", tools=_TOOLS), "q"),
        (AlpacaPrompter("Do {topic}.", extra_keys="context"), {"topic": "t", "context": "c"}),
        (EmptyPrompter(), "q"),
    ],
    ids=["chat", "chat-dict-history", "chat-tools", "alpaca", "empty"],
)
def test_every_prompter_survives_pickle_after_use(prompter: Any, value: Any) -> None:
    text = prompter.generate_prompt(value)
    body = prompter.generate_prompt(value, return_dict=True)
    copy = _round_trip(prompter)
    assert copy.generate_prompt(value) == text
    assert copy.generate_prompt(value, return_dict=True) == body


def test_a_user_defined_prompter_survives_pickle() -> None:
    copy = _round_trip(_Custom("Say {x}."))
    assert copy.generate_prompt({"x": "1", "input": "y"}) == _Custom("Say {x}.").generate_prompt(
        {"x": "1", "input": "y"}
    )


class _Custom(ChatPrompter):
    """A subclass declared at module level, as user code does."""


META = MetaTemplate(
    round=[dict(role="HUMAN", begin="<H>", end="\n"), dict(role="BOT", begin="<B>", end="\n", generate=True)],
    reserved_roles=[dict(role="SYSTEM", begin="<S>", end="\n")],
    begin="<s>",
)


@pytest.mark.parametrize(
    ("template", "entry"),
    [
        (PromptTemplate("Q: {q}\nA: {a}"), {"q": "1+1", "a": "2"}),
        (PromptTemplate("</E>Q: {q}\nA: {a}", ice_token="</E>"), {"q": "1+1", "a": "2"}),
        (PromptTemplate({"A": "{q} A", "B": "{q} B"}), {"q": "pick"}),
        (
            PromptTemplate(
                dict(begin="</E>", round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")]),
                ice_token="</E>",
            ),
            {"q": "1+1", "a": "2"},
        ),
    ],
    ids=["string", "ice", "labels", "dialogue"],
)
def test_every_prompt_template_survives_pickle(template: PromptTemplate, entry: dict[str, str]) -> None:
    before = template.generate_item(entry, output_field="a" if "a" in entry else None)
    copy = _round_trip(template)
    assert copy.generate_item(entry, output_field="a" if "a" in entry else None) == before
    assert repr(copy) == repr(template)


def test_meta_template_and_prompt_list_survive_pickle() -> None:
    pl = PromptList([dict(role="SYSTEM", prompt="s"), dict(role="HUMAN", prompt="q"), dict(role="BOT", prompt="a")])
    copy = _round_trip(META)
    assert copy == META
    assert copy.parse(pl) == META.parse(pl)
    assert _round_trip(pl) == pl
    assert type(_round_trip(pl)) is PromptList


def test_multi_turn_template_survives_pickle() -> None:
    template = MultiTurnPromptTemplate(dict(round=[dict(role="HUMAN", prompt="{q}"), dict(role="BOT", prompt="{a}")]))
    entry = {"q": ["1+1=?", "2+2=?"], "a": ["2", "4"]}
    expected = template.generate_turns(entry, "every_with_gt", output_field="a")
    assert _round_trip(template).generate_turns(entry, "every_with_gt", output_field="a") == expected


def test_multimodal_template_survives_pickle() -> None:
    template = MMPromptTemplate(
        dict(round=[dict(role="HUMAN", prompt_mm={"text": {"type": "text", "text": "Q: {question}"}})])
    )
    entry = {"question": "What is this?"}
    assert _round_trip(template).generate_item(entry) == template.generate_item(entry)


def test_compat_templates_prompt_lists_retrievers_and_inferencers_survive_pickle() -> None:
    from modules.eval.inferencers import GenInferencer, MultiTurnGenInferencer, PPLInferencer
    from prompter.templates.compat import AISBenchPromptList, OpenCompassPromptList
    from prompter.templates.retrievers import BM25Retriever, FixKRetriever, RandomRetriever, ZeroRetriever

    index = [{"q": "a cat", "a": "1"}, {"q": "a dog", "a": "2"}]
    ice_t = PromptTemplate("{q}={a}", compat="opencompass")
    for retriever in (
        ZeroRetriever(index),
        FixKRetriever(index, fix_id_list=[1], output_column="a"),
        RandomRetriever(index, ice_num=1, seed=3),
        BM25Retriever(index, output_column="a"),
    ):
        copy = _round_trip(retriever)
        assert copy.retrieve([{"q": "cat"}]) == retriever.retrieve([{"q": "cat"}])
        ids = retriever.retrieve([{"q": "cat"}])[0]
        assert copy.generate_ice(ids, ice_t) == retriever.generate_ice(ids, ice_t)
    for pl in (OpenCompassPromptList(["{a}", {"role": "HUMAN", "prompt": "x"}]), AISBenchPromptList(["y"])):
        assert type(_round_trip(pl)) is type(pl) and str(_round_trip(pl)) == str(pl)
    meta = MetaTemplate(round=[dict(role="HUMAN", api_role="HUMAN")], compat="aisbench")
    assert _round_trip(meta) == meta
    for inferencer in (
        GenInferencer(max_out_len=3, stopping_criteria=["\n"]),
        PPLInferencer(),
        MultiTurnGenInferencer(),
    ):
        assert vars(_round_trip(inferencer)).keys() == vars(inferencer).keys()

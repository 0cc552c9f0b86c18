"""Specification of the model side (MetaTemplate, LM and API), its ModelFormat bridge, and the
AISBench multi-turn and multimodal templates.

The expected strings are the bytes the guides' configurations produce. Where a guide's
picture of the output disagrees with its own configuration (a newline after ``begin``
that ``begin`` does not contain, ``end of conversation`` for ``end="end of conversion"``,
a meta ``end`` in an example whose template has none), the configuration wins.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from prompter import ModelFormat
from prompter.errors import (
    EvalTemplateError,
    InputTypeError,
    MissingSlotError,
    PromptError,
    UnknownRoleError,
    UnsupportedContentError,
)
from prompter.templates import (
    MetaTemplate,
    MMPromptTemplate,
    MultiTurnPromptTemplate,
    PromptList,
    PromptTemplate,
    RoleSpec,
)
from prompter.templates.meta_template import api_to_messages

H, B, S = "HUMAN", "BOT", "SYSTEM"


def turn(role: str, prompt: str, **extra: str) -> dict[str, Any]:
    """A role turn as the reference documents write it."""
    return {"role": role, "prompt": prompt, **extra}


def section(name: str, pos: str) -> dict[str, str]:
    """A section marker."""
    return {"section": name, "pos": pos}


# -- the meta template guide's examples -------------------------------------------------------------

ROUND: list[dict[str, Any]] = [
    {"role": H, "begin": "<HUMAN>: ", "end": "<eoh>\n"},
    {"role": B, "begin": "<BOT>: ", "end": "<eob>\n"},
]
ROUND_GEN: list[dict[str, Any]] = [ROUND[0], {**ROUND[1], "generate": True}]
RESERVED: list[dict[str, Any]] = [{"role": S, "begin": "<SYSTEM>: ", "end": "<eosys>\n"}]
BEGIN = "Meta instruction: You are now a helpful and harmless AI assistant."
END = "end of conversion"

DIALOGUE = [turn(H, "1+1=?"), turn(B, "2"), turn(H, "2+2=?"), turn(B, "4")]
WITH_SYSTEM = [turn(S, "Solve the following math questions", fallback_role=H), *DIALOGUE]
ROUNDS_TEXT = "<HUMAN>: 1+1=?<eoh>\n<BOT>: 2<eob>\n<HUMAN>: 2+2=?<eoh>\n<BOT>: 4<eob>\n"
SYSTEM_TEXT = "<SYSTEM>: Solve the following math questions<eosys>\n"

LM_CASES = [
    pytest.param(MetaTemplate(round=ROUND), DIALOGUE, "ppl", ROUNDS_TEXT, id="rounds"),
    pytest.param(MetaTemplate(round=ROUND), DIALOGUE, "gen", ROUNDS_TEXT, id="rounds-gen-without-generate-role"),
    pytest.param(
        MetaTemplate(round=ROUND, reserved_roles=RESERVED),
        WITH_SYSTEM,
        "ppl",
        SYSTEM_TEXT + ROUNDS_TEXT,
        id="reserved-system",
    ),
    pytest.param(
        MetaTemplate(round=ROUND),
        WITH_SYSTEM,
        "ppl",
        "<HUMAN>: Solve the following math questions<eoh>\n" + ROUNDS_TEXT,
        id="system-falls-back-to-human",
    ),
    pytest.param(
        MetaTemplate(round=ROUND, reserved_roles=RESERVED, begin=BEGIN, end=END),
        WITH_SYSTEM,
        "ppl",
        BEGIN + SYSTEM_TEXT + ROUNDS_TEXT + END,
        id="begin-and-end",
    ),
    pytest.param(
        MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED, begin=BEGIN, end=END),
        WITH_SYSTEM,
        "gen",
        BEGIN + SYSTEM_TEXT + "<HUMAN>: 1+1=?<eoh>\n<BOT>: 2<eob>\n<HUMAN>: 2+2=?<eoh>\n<BOT>: ",
        id="generate-stops-at-bot-begin",
    ),
    pytest.param(
        MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED, begin=BEGIN, end=END),
        WITH_SYSTEM,
        "ppl",
        BEGIN + SYSTEM_TEXT + ROUNDS_TEXT + END,
        id="generate-ignored-in-ppl",
    ),
    pytest.param(
        MetaTemplate(
            begin=BEGIN,
            round=[
                {"role": H, "begin": "HUMAN: ", "end": "<eoh>\n"},
                {"role": "THOUGHTS", "begin": "THOUGHTS: ", "end": "<eot>\n", "prompt": "None"},
                {"role": B, "begin": "BOT: ", "generate": True, "end": "<eob>\n"},
            ],
            end=END,
            reserved_roles=[{"role": S, "begin": "SYSTEM: ", "end": "\n"}],
            eos_token_id=10000,
        ),
        [turn(S, "Be exact."), turn(H, "1+1=?"), turn(B, "2"), turn(H, "2+2=?"), turn(B, "")],
        "gen",
        BEGIN + "SYSTEM: Be exact.\nHUMAN: 1+1=?<eoh>\nTHOUGHTS: None<eot>\nBOT: 2<eob>\n"
        "HUMAN: 2+2=?<eoh>\nTHOUGHTS: None<eot>\nBOT: ",
        id="all-fields-default-prompt",
    ),
    pytest.param(
        MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED),
        [
            section("begin", "begin"),
            turn(S, "Solve."),
            "</E>",
            section("begin", "end"),
            section("round", "begin"),
            turn(H, "1+1=?"),
            turn(B, "Answer: "),
            section("round", "end"),
            section("end", "begin"),
            "never written in gen mode",
            section("end", "end"),
        ],
        "gen",
        "<SYSTEM>: Solve.<eosys>\n</E><HUMAN>: 1+1=?<eoh>\n<BOT>: ",
        id="sections-last-bot-prompt-not-sent",
    ),
    pytest.param(
        MetaTemplate(round=ROUND_GEN),
        [
            section("ice", "begin"),
            turn(H, "2+2=?"),
            turn(B, "4"),
            section("ice", "end"),
            section("round", "begin"),
            turn(H, "1+1=?"),
            section("round", "end"),
        ],
        "gen",
        "<HUMAN>: 2+2=?<eoh>\n<BOT>: 4<eob>\n<HUMAN>: 1+1=?<eoh>\n<BOT>: ",
        id="ice-rounds-are-never-cut",
    ),
    pytest.param(
        MetaTemplate(round=ROUND_GEN),
        [turn(H, "a"), "--", turn(B, "b")],
        "ppl",
        "<HUMAN>: a<eoh>\n--<BOT>: b<eob>\n",
        id="strings-stand-where-they-are",
    ),
    pytest.param(
        MetaTemplate(round=[{**ROUND[0], "begin": ["<", "H>"]}, ROUND[1]]),
        [turn(H, "x")],
        "ppl",
        "<H>x<eoh>\n",
        id="begin-as-list-of-strings",
    ),
    pytest.param(
        MetaTemplate(),
        [section("round", "begin"), turn(S, "Solve."), turn(H, "1+1=?"), turn(B, ""), section("round", "end")],
        "gen",
        "Solve.\n1+1=?",
        id="no-meta-template-joins-with-newlines",
    ),
    pytest.param(MetaTemplate(round=ROUND_GEN, begin=BEGIN), "plain string", "gen", "plain string", id="str-passes"),
]


@pytest.mark.parametrize(("meta", "prompt", "mode", "expected"), LM_CASES)
def test_lm_parse(meta: MetaTemplate, prompt: Any, mode: Any, expected: str) -> None:
    assert meta.parse(PromptList(prompt) if isinstance(prompt, list) else prompt, mode=mode) == expected


API = MetaTemplate(round=[{"role": H, "api_role": H}, {"role": B, "api_role": B, "generate": True}])
API_SYSTEM = MetaTemplate(
    round=[{"role": H, "api_role": H}, {"role": B, "api_role": B, "generate": True}],
    reserved_roles=[{"role": S, "api_role": S}],
)
API_CASES = [
    pytest.param(
        API,
        WITH_SYSTEM,
        "gen",
        [turn(H, "Solve the following math questions\n1+1=?"), turn(B, "2"), turn(H, "2+2=?")],
        id="no-system-merges-into-human",
    ),
    pytest.param(
        API_SYSTEM,
        WITH_SYSTEM,
        "gen",
        [turn(S, "Solve the following math questions"), turn(H, "1+1=?"), turn(B, "2"), turn(H, "2+2=?")],
        id="system",
    ),
    pytest.param(
        API_SYSTEM,
        WITH_SYSTEM,
        "ppl",
        [turn(S, "Solve the following math questions"), turn(H, "1+1=?"), turn(B, "2"), turn(H, "2+2=?"), turn(B, "4")],
        id="ppl-keeps-last-answer",
    ),
    pytest.param(API, "hello", "gen", [turn(H, "hello")], id="str-is-one-human-turn"),
    pytest.param(MetaTemplate(), [turn(H, "a"), turn(B, "b")], "gen", [turn(H, "a\nb")], id="no-meta-template"),
]


@pytest.mark.parametrize(("meta", "prompt", "mode", "expected"), API_CASES)
def test_api_parse(meta: MetaTemplate, prompt: Any, mode: Any, expected: list[dict[str, Any]]) -> None:
    got = meta.parse_api(PromptList(prompt) if isinstance(prompt, list) else prompt, mode=mode)
    assert got == expected


def test_api_turns_become_openai_messages() -> None:
    turns = API_SYSTEM.parse_api(PromptList(WITH_SYSTEM))
    assert api_to_messages(turns)[:2] == [
        {"role": "system", "content": "Solve the following math questions"},
        {"role": "user", "content": "1+1=?"},
    ]


def test_dataset_template_through_meta_template() -> None:
    """The OpenCompass few-shot dialogue example, rendered for an LM and an API model."""
    ice_t = PromptTemplate({"round": [turn(H, "{question}"), turn(B, "{answer}")]})
    t = PromptTemplate(
        {
            "begin": [turn(S, "Solve the following questions.", fallback_role=H), "</E>"],
            "round": [turn(H, "{question}"), turn(B, "{answer}")],
        },
        ice_token="</E>",
    )
    ice = ice_t.generate_ice([{"question": "2+2=?", "answer": "4"}, {"question": "3+3=?", "answer": "6"}])
    prompt = t.generate_item({"question": "1+1=?", "answer": "2"}, output_field="answer", ice_field_replace_token=ice)
    meta = MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED)
    assert meta.parse(prompt, "gen") == (
        "<SYSTEM>: Solve the following questions.<eosys>\n"
        "<HUMAN>: 2+2=?<eoh>\n<BOT>: 4<eob>\n<HUMAN>: 3+3=?<eoh>\n<BOT>: 6<eob>\n<HUMAN>: 1+1=?<eoh>\n<BOT>: "
    )
    assert MetaTemplate().parse(prompt) == "Solve the following questions.\n2+2=?\n4\n3+3=?\n6\n1+1=?"
    assert API.parse_api(prompt) == [
        turn(H, "Solve the following questions.\n2+2=?"),
        turn(B, "4"),
        turn(H, "3+3=?"),
        turn(B, "6"),
        turn(H, "1+1=?"),
    ]


META_ERRORS = [
    pytest.param(
        lambda: MetaTemplate(round=[{"role": H}, {"role": H}]), EvalTemplateError, "'HUMAN'", id="duplicate-role"
    ),
    pytest.param(lambda: MetaTemplate(round=[{"role": H, "begn": ""}]), EvalTemplateError, "begn", id="unknown-key"),
    pytest.param(
        lambda: MetaTemplate(round=[{"role": H, "begin": [1, 2]}]),
        EvalTemplateError,
        r"round\[0\]\['begin'\]",
        id="token-ids",
    ),
    pytest.param(
        lambda: MetaTemplate(round=[{"role": H, "api_role": "USER"}]), EvalTemplateError, "api_role", id="bad-api-role"
    ),
    pytest.param(lambda: MetaTemplate(begin="x"), EvalTemplateError, "round", id="begin-without-round"),
    pytest.param(
        lambda: MetaTemplate(round=ROUND).parse(PromptList([turn("TOOL", "x")])),
        UnknownRoleError,
        r"prompt\[0\].*'TOOL'",
        id="unknown-role",
    ),
    pytest.param(
        lambda: MetaTemplate(round=ROUND).parse(PromptList([turn(H, "x")]), mode="chat"),  # type: ignore[arg-type]
        EvalTemplateError,
        "mode",
        id="bad-mode",
    ),
    pytest.param(
        lambda: MetaTemplate(round=ROUND).parse(PromptList([section("round", "begin")])),
        EvalTemplateError,
        "never closed",
        id="unclosed-section",
    ),
    pytest.param(
        lambda: MetaTemplate(round=ROUND).parse(PromptList([section("round", "end")])),
        EvalTemplateError,
        r"prompt\[0\]",
        id="stray-close",
    ),
    pytest.param(
        lambda: MetaTemplate(round=ROUND).parse(PromptList([{"prompt": "x"}])),
        EvalTemplateError,
        r"prompt\[0\]",
        id="dict-without-role",
    ),
    pytest.param(
        lambda: MetaTemplate(round=ROUND).parse(PromptList([turn(H, [{"type": "text"}])])),  # type: ignore[arg-type]
        UnsupportedContentError,
        "multimodal",
        id="parts-into-text",
    ),
    pytest.param(
        lambda: API.parse_api(PromptList(["free text", turn(H, "x")])),
        UnsupportedContentError,
        r"prompt\[0\]",
        id="api-bare-string",
    ),
    pytest.param(
        lambda: MetaTemplate(round=ROUND).parse_api(PromptList([turn(H, "x")])),
        EvalTemplateError,
        "api_role",
        id="api-without-api-role",
    ),
    pytest.param(lambda: MetaTemplate(round=ROUND).parse(42), InputTypeError, "prompt", id="not-a-list"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("call", "error", "named"), META_ERRORS)
def test_meta_errors(call: Any, error: type[PromptError], named: str) -> None:
    with pytest.raises(error, match=named):
        call()


def test_parse_never_changes_the_prompt_list() -> None:
    prompt = PromptList(WITH_SYSTEM)
    before = copy.deepcopy(prompt)
    MetaTemplate(round=ROUND_GEN).parse(prompt)
    API.parse_api(prompt)
    assert prompt == before


def test_meta_template_is_frozen_data() -> None:
    meta = MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED)
    assert meta == MetaTemplate(round=[RoleSpec.from_config(r) for r in ROUND_GEN], reserved_roles=RESERVED)
    assert hash(meta) == hash(MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED))
    with pytest.raises(dataclasses.FrozenInstanceError):
        meta.begin = "x"  # type: ignore[misc]


# -- MetaTemplate <-> ModelFormat -------------------------------------------------------------------

FAMILIES = ModelFormat.families()
CONVERSATION = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "q1"},
    {"role": "assistant", "content": "a1"},
    {"role": "user", "content": "q2"},
]
AS_PROMPT_LIST = PromptList([turn(S, "S"), turn(H, "q1"), turn(B, "a1"), turn(H, "q2"), turn(B, "")])
DELIMITERS = ("bos", "sos", "eos", "soh", "eoh", "soa", "eoa", "soe", "eoe", "generation_prompt")


def _fixed(name: str) -> ModelFormat:
    return dataclasses.replace(ModelFormat.get(name), chat_template=None, default_system=None)


@pytest.mark.parametrize("family", FAMILIES)
def test_meta_template_writes_what_the_format_writes(family: str) -> None:
    fmt = _fixed(family)
    meta = MetaTemplate.from_model_format(fmt)
    assert meta.parse(AS_PROMPT_LIST, "gen") == fmt.render(CONVERSATION)


@pytest.mark.parametrize("family", FAMILIES)
def test_format_round_trips_through_meta_template(family: str) -> None:
    fmt = _fixed(family)
    back = MetaTemplate.from_model_format(fmt).to_model_format(fmt.name)
    assert {k: getattr(back, k) for k in DELIMITERS} == {k: getattr(fmt, k) for k in DELIMITERS}


def test_guide_meta_template_as_model_format() -> None:
    fmt = MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED).to_model_format("guide")
    assert (fmt.name, fmt.sos, fmt.eos, fmt.soh, fmt.eoh, fmt.soa, fmt.eoa, fmt.generation_prompt, fmt.stop_words) == (
        "guide", "<SYSTEM>: ", "<eosys>\n", "<HUMAN>: ", "<eoh>\n", "<BOT>: ", "<eob>\n", "<BOT>: ", ("<eob>",),
    )  # fmt: skip
    assert MetaTemplate.from_model_format(fmt) == MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED)


CONVERSION_ERRORS = [
    pytest.param(MetaTemplate(round=[*ROUND_GEN, {"role": "THOUGHTS"}]), "THOUGHTS", id="extra-round-role"),
    pytest.param(MetaTemplate(round=ROUND_GEN, reserved_roles=[{"role": "JUDGE"}]), "JUDGE", id="extra-reserved"),
    pytest.param(MetaTemplate(round=ROUND_GEN, end="bye"), "end", id="end"),
    pytest.param(MetaTemplate(round=[ROUND[0], {**ROUND[1], "prompt": "x"}]), "default prompt", id="default-prompt"),
]


@pytest.mark.parametrize(("meta", "named"), CONVERSION_ERRORS)
def test_to_model_format_refuses_what_a_format_cannot_hold(meta: MetaTemplate, named: str) -> None:
    with pytest.raises(EvalTemplateError, match=named):
        meta.to_model_format()


def test_template_only_format_has_no_meta_template() -> None:
    with pytest.raises(EvalTemplateError, match="chat template"):
        MetaTemplate.from_model_format(ModelFormat(name="odd", chat_template="{{ messages }}"))


# -- AISBench multi-turn ----------------------------------------------------------------------------

MT = MultiTurnPromptTemplate({"round": [turn(H, "{question}"), turn(B, "{answer}")]})
MT_ENTRY = {"question": ["1+1=?", "2+2=?", "3+3=?"], "answer": ["2", "4", "6"]}
T1 = [turn(H, "1+1=?")]
MT_CASES = [
    pytest.param(
        "every",
        [T1, [*T1, turn(B, "answer1"), turn(H, "2+2=?")],
         [*T1, turn(B, "answer1"), turn(H, "2+2=?"), turn(B, "answer2"), turn(H, "3+3=?")]],
        ["answer1", "answer2", "answer3"],
        id="every",
    ),
    pytest.param(
        "every_with_gt",
        [T1, [*T1, turn(B, "2"), turn(H, "2+2=?")], [*T1, turn(B, "2"), turn(H, "2+2=?"), turn(B, "4"), turn(H, "3+3=?")]],
        ["answer1", "answer2", "answer3"],
        id="every_with_gt",
    ),
    pytest.param(
        "last",
        [[*T1, turn(B, "2"), turn(H, "2+2=?"), turn(B, "4"), turn(H, "3+3=?")]],
        ["answer1"],
        id="last",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("mode", "prompts", "answers"), MT_CASES)
def test_multi_turn_modes(mode: Any, prompts: list[list[dict[str, str]]], answers: list[str]) -> None:
    seen: list[PromptList] = []

    def respond(prompt: PromptList) -> str:
        seen.append(prompt.strip_sections())
        return f"answer{len(seen)}"

    entry = copy.deepcopy(MT_ENTRY)
    assert MT.run(entry, mode, "answer", respond) == answers
    assert seen == prompts
    predictions = ["answer1", "answer2"] if mode == "every" else None
    assert [p.strip_sections() for p in MT.generate_turns(entry, mode, "answer", predictions)] == prompts
    assert entry == MT_ENTRY


def test_multi_turn_with_meta_template() -> None:
    meta = MetaTemplate(round=ROUND_GEN, reserved_roles=RESERVED)
    t = MultiTurnPromptTemplate(
        {"begin": [turn(S, "Answer {style}.")], "round": [turn(H, "{question}"), turn(B, "{answer}")]}
    )
    prompt = t.turn({**MT_ENTRY, "style": "tersely"}, 1, ["2"], output_field="answer")
    assert (
        meta.parse(prompt)
        == "<SYSTEM>: Answer tersely.<eosys>\n<HUMAN>: 1+1=?<eoh>\n<BOT>: 2<eob>\n<HUMAN>: 2+2=?<eoh>\n<BOT>: "
    )


MT_ERRORS = [
    pytest.param(lambda: MultiTurnPromptTemplate("{q}"), EvalTemplateError, "dialogue", id="not-dialogue"),  # type: ignore[arg-type]
    pytest.param(
        lambda: MultiTurnPromptTemplate({"round": [turn(H, "{q}")]}), EvalTemplateError, "'BOT'", id="no-answer-role"
    ),
    pytest.param(
        lambda: MT.generate_turns({"question": ["a", "b"], "answer": ["1"]}, "last", "answer"),
        EvalTemplateError,
        "1 answers for 2 turns",
        id="length-mismatch",
    ),
    pytest.param(
        lambda: MT.generate_turns(MT_ENTRY, "every", "answer"),
        EvalTemplateError,
        "predictions",
        id="every-needs-predictions",
    ),
    pytest.param(
        lambda: MT.generate_turns(MT_ENTRY, "all", "answer"),  # type: ignore[arg-type]
        EvalTemplateError,
        "mode",
        id="bad-mode",
    ),
    pytest.param(
        lambda: MT.turn(MT_ENTRY, 3, ["2", "4", "6"], output_field="answer"),
        EvalTemplateError,
        "index",
        id="index-out-of-range",
    ),
    pytest.param(
        lambda: MT.turn(MT_ENTRY, 2, ["2"], output_field="answer"), EvalTemplateError, "answers", id="too-few-answers"
    ),
    pytest.param(
        lambda: MT.turn({"answer": ["1"]}, 0, [], output_field="answer"),
        MissingSlotError,
        "'question'",
        id="missing-question",
    ),
    pytest.param(
        lambda: MT.run(MT_ENTRY, "every", "answer", lambda p: 1),  # type: ignore[arg-type,return-value]
        InputTypeError,
        "turn 0",
        id="respond-returns-non-str",
    ),
]


@pytest.mark.parametrize(("call", "error", "named"), MT_ERRORS)
def test_multi_turn_errors(call: Any, error: type[PromptError], named: str) -> None:
    with pytest.raises(error, match=named):
        call()


# -- AISBench multimodal ----------------------------------------------------------------------------

TEXT_PART = {"type": "text", "text": "{anything}\nQuestion: {question}"}
MM_URL = MMPromptTemplate(
    {
        "round": [
            {
                "role": H,
                "prompt_mm": {
                    "text": TEXT_PART,
                    "image": {"type": "image_url", "image_url": {"url": "file://{image}"}},
                    "video": {"type": "video_url", "video_url": {"url": "file://{video}"}},
                    "audio": {"type": "audio_url", "audio_url": {"url": "file://{audio}"}},
                },
            }
        ]
    }
)
MM_BASE64 = MMPromptTemplate(
    {
        "round": [
            {
                "role": H,
                "prompt_mm": {
                    "text": TEXT_PART,
                    "image": {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,{image}"}},
                    "video": {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,{video}"}},
                    "audio": {"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64,{audio}"}},
                },
            },
            turn(B, "{answer}"),
        ]
    }
)
MM_QUESTION = (
    "<AIS_TEXT_START>What is this?<AIS_CONTENT_TAG><AIS_IMAGE_START>IMG<AIS_CONTENT_TAG>"
    "<AIS_AUDIO_START>AUD<AIS_CONTENT_TAG><AIS_VIDEO_START>VID<AIS_CONTENT_TAG>"
)
MM_ENTRY = {"anything": "blabla", "question": MM_QUESTION, "answer": "a cat"}
MM_CASES = [
    pytest.param(
        MM_URL,
        [
            {
                "role": H,
                "prompt": [
                    {"type": "text", "text": "blabla\nQuestion: What is this?"},
                    {"type": "image_url", "image_url": {"url": "file://IMG"}},
                    {"type": "audio_url", "audio_url": {"url": "file://AUD"}},
                    {"type": "video_url", "video_url": {"url": "file://VID"}},
                ],
            }
        ],
        id="url",
    ),
    pytest.param(
        MM_BASE64,
        [
            {
                "role": H,
                "prompt": [
                    {"type": "text", "text": "blabla\nQuestion: What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,IMG"}},
                    {"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64,AUD"}},
                    {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,VID"}},
                ],
            },
            turn(B, ""),
        ],
        id="base64-answer-blanked",
    ),
    pytest.param(
        MMPromptTemplate({"round": [{"role": H, "prompt_mm": {"text": "{question}", "image": "{image}"}}]}),
        [
            {
                "role": H,
                "prompt": [
                    {"type": "image_url", "image_url": {"url": "a.png"}},
                    {"type": "image_url", "image_url": {"url": "b.png"}},
                    {"type": "text", "text": "Same {animal}?"},
                ],
            }
        ],
        id="short-form-two-images-in-sample-order",
    ),
]


@pytest.mark.parametrize(("template", "expected"), MM_CASES)
def test_multimodal(template: MMPromptTemplate, expected: list[dict[str, Any]]) -> None:
    entry = dict(MM_ENTRY)
    if expected[0]["prompt"][0]["type"] == "image_url":
        entry["question"] = (
            "<AIS_IMAGE_START>a.png<AIS_CONTENT_TAG><AIS_IMAGE_START>b.png<AIS_CONTENT_TAG>"
            "<AIS_TEXT_START>Same {animal}?<AIS_CONTENT_TAG>"
        )
    before = copy.deepcopy(entry)
    assert template.generate_item(entry, output_field="answer").strip_sections() == expected
    assert entry == before


def test_multimodal_through_api_meta_template() -> None:
    turns = API.parse_api(MM_URL.generate_item(MM_ENTRY))
    assert turns[0]["role"] == H and turns[0]["prompt"][1] == {"type": "image_url", "image_url": {"url": "file://IMG"}}
    assert api_to_messages(turns)[0]["content"][0] == {"type": "text", "text": "blabla\nQuestion: What is this?"}


def test_untagged_content_is_one_text_piece() -> None:
    got = MM_URL.generate_item({"anything": "x", "question": "plain"}).strip_sections()
    assert got == [{"role": H, "prompt": [{"type": "text", "text": "x\nQuestion: plain"}]}]


MM_ERRORS = [
    pytest.param(lambda: MMPromptTemplate({"round": [{"role": H, "prompt_mm": {"smell": "x"}}]}),
                 EvalTemplateError, "smell", id="unknown-modality"),
    pytest.param(lambda: MMPromptTemplate({"round": [{"role": H, "prompt_mm": {"text": "x"}, "prompt": "y"}]}),
                 EvalTemplateError, "prompt", id="prompt-and-prompt-mm"),
    pytest.param(lambda: MMPromptTemplate({"round": [{"role": H, "prompt_mm": {"text": "{question}"}}]})
                 .generate_item({"question": "<AIS_IMAGE_START>x<AIS_CONTENT_TAG>"}),
                 EvalTemplateError, "image", id="piece-without-part"),
    pytest.param(lambda: MM_URL.generate_item({"question": "<AIS_TEXT_START>a<AIS_CONTENT_TAG>junk"}),
                 EvalTemplateError, "junk", id="untagged-piece"),
    pytest.param(lambda: MM_URL.generate_item({"anything": "x"}), MissingSlotError, "'question'",
                 id="no-content-field"),
    pytest.param(lambda: MM_URL.generate_item({"question": 3}), InputTypeError, "'question'", id="content-not-str"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "error", "named"), MM_ERRORS)
def test_multimodal_errors(call: Any, error: type[PromptError], named: str) -> None:
    with pytest.raises(error, match=named):
        call()


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        pytest.param({"role": ""}, "role", id="empty-role"),
        pytest.param({"role": H, "begin": 1}, "begin", id="begin-not-str"),
        pytest.param({"role": H, "prompt": 1}, "prompt", id="prompt-not-str"),
        pytest.param({"role": H, "generate": "yes"}, "generate", id="generate-not-bool"),
        pytest.param({"role": H, "api_role": "user"}, "api_role", id="bad-api-role"),
    ],
)
def test_role_spec_checks_itself(kwargs: dict[str, Any], named: str) -> None:
    with pytest.raises(EvalTemplateError, match=named):
        RoleSpec(**kwargs)

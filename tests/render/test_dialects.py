"""The API dialects, one table row per dialect and situation.

The expected bodies are written out in full: they are the specification of
what prompter sends to each API (the part it owns: messages, system, tools;
the model name and generation options are the module's).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompter import ChatPrompter
from prompter.errors import MessageError, PromptError, UnsupportedContentError
from prompter.prompters.base import Format
from prompter.render import DIALECTS

API_DIALECTS: tuple[Format, ...] = ("anthropic", "gemini", "ollama", "dashscope", "zhipu")

WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
NOW = {"type": "function", "function": {"name": "now", "description": "The current time."}}
TOOLS = [WEATHER, NOW]
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

URL = "https://example.com/cat.png"
DATA_URL = "data:image/png;base64,iVBORw0KGgo="
PNG_B64 = "iVBORw0KGgo="


def brief() -> ChatPrompter:
    """A chat prompter whose system text is exactly ``Be brief.``."""
    return ChatPrompter(system="Be brief.")


def image_turn(url: str) -> dict[str, Any]:
    """A multimodal user message: a question and an image."""
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": url}},
        ],
    }


TOOL_CALL_HISTORY = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
]
TOOL_RESULT = {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 18}'}


# ---- system + [question, answer] history + input ------------------------------------------

PAIRS_CASES = [
    pytest.param(
        "anthropic",
        {
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "What is 2+2?"},
                {"role": "assistant", "content": "4"},
                {"role": "user", "content": "And 3+3?"},
            ],
        },
        id="anthropic",
    ),
    pytest.param(
        "gemini",
        {
            "system_instruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "What is 2+2?"}]},
                {"role": "model", "parts": [{"text": "4"}]},
                {"role": "user", "parts": [{"text": "And 3+3?"}]},
            ],
        },
        id="gemini",
    ),
    pytest.param(
        "ollama",
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is 2+2?"},
                {"role": "assistant", "content": "4"},
                {"role": "user", "content": "And 3+3?"},
            ]
        },
        id="ollama",
    ),
    pytest.param(
        "dashscope",
        {
            "input": {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "What is 2+2?"},
                    {"role": "assistant", "content": "4"},
                    {"role": "user", "content": "And 3+3?"},
                ]
            }
        },
        id="dashscope",
    ),
    pytest.param(
        "zhipu",
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is 2+2?"},
                {"role": "assistant", "content": "4"},
                {"role": "user", "content": "And 3+3?"},
            ]
        },
        id="zhipu",
    ),
]


@pytest.mark.parametrize(("dialect", "expected"), PAIRS_CASES)
def test_system_pairs_history_and_input(dialect: Format, expected: dict[str, Any]) -> None:
    body = brief().generate_prompt("And 3+3?", history=[["What is 2+2?", "4"]], format=dialect)
    assert body == expected


# ---- tools --------------------------------------------------------------------------------

TOOLS_CASES = [
    pytest.param(
        "anthropic",
        {
            "system": "Be brief.",
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [
                {
                    "name": "weather",
                    "description": "Current weather in a city.",
                    "input_schema": WEATHER_SCHEMA,
                },
                {
                    "name": "now",
                    "description": "The current time.",
                    "input_schema": {"type": "object", "properties": {}},
                },
            ],
        },
        id="anthropic-input-schema-always-present",
    ),
    pytest.param(
        "gemini",
        {
            "system_instruction": {"parts": [{"text": "Be brief."}]},
            "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
            "tools": [
                {
                    "function_declarations": [
                        {
                            "name": "weather",
                            "description": "Current weather in a city.",
                            "parameters": WEATHER_SCHEMA,
                        },
                        {"name": "now", "description": "The current time."},
                    ]
                }
            ],
        },
        id="gemini-one-function-declarations-entry",
    ),
    pytest.param(
        "ollama",
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
            ],
            "tools": TOOLS,
        },
        id="ollama-openai-style-tools",
    ),
    pytest.param(
        "dashscope",
        {
            "input": {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Weather in Paris?"},
                ]
            },
            "parameters": {"tools": TOOLS},
        },
        id="dashscope-tools-under-parameters",
    ),
    pytest.param(
        "zhipu",
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
            ],
            "tools": TOOLS,
        },
        id="zhipu-openai-style-tools",
    ),
]


@pytest.mark.parametrize(("dialect", "expected"), TOOLS_CASES)
def test_tools(dialect: Format, expected: dict[str, Any]) -> None:
    assert brief().generate_prompt("Weather in Paris?", tools=TOOLS, format=dialect) == expected


@pytest.mark.parametrize("dialect", API_DIALECTS)
def test_tools_locked_at_construction_render_like_tools_at_call_time(dialect: Format) -> None:
    locked = ChatPrompter(system="Be brief.", tools=TOOLS).generate_prompt(
        "Weather in Paris?", format=dialect
    )
    assert locked == brief().generate_prompt("Weather in Paris?", tools=TOOLS, format=dialect)


# ---- a tool call, then its result as the current turn --------------------------------------

TOOL_ROUND_CASES = [
    pytest.param(
        "anthropic",
        {
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}}
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "call_1", "content": '{"temp_c": 18}'}
                    ],
                },
            ],
            "tools": [
                {
                    "name": "weather",
                    "description": "Current weather in a city.",
                    "input_schema": WEATHER_SCHEMA,
                }
            ],
        },
        id="anthropic-tool-use-and-tool-result-blocks",
    ),
    pytest.param(
        "gemini",
        {
            "system_instruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "weather", "args": {"city": "Paris"}}}],
                },
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "weather", "response": {"temp_c": 18}}}],
                },
            ],
            "tools": [
                {
                    "function_declarations": [
                        {
                            "name": "weather",
                            "description": "Current weather in a city.",
                            "parameters": WEATHER_SCHEMA,
                        }
                    ]
                }
            ],
        },
        id="gemini-function-call-and-response-parts",
    ),
    pytest.param(
        "ollama",
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Paris"}}}],
                },
                {"role": "tool", "content": '{"temp_c": 18}', "tool_name": "weather"},
            ],
            "tools": [WEATHER],
        },
        id="ollama-arguments-object-and-tool-name",
    ),
    pytest.param(
        "dashscope",
        {
            "input": {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Weather in Paris?"},
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "content": '{"temp_c": 18}',
                        "tool_call_id": "call_1",
                        "name": "weather",
                    },
                ]
            },
            "parameters": {"tools": [WEATHER]},
        },
        id="dashscope-tool-message-names-the-function",
    ),
    pytest.param(
        "zhipu",
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                },
                {"role": "tool", "content": '{"temp_c": 18}', "tool_call_id": "call_1"},
            ],
            "tools": [WEATHER],
        },
        id="zhipu-arguments-as-json-string",
    ),
]


@pytest.mark.parametrize(("dialect", "expected"), TOOL_ROUND_CASES)
def test_tool_call_then_tool_result(dialect: Format, expected: dict[str, Any]) -> None:
    body = brief().generate_prompt(TOOL_RESULT, history=TOOL_CALL_HISTORY, tools=[WEATHER], format=dialect)
    assert body == expected


PARALLEL_RESULTS_HISTORY = [
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": {"city": "Paris"}}},
            {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": {"city": "Rome"}}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "18C"},
    {"role": "tool", "tool_call_id": "c2", "content": "21C"},
]

PARALLEL_CASES = [
    pytest.param(
        "anthropic",
        [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "c2", "name": "weather", "input": {"city": "Rome"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "18C"},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "21C"},
                    {"type": "text", "text": "Which is warmer?"},
                ],
            },
        ],
        id="anthropic-results-merged-into-one-user-message-text-last",
    ),
    pytest.param(
        "gemini",
        [
            {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                    {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "weather", "response": {"content": "18C"}}},
                    {"functionResponse": {"name": "weather", "response": {"content": "21C"}}},
                    {"text": "Which is warmer?"},
                ],
            },
        ],
        id="gemini-non-json-results-wrapped-and-merged",
    ),
]


@pytest.mark.parametrize(("dialect", "expected_messages"), PARALLEL_CASES)
def test_parallel_tool_results_merge_into_one_turn(dialect: Format, expected_messages: list[Any]) -> None:
    body = ChatPrompter(enable_system=False).generate_prompt(
        "Which is warmer?", history=PARALLEL_RESULTS_HISTORY, format=dialect
    )
    assert body[{"anthropic": "messages", "gemini": "contents"}[dialect]] == expected_messages


# ---- images ---------------------------------------------------------------------------------

IMAGE_CASES = [
    pytest.param(
        "anthropic",
        URL,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "url", "url": URL}},
            ],
        },
        id="anthropic-url",
    ),
    pytest.param(
        "anthropic",
        DATA_URL,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
            ],
        },
        id="anthropic-data-url",
    ),
    pytest.param(
        "gemini",
        URL,
        {
            "role": "user",
            "parts": [{"text": "What is this?"}, {"file_data": {"mime_type": "image/png", "file_uri": URL}}],
        },
        id="gemini-url",
    ),
    pytest.param(
        "gemini",
        DATA_URL,
        {
            "role": "user",
            "parts": [
                {"text": "What is this?"},
                {"inline_data": {"mime_type": "image/png", "data": PNG_B64}},
            ],
        },
        id="gemini-data-url",
    ),
    pytest.param(
        "ollama",
        DATA_URL,
        {"role": "user", "content": "What is this?", "images": [PNG_B64]},
        id="ollama-data-url",
    ),
    pytest.param(
        "dashscope",
        URL,
        {"role": "user", "content": [{"text": "What is this?"}, {"image": URL}]},
        id="dashscope-url",
    ),
    pytest.param(
        "dashscope",
        DATA_URL,
        {"role": "user", "content": [{"text": "What is this?"}, {"image": DATA_URL}]},
        id="dashscope-data-url",
    ),
    pytest.param(
        "zhipu",
        URL,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": URL}},
            ],
        },
        id="zhipu-url",
    ),
    pytest.param(
        "zhipu",
        DATA_URL,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": DATA_URL}},
            ],
        },
        id="zhipu-data-url",
    ),
]


def last_message(body: dict[str, Any]) -> Any:
    """The last message of any dialect's body."""
    if "contents" in body:
        return body["contents"][-1]
    if "input" in body:
        return body["input"]["messages"][-1]
    return body["messages"][-1]


@pytest.mark.parametrize(("dialect", "url", "expected"), IMAGE_CASES)
def test_image_by_url_and_by_data_url(dialect: Format, url: str, expected: dict[str, Any]) -> None:
    body = brief().generate_prompt(image_turn(url), format=dialect)
    assert last_message(body) == expected


def test_dashscope_with_an_image_every_content_is_a_list() -> None:
    body = brief().generate_prompt(image_turn(URL), history=[["Hi", "Hello"]], format="dashscope")
    assert body == {
        "input": {
            "messages": [
                {"role": "system", "content": [{"text": "Be brief."}]},
                {"role": "user", "content": [{"text": "Hi"}]},
                {"role": "assistant", "content": [{"text": "Hello"}]},
                {"role": "user", "content": [{"text": "What is this?"}, {"image": URL}]},
            ]
        }
    }


def test_zhipu_drops_image_detail_and_message_name() -> None:
    turn = {
        "role": "user",
        "name": "alice",
        "content": [{"type": "image_url", "image_url": {"url": URL, "detail": "high"}}],
    }
    body = ChatPrompter(enable_system=False).generate_prompt(turn, format="zhipu")
    assert body == {
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": URL}}]}]
    }


def test_gemini_url_without_a_known_extension_has_no_mime_type() -> None:
    body = brief().generate_prompt(image_turn("https://example.com/image?id=7"), format="gemini")
    assert last_message(body)["parts"][1] == {"file_data": {"file_uri": "https://example.com/image?id=7"}}


def test_percent_encoded_data_url_is_base64_encoded() -> None:
    body = brief().generate_prompt(image_turn("data:image/svg+xml,%3Csvg%2F%3E"), format="gemini")
    assert last_message(body)["parts"][1] == {
        "inline_data": {"mime_type": "image/svg+xml", "data": "PHN2Zy8+"}
    }


# ---- empty system ---------------------------------------------------------------------------

EMPTY_SYSTEM_CASES = [
    pytest.param(
        "anthropic", {"messages": [{"role": "user", "content": "hi"}]}, id="anthropic-no-system-key"
    ),
    pytest.param(
        "gemini",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        id="gemini-no-system-instruction",
    ),
    pytest.param("ollama", {"messages": [{"role": "user", "content": "hi"}]}, id="ollama-no-system-message"),
    pytest.param(
        "dashscope",
        {"input": {"messages": [{"role": "user", "content": "hi"}]}},
        id="dashscope-no-system-message",
    ),
    pytest.param("zhipu", {"messages": [{"role": "user", "content": "hi"}]}, id="zhipu-no-system-message"),
]


@pytest.mark.parametrize(("dialect", "expected"), EMPTY_SYSTEM_CASES)
@pytest.mark.parametrize(
    "prompter",
    [
        pytest.param(ChatPrompter(enable_system=False), id="enable_system=False"),
        pytest.param(ChatPrompter(system=""), id="system=''"),
    ],
)
def test_empty_system_is_left_out(prompter: ChatPrompter, dialect: Format, expected: dict[str, Any]) -> None:
    assert prompter.generate_prompt("hi", format=dialect) == expected


# ---- consecutive same-role messages ---------------------------------------------------------

SAME_ROLE_HISTORY = [
    {"role": "user", "content": "Hi."},
    {"role": "user", "content": "Are you there?"},
    {"role": "assistant", "content": "Yes."},
    {"role": "assistant", "content": "How can I help?"},
]

MERGE_CASES = [
    pytest.param(
        "anthropic",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Hi."},
                        {"type": "text", "text": "Are you there?"},
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Yes."},
                        {"type": "text", "text": "How can I help?"},
                    ],
                },
                {"role": "user", "content": "Tell a joke."},
            ]
        },
        id="anthropic-merged-into-blocks",
    ),
    pytest.param(
        "gemini",
        {
            "contents": [
                {"role": "user", "parts": [{"text": "Hi."}, {"text": "Are you there?"}]},
                {"role": "model", "parts": [{"text": "Yes."}, {"text": "How can I help?"}]},
                {"role": "user", "parts": [{"text": "Tell a joke."}]},
            ]
        },
        id="gemini-merged-into-parts",
    ),
    pytest.param(
        "dashscope",
        {
            "input": {
                "messages": [
                    {"role": "user", "content": "Hi.\nAre you there?"},
                    {"role": "assistant", "content": "Yes.\nHow can I help?"},
                    {"role": "user", "content": "Tell a joke."},
                ]
            }
        },
        id="dashscope-merged-newline-joined",
    ),
    pytest.param(
        "ollama",
        {
            "messages": [
                {"role": "user", "content": "Hi."},
                {"role": "user", "content": "Are you there?"},
                {"role": "assistant", "content": "Yes."},
                {"role": "assistant", "content": "How can I help?"},
                {"role": "user", "content": "Tell a joke."},
            ]
        },
        id="ollama-kept-as-is",
    ),
    pytest.param(
        "zhipu",
        {
            "messages": [
                {"role": "user", "content": "Hi."},
                {"role": "user", "content": "Are you there?"},
                {"role": "assistant", "content": "Yes."},
                {"role": "assistant", "content": "How can I help?"},
                {"role": "user", "content": "Tell a joke."},
            ]
        },
        id="zhipu-kept-as-is",
    ),
]


@pytest.mark.parametrize(("dialect", "expected"), MERGE_CASES)
def test_consecutive_same_role_messages(dialect: Format, expected: dict[str, Any]) -> None:
    body = ChatPrompter(enable_system=False).generate_prompt(
        "Tell a joke.", history=SAME_ROLE_HISTORY, format=dialect
    )
    assert body == expected


SYSTEM_IN_HISTORY_CASES = [
    pytest.param("anthropic", lambda b: (b["system"], len(b["messages"])), id="anthropic"),
    pytest.param(
        "gemini", lambda b: (b["system_instruction"]["parts"][0]["text"], len(b["contents"])), id="gemini"
    ),
    pytest.param(
        "dashscope",
        lambda b: (b["input"]["messages"][0]["content"], len(b["input"]["messages"]) - 1),
        id="dashscope",
    ),
]


@pytest.mark.parametrize(("dialect", "system_and_count"), SYSTEM_IN_HISTORY_CASES)
def test_system_messages_in_history_join_the_system_prompt(dialect: Format, system_and_count: Any) -> None:
    history = [{"role": "system", "content": "Use metric units."}, ["Hot?", "30C."]]
    body = brief().generate_prompt("And tomorrow?", history=history, format=dialect)
    assert system_and_count(body) == ("Be brief.\nUse metric units.", 3)


@pytest.mark.parametrize("dialect", ["ollama", "zhipu"])
def test_system_messages_in_history_stay_in_place_where_the_api_allows(dialect: Format) -> None:
    history = [["Hot?", "30C."], {"role": "system", "content": "Use metric units."}]
    body = brief().generate_prompt("And tomorrow?", history=history, format=dialect)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "system", "user"]


@pytest.mark.parametrize(
    ("dialect", "last"),
    [
        pytest.param("anthropic", {"role": "assistant", "content": "12"}, id="anthropic"),
        pytest.param("gemini", {"role": "model", "parts": [{"text": "12"}]}, id="gemini"),
        pytest.param("ollama", {"role": "assistant", "content": "12"}, id="ollama"),
        pytest.param("dashscope", {"role": "assistant", "content": "12"}, id="dashscope"),
        pytest.param("zhipu", {"role": "assistant", "content": "12"}, id="zhipu"),
    ],
)
def test_label_is_the_final_assistant_turn(dialect: Format, last: dict[str, Any]) -> None:
    assert last_message(brief().generate_prompt("7+5?", label="12", format=dialect)) == last


# ---- what a dialect cannot carry -------------------------------------------------------------

ERROR_CASES = [
    pytest.param(
        "ollama", image_turn(URL), None, UnsupportedContentError, "base64 data only", id="ollama-image-by-url"
    ),
    pytest.param(
        "anthropic",
        image_turn("data:image/bmp;base64,Qk0="),
        None,
        UnsupportedContentError,
        "not image/bmp",
        id="anthropic-unsupported-image-type",
    ),
    pytest.param(
        "anthropic",
        {"role": "tool", "content": "42"},
        None,
        MessageError,
        "tool_call_id",
        id="anthropic-tool-result-without-id",
    ),
    pytest.param(
        "anthropic",
        "next",
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "now", "arguments": "{}"}}],
            }
        ],
        MessageError,
        r"history\[0\]\.tool_calls\[0\]",
        id="anthropic-tool-call-without-id",
    ),
    pytest.param(
        "anthropic",
        "next",
        [{"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": URL}}]}],
        UnsupportedContentError,
        "assistant message cannot carry an image",
        id="anthropic-image-in-assistant-message",
    ),
    pytest.param(
        "gemini",
        {"role": "tool", "tool_call_id": "unknown", "content": "42"},
        None,
        MessageError,
        "function name",
        id="gemini-tool-result-for-an-unknown-call",
    ),
    pytest.param(
        "gemini",
        image_turn("data:image/png"),
        None,
        MessageError,
        "malformed data URL",
        id="gemini-malformed-data-url",
    ),
    pytest.param(
        "anthropic",
        image_turn("data:;base64,AAAA"),
        None,
        MessageError,
        "no media type",
        id="anthropic-data-url-without-media-type",
    ),
    pytest.param(
        "gemini",
        "next",
        [{"role": "system", "content": [{"type": "image_url", "image_url": {"url": URL}}]}],
        UnsupportedContentError,
        "a system message cannot carry an image",
        id="gemini-image-in-system-message",
    ),
]


@pytest.mark.parametrize(("dialect", "input", "history", "error", "match"), ERROR_CASES)
def test_what_a_dialect_cannot_carry_is_a_clear_error(
    dialect: Format, input: Any, history: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        brief().generate_prompt(input, history=history, format=dialect)


def test_gemini_tool_result_may_name_its_function() -> None:
    turn = {"role": "tool", "name": "now", "content": "12:00"}
    body = brief().generate_prompt(turn, format="gemini")
    assert last_message(body) == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "now", "response": {"content": "12:00"}}}],
    }


# ---- registry and values ----------------------------------------------------------------------


def test_every_api_dialect_is_registered() -> None:
    assert set(API_DIALECTS) <= DIALECTS


@pytest.mark.parametrize("dialect", API_DIALECTS)
def test_inputs_are_not_mutated_and_bodies_are_fresh(dialect: Format) -> None:
    history = copy.deepcopy(PARALLEL_RESULTS_HISTORY)
    tools = copy.deepcopy(TOOLS)
    turn = image_turn(DATA_URL)
    before = copy.deepcopy((history, tools, turn))
    prompter = ChatPrompter(system="Be brief.", tools=tools)
    first = prompter.generate_prompt(turn, history=history, format=dialect)
    assert (history, tools, turn) == before
    expected = copy.deepcopy(first)
    _scribble(first)
    assert prompter.generate_prompt(turn, history=history, format=dialect) == expected
    assert prompter.tools == before[1]


def _scribble(value: Any) -> None:
    """Change every dict and list inside ``value`` in place."""
    if isinstance(value, dict):
        for item in list(value.values()):
            _scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")


TEXT = st.text(max_size=20)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    system=TEXT.filter(bool),
    question=TEXT.filter(bool),
    answer=TEXT.filter(bool),
    user_input=TEXT.filter(bool),
)
def test_texts_travel_verbatim_in_every_dialect(
    system: str, question: str, answer: str, user_input: str
) -> None:
    prompter = ChatPrompter(system=system)
    for dialect in API_DIALECTS:
        if dialect == "anthropic" and not all(t.strip() for t in (question, answer, user_input)):
            # the Messages API refuses a turn of whitespace-only text: refused by name, never sent altered
            with pytest.raises(UnsupportedContentError, match="only whitespace"):
                prompter.generate_prompt(user_input, history=[[question, answer]], format=dialect)
            continue
        body = prompter.generate_prompt(user_input, history=[[question, answer]], format=dialect)
        if dialect == "anthropic":
            texts = [body["system"]] + [m["content"] for m in body["messages"]]
        elif dialect == "gemini":
            texts = [body["system_instruction"]["parts"][0]["text"]]
            texts += [c["parts"][0]["text"] for c in body["contents"]]
        else:
            messages = body["input"]["messages"] if dialect == "dashscope" else body["messages"]
            texts = [m["content"] for m in messages]
        assert texts == [system, question, answer, user_input], dialect


@pytest.mark.parametrize("dialect", ["anthropic", "gemini", "ollama"])
def test_a_malformed_data_url_is_a_prompt_error(dialect: Format) -> None:
    bad = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:nocomma"}}]}
    with pytest.raises(PromptError):
        brief().generate_prompt(bad, format=dialect)


# ---- turns the API would reject, and text parts -----------------------------------------------

SLOTS_ONLY = "Translate {input} into French."
"""An instruction whose slot takes the whole input, leaving the user turn empty."""

EMPTY_TURN_CASES = [
    pytest.param("anthropic", "", None, r"^input: format='anthropic' cannot send an empty user", id="anthropic-empty-input"),
    pytest.param("gemini", "", None, r"^input: format='gemini' cannot send an empty user", id="gemini-empty-input"),
    pytest.param(
        "anthropic",
        "next",
        [["", "an answer"]],
        r"^history\[0\]: .*empty user message",
        id="anthropic-empty-question-in-history",
    ),
    pytest.param(
        "gemini",
        "next",
        [["a question", ""]],
        r"^history\[0\]: .*empty assistant message",
        id="gemini-empty-answer-in-history",
    ),
    pytest.param(
        "anthropic",
        "next",
        [{"role": "user", "content": [{"type": "text", "text": ""}]}, {"role": "assistant", "content": "ok"}],
        r"^history\[0\]: .*empty user message",
        id="anthropic-empty-text-part",
    ),
    pytest.param(
        "gemini",
        "next",
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": ""}],
        r"^history\[1\]: .*empty assistant message",
        id="gemini-empty-assistant-message",
    ),
]


@pytest.mark.parametrize(("dialect", "input", "history", "match"), EMPTY_TURN_CASES)
def test_an_empty_turn_is_refused_where_the_api_rejects_it(
    dialect: Format, input: Any, history: Any, match: str
) -> None:
    with pytest.raises(UnsupportedContentError, match=match):
        brief().generate_prompt(input, history=history, format=dialect)


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
def test_an_instruction_that_took_the_whole_input_names_the_remedy(dialect: Format) -> None:
    from prompter import AlpacaPrompter

    with pytest.raises(UnsupportedContentError, match=r"^input: .*\{'system': \.\.\., 'user': \.\.\.\}.*format='openai'"):
        AlpacaPrompter(SLOTS_ONLY).generate_prompt("Good morning.", format=dialect)
    fixed = AlpacaPrompter({"system": "Translate into French.", "user": "{input}"})
    assert "Good morning." in str(fixed.generate_prompt("Good morning.", format=dialect))


EMPTY_ALLOWED_CASES = [
    pytest.param("anthropic", "next", TOOL_CALL_HISTORY + [TOOL_RESULT], id="anthropic-tool-calls-only"),
    pytest.param("gemini", "next", TOOL_CALL_HISTORY + [TOOL_RESULT], id="gemini-tool-calls-only"),
    pytest.param("anthropic", "", TOOL_CALL_HISTORY + [TOOL_RESULT], id="anthropic-empty-input-after-tool-result"),
    pytest.param("gemini", "", TOOL_CALL_HISTORY + [TOOL_RESULT], id="gemini-empty-input-after-tool-result"),
    pytest.param("ollama", "", None, id="ollama-takes-empty-content"),
    pytest.param("dashscope", "", None, id="dashscope-takes-empty-content"),
    pytest.param("zhipu", "", None, id="zhipu-takes-empty-content"),
]


@pytest.mark.parametrize(("dialect", "input", "history"), EMPTY_ALLOWED_CASES)
def test_turns_without_text_that_the_api_accepts_still_render(dialect: Format, input: Any, history: Any) -> None:
    body = brief().generate_prompt(input, history=history, format=dialect)
    assert body


TWO_TEXT_PARTS = {"role": "user", "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}

TEXT_PARTS_CASES = [
    pytest.param("ollama", {"role": "user", "content": "A\nB"}, id="ollama"),
    pytest.param("dashscope", {"role": "user", "content": "A\nB"}, id="dashscope"),
]


@pytest.mark.parametrize(("dialect", "expected"), TEXT_PARTS_CASES)
def test_text_parts_join_with_a_newline_as_model_templates_join_them(
    dialect: Format, expected: dict[str, Any]
) -> None:
    assert last_message(brief().generate_prompt(TWO_TEXT_PARTS, format=dialect)) == expected
    from prompter.formats.model_format import ModelFormat

    assert "A\nB" in brief().generate_prompt(TWO_TEXT_PARTS, model_format=ModelFormat.get("qwen2.5"))


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
def test_text_parts_of_a_system_message_join_with_a_newline(dialect: Format) -> None:
    system = {"role": "system", "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}
    body = ChatPrompter(system="").generate_prompt("q", history=[system], format=dialect)
    text = body["system"] if dialect == "anthropic" else body["system_instruction"]["parts"][0]["text"]
    assert text == "A\nB"

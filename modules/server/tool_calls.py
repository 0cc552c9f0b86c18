"""A conversation's tool calls and tool messages: each call answered once, each answer to a call.

OpenAI refuses a conversation where they do not pair up (a call without its result, a result for
no call, an id given twice); so does this server, naming the message at fault: rendered, such a
conversation is one the model never had.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from modules.server.errors import HTTPError

__all__ = ["check_tool_replies"]


def check_tool_replies(messages: Sequence[Mapping[str, Any]]) -> None:
    """400 for a tool call left unanswered or a tool message that answers no tool call, as OpenAI answers them.

    *messages* are :func:`message_dict`'s. An assistant message with ``tool_calls``
    must be followed by one tool message per call, each naming its call by
    ``tool_call_id`` (in any order): a call without its result would be rendered
    as a conversation the model never had, and a result the model never asked for
    as the answer to a call it did not make. Two calls of one message with one id,
    or two tool messages answering one call, are refused too (OpenAI: "Duplicate
    value for 'tool_call_id'"): which result answers which call would be a guess.
    A tool message at fault is named before a call left unanswered.
    """
    calls: dict[str, int | None] = {}  # the ids the current run of tool messages may answer -> answered where
    asked = 0  # the index of the assistant message that made those calls
    unanswered: list[tuple[dict[str, int | None], int]] = []  # checked once every tool message has been
    for i, message in enumerate(messages):
        if message["role"] != "tool":
            unanswered.append((calls, asked))
            calls, asked = _call_ids(message, i), i
            continue
        where = f"messages[{i}]"
        call_id = message.get("tool_call_id")
        if not call_id:
            raise HTTPError(
                400,
                f"{where}: a tool message needs its tool_call_id, the id of the tool call it answers",
                param=f"{where}.tool_call_id",
            )
        if not calls:
            raise HTTPError(
                400,
                f"{where}: a tool message must answer a tool call of the assistant message before it "
                "(an assistant message with tool_calls, then one tool message per call)",
                param=f"{where}.role",
            )
        if call_id not in calls:
            ids = ", ".join(repr(c[:100]) for c in list(calls)[:8])
            raise HTTPError(
                400,
                f"{where}.tool_call_id: {call_id[:100]!r} names no tool call of messages[{asked}] (its ids: {ids})",
                param=f"{where}.tool_call_id",
            )
        first = calls[call_id]
        if first is not None:
            raise HTTPError(
                400,
                f"{where}.tool_call_id: duplicate value {call_id[:100]!r}: messages[{first}] already answers "
                "that tool call; send one tool message per call (merge the two results into one)",
                param=f"{where}.tool_call_id",
            )
        calls[call_id] = i
    unanswered.append((calls, asked))
    for calls, asked in unanswered:
        _check_answered(calls, asked)


def _call_ids(message: Mapping[str, Any], index: int) -> dict[str, int | None]:
    """The ids of the tool calls *message* (``messages[index]``) makes, none answered yet; 400 for an id
    two of its calls share (a tool message could not say which of them it answers)."""
    made = (message.get("tool_calls") or ()) if message["role"] == "assistant" else ()
    first: dict[str, int] = {}  # id -> the index of the call that has it
    for j, call in enumerate(made):
        if call["id"] in first:
            at = f"messages[{index}].tool_calls[{j}].id"
            raise HTTPError(
                400,
                f"{at}: duplicate value {call['id'][:100]!r}, which messages[{index}].tool_calls"
                f"[{first[call['id']]}] has too; give each tool call its own id",
                param=at,
            )
        first[call["id"]] = j
    return dict.fromkeys(first)


def _check_answered(calls: Mapping[str, int | None], asked: int) -> None:
    """400 unless every call of ``messages[asked]`` has had its tool message."""
    missing = [c for c, answered in calls.items() if answered is None]
    if missing:
        where = f"messages[{asked}].tool_calls"
        ids = ", ".join(repr(c[:100]) for c in missing[:8]) + (", ..." if len(missing) > 8 else "")
        raise HTTPError(
            400,
            f"{where}: an assistant message with tool_calls must be followed by one tool message per call; "
            f"no tool message answers {ids} (add a tool message with that tool_call_id after it, "
            "or drop the call)",
            param=where,
        )

"""Multi-agent prompt strategies: how a conversation among several speakers reaches one API.

A conversation is rearranged here, before any dialect renders it, in three steps:

1. **Point of view** (``as_agent="Alice"``): Alice's turns become assistant turns and every
   other named speaker's turns user turns, each keeping its ``name``. Unnamed turns, tool
   calls and tool results keep their roles (a tool exchange belongs to whoever made it).
2. **Strategy**:

   * ``"chat"`` keeps the turns. Where the dialect needs user and assistant to alternate
     (Anthropic, Gemini, DashScope) consecutive turns of one role are merged, but only turns
     of one speaker: when turns of *different* speakers would merge, or when the dialect
     needs a final user turn (Gemini, DashScope) and there is none, or wants the user to speak
     first (Gemini, DashScope) and the assistant does, it falls back to
     ``"multi_agent"``, as AgentScope's ``format_chat`` does (and so when system messages are all
     there is: Anthropic's ``messages`` may not be empty); so it does when a named
     speaker's assistant turn carries media that the dialect's assistant turns cannot carry
     (OpenAI, GLM, Anthropic, DashScope): the image then reaches the model in the user turn;
   * ``"multi_agent"`` merges everything after the system prompt into one user message:
     the history header and one ``name: text`` line per message (Anthropic: per text block;
     DashScope under 0.1.x's header: none for a message with empty text, as AgentScope 0.1.x's
     formatters write them), the media of every message after the text (beside it as
     ``images`` for Ollama);
   * ``"auto"`` is ``"chat"`` when at most two speakers talk (the speaker being the name, or
     the role when there is none), else ``"multi_agent"`` -- AgentScope's ``format_auto``
     as its docstring describes it (its code counts messages, not speakers).

3. The per-dialect defaults mirror AgentScope's per-API formatters: ``openai`` is ``"chat"``
   (it has a ``name`` field, so speakers never need merging), ``ollama_generate`` is
   always one prompt, and the other dialects default to ``"auto"``. The text format of a
   local model changes only when a strategy or a point of view is asked for.

Like AgentScope, Gemini and Ollama put the system prompt in the merged text (Ollama in a
system message carrying the whole conversation), and so does OpenAI under 0.0.x's header
(``LEGACY_HEADER``), as 0.0.x's LiteLLM wrapper did; the other dialects keep their system field.

Why this file is long: the three steps are one algorithm (the strategy's decision reads the same
speakers, turns and media the merge writes), and each dialect's rules for both sit together here.

>>> from prompter.messages import Message
>>> conv = Conversation(system="Be brief.", history=(
...     Message("assistant", "Hi.", name="Bob"), Message("assistant", "Hello!", name="Alice")), input="Go on")
>>> arrange(conv, "dashscope", "multi_agent").turn()[0].content
'## Conversation History\\nBob: Hi.\\nAlice: Hello!\\nuser: Go on'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Literal

from prompter.conversation import Conversation
from prompter.errors import MessageError, PromptTypeError, PromptValueError
from prompter.messages import ContentPart, Message
from prompter.render.common import ResultNames

__all__ = [
    "DEFAULT_HEADER",
    "LEGACY_HEADER",
    "STRATEGIES",
    "Strategy",
    "arrange",
    "arrange_text",
    "checked_options",
    "exact_options",
    "point_of_view",
    "speaker_of",
    "text_as_parts",
]

Strategy = Literal["chat", "multi_agent", "auto"]
PartCheck = Callable[[ContentPart, str], None]
STRATEGIES = frozenset(("chat", "multi_agent", "auto"))
DEFAULT_HEADER = "## Conversation History"
"""AgentScope 0.1.x's header; ``"## Dialogue History"`` is 0.0.x's."""
LEGACY_HEADER = "## Dialogue History"
"""AgentScope 0.0.x's header: asking for it asks for 0.0.x's rendering (see :func:`text_as_parts`)."""

# dialect -> (needs alternating user/assistant turns, needs a final user turn)
_NEEDS: dict[str, tuple[bool, bool]] = {
    "anthropic": (True, False),
    "gemini": (True, True),
    "dashscope": (True, True),
}
# dialects whose conversation must open on a user turn ("The user must speak in the beginning and end of the
# input messages list", AgentScope's documentation of both wrappers; Gemini answers a model turn first with 400:
# "function call turn comes immediately after a user turn or after a function response turn")
_USER_FIRST = frozenset(("gemini", "dashscope"))
# the dialects whose 0.0.x wrapper writes the history header over an empty history ("header\n"); 0.0.x's
# Ollama chat and LiteLLM wrappers, and 0.1.x's formatters but DashScope's, leave it out
_HEADER_OVER_NOTHING_0_0 = frozenset(("dashscope", "zhipu", "gemini", "ollama_generate"))
# dialects whose assistant turns take no image, audio or video
_NO_ASSISTANT_MEDIA = frozenset(("openai", "zhipu", "anthropic", "dashscope"))
# the role each dialect sends a tool result under, for the alternation check
_TOOL_ROLE = {"anthropic": "user", "gemini": "user"}
# where the system prompt goes under multi_agent: "field" (the dialect's own), "text", "system_message"
_SYSTEM_PLACE = {"gemini": "text", "ollama": "system_message", "ollama_generate": "text"}


_OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]+")  # OpenAI's pattern for messages[].name since 2024


def checked_options(strategy: object, history_header: object, as_agent: object) -> None:
    """Type and value checks for the three options, with the remedy.

    Only the type and the stored characters are read, never a method of the value: a str subclass's
    ``__eq__`` or an object's ``__repr__`` is the caller's code and may raise.
    """
    if strategy is not None and (
        not issubclass(type(strategy), str) or str.__str__(strategy) not in STRATEGIES
    ):
        raise PromptValueError(
            f"strategy: expected one of 'chat', 'multi_agent', 'auto' (or None), got {_shown_option(strategy)}"
        )
    if history_header is not None and not issubclass(type(history_header), str):
        raise PromptTypeError(f"history_header: expected str, got {type(history_header).__name__}")
    if as_agent is not None and (not issubclass(type(as_agent), str) or not str.__len__(as_agent)):  # type: ignore[arg-type]
        raise PromptTypeError(f"as_agent: expected a speaker's name (a non-empty str), got {_shown_option(as_agent)}")


def exact_options(
    strategy: object, history_header: object, as_agent: object
) -> tuple[Strategy | None, str | None, str | None]:
    """The three options checked, each an exact ``str`` (a str subclass's overrides are never called later)."""
    checked_options(strategy, history_header, as_agent)
    exact = [None if value is None else str.__str__(value) for value in (strategy, history_header, as_agent)]
    return exact[0], exact[1], exact[2]  # type: ignore[return-value]


def _shown_option(value: object) -> str:
    if issubclass(type(value), str):
        return repr(str.__str__(value))[:60]
    return f"a {type(value).__name__}"


def text_as_parts(strategy: str | None, history_header: str | None) -> bool:
    """Whether text goes as a list of content parts in the dialects whose AgentScope 0.1.x formatter
    writes it so (Anthropic, DashScope, OpenAI): when a strategy is asked for (AgentScope's formatters are
    what the strategies reproduce), unless the header is 0.0.x's, whose wrappers sent strings.
    Without a strategy a body keeps its dialect's usual form."""
    return strategy is not None and history_header != LEGACY_HEADER


def _messages(conv: Conversation) -> list[Message]:
    from prompter.render.common import conversation_messages

    return [message for _, message in conversation_messages(conv)]


def speaker_of(message: Message) -> str:
    """Who said it: the message's name, else its role (a tool result: the function's name, else "tool")."""
    return message.name or message.role


def point_of_view(conv: Conversation, agent: str) -> Conversation:
    """``conv`` as ``agent`` sees it: its turns assistant turns, other named speakers' turns user turns."""

    def seen(message: Message) -> Message:
        if message.role not in ("user", "assistant") or message.name is None or message.tool_calls:
            return message
        role: Literal["assistant", "user"] = "assistant" if message.name == agent else "user"
        return message if role == message.role else message._replace(role=role, content_null=False)

    history = tuple(seen(turn) if isinstance(turn, Message) else turn for turn in conv.history)
    return conv._replace(history=history, current=tuple(seen(m) for m in conv.current))


def _named_assistant_media(messages: list[Message]) -> bool:
    return any(
        m.role == "assistant"
        and m.name is not None
        and not isinstance(m.content, str)
        and any(part.type != "text" for part in m.content)
        for m in messages
    )


def _name_refused(messages: list[Message], dialect: str) -> bool:
    """A speaker's name the API would answer with a 400 (OpenAI: ``^[a-zA-Z0-9_-]+$``, so not "Dr Alice")."""
    if dialect != "openai":
        return False
    return any(m.name is not None and m.role != "tool" and not _OPENAI_NAME.fullmatch(m.name) for m in messages)


def _needs_merge(messages: list[Message], dialect: str, has_label: bool) -> bool:
    """Whether ``"chat"`` must fall back to ``"multi_agent"`` for this dialect."""
    if _name_refused(messages, dialect):
        return True  # the name field cannot carry this speaker: keep it in the text, as "name: text"
    if dialect in _NO_ASSISTANT_MEDIA and _named_assistant_media(messages):
        return True  # an agent's shared image can reach the model only inside a user turn
    alternate, user_last = _NEEDS.get(dialect, (False, False))
    tool_role = _TOOL_ROLE.get(dialect, "tool")
    turns = [m for m in messages if m.role != "system"]
    if dialect in _USER_FIRST and turns and turns[0].role == "assistant":
        return True  # the API wants a user turn first: the merged history is one
    if alternate:
        # the messages that become one API turn (a tool result joins the user turn where the dialect sends
        # it as one) must share one speaker; the result itself is the API's own shape and says nothing
        role, speakers = "", set[str | None]()
        for message in turns:
            turn_role = tool_role if message.role == "tool" else message.role
            if turn_role != role:
                role, speakers = turn_role, set()
            if message.role != "tool":
                speakers.add(message.name)
                if len(speakers) > 1:
                    return True
    if has_label:
        return False
    if not turns:
        return alternate  # system messages alone: these APIs take no empty conversation (Anthropic: messages: [])
    return user_last and turns[-1].role not in ("user", "tool")


def _unnamed(conv: Conversation) -> bool:
    """No turn names a speaker (a tool result's name is its function's), so at most the two roles talk."""
    for turn in conv.history:
        if type(turn) is not tuple and turn.name is not None and turn.role != "tool":  # type: ignore[union-attr]
            return False
    return all(m.name is None or m.role == "tool" for m in conv.current)


def _lacks_final_user_turn(conv: Conversation, dialect: str) -> bool:
    """The dialect needs the conversation to end on a user turn (or tool results) and it does not; or it
    needs alternating turns (Anthropic too) and system messages are all there is, so no turn at all."""
    alternate, user_last = _NEEDS.get(dialect, (False, False))
    if not alternate or conv.label is not None:
        return False
    for message in reversed(conv.turn()):
        if message.role != "system":
            return user_last and message.role not in ("user", "tool")
    for turn in reversed(conv.history):
        if type(turn) is tuple:
            return user_last  # a (question, answer) pair ends on the answer
        if turn.role != "system":
            return user_last and turn.role not in ("user", "tool")
    return True  # system messages alone: no user turn at all


def _opens_on_assistant_turn(conv: Conversation, dialect: str) -> bool:
    """The dialect needs the conversation to open on a user turn and its first turn is the assistant's."""
    if dialect not in _USER_FIRST:
        return False
    for turn in conv.history:
        if type(turn) is tuple:
            return False  # a (question, answer) pair opens on the question
        if turn.role != "system":  # type: ignore[union-attr]
            return turn.role == "assistant"  # type: ignore[union-attr]
    for message in conv.turn():
        if message.role != "system":
            return message.role == "assistant"
    return False


def _said(messages: list[Message]) -> list[Message]:
    """``messages`` without a trailing empty unnamed user turn after a user turn (``generate_prompt(None,
    history=...)``'s): it says nothing (alternating dialects fold it into that turn), so it is no speaker."""
    while len(messages) > 1 and messages[-2].role == "user" and messages[-1].role == "user":
        last = messages[-1]
        if last.name is not None or last.tool_calls or _text(last.content) or _media(last):
            break
        messages = messages[:-1]
    return messages


def _speakers(messages: list[Message]) -> int:
    return len({speaker_of(m) for m in messages if m.role in ("user", "assistant")})


def _text(content: str | tuple[ContentPart, ...]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if part.type == "text")


def _speaker_label(message: Message, where: str) -> str:
    """The speaker as a line prefix; a name spanning lines could forge another speaker's line."""
    name = speaker_of(message)
    if len((name + ".").splitlines()) > 1:  # any line boundary str.splitlines knows, trailing ones too
        raise MessageError(
            f"{where}.name {name[:40]!r}: a speaker's name must be one line (it starts a 'name: text' line of "
            "the merged history); remove the line break"
        )
    return name


def _lines(
    messages: list[Message], dialect: str, header: str, wheres: list[str]
) -> tuple[list[str], list[ContentPart]]:
    """One ``name: text`` line per message (tool calls and results as tagged JSON) and the media parts
    (``wheres``: where the caller gave each message, for an error).

    Two dialects follow their AgentScope 0.1.x formatter where it differs: Anthropic's writes one
    line per text block of a message, and DashScope's (not 0.0.x's wrappers, whose header is
    ``LEGACY_HEADER``) writes no line for a message whose text is empty."""
    per_block = dialect == "anthropic"
    skip_empty = dialect == "dashscope" and header != LEGACY_HEADER
    lines: list[str] = []
    media: list[ContentPart] = []
    # a tool result names its function as AgentScope's blocks do: an OpenAI-style result carries only the
    # id of its call, so the name is the call's, as every dialect's renderer finds it
    functions = ResultNames(zip(wheres, messages))
    for message, where in zip(messages, wheres):
        if message.role == "tool":
            text = _text(message.content)
            name = functions.of(message)
            result = {"type": "tool_result", "id": message.tool_call_id, "name": name, "output": text}
            lines.append(f"<tool_result>{json.dumps(result, ensure_ascii=False)}</tool_result>")
            media.extend(_media(message))  # a result's image (a screenshot) is sent too, never lost silently
            continue
        if isinstance(message.content, str):
            texts = [message.content]
        else:
            texts = [part.text for part in message.content if part.type == "text"]
        said = any(texts)
        # an empty text is still a turn: AgentScope writes "Bob: " (0.1.x skips only a message
        # with no text block at all, as a tool call alone is; its DashScope formatter one with no text)
        if said or (texts and not message.tool_calls and not skip_empty):
            label = _speaker_label(message, where)
            lines.extend(f"{label}: {text}" for text in (texts if per_block else ["\n".join(texts)]))
        for call in message.tool_calls:
            use = {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            lines.append(f"<tool_use>{json.dumps(use, ensure_ascii=False)}</tool_use>")
        media.extend(_media(message))
    return lines, media


def _media(message: Message) -> list[ContentPart]:
    """The image, audio and video parts of ``message``."""
    return [] if isinstance(message.content, str) else [part for part in message.content if part.type != "text"]


def multi_agent(conv: Conversation, dialect: str, header: str, check: PartCheck | None = None) -> Conversation:
    """The conversation as a system prompt and one user message of ``name: text`` lines."""
    from prompter.render.common import NO_CACHE_MARKS, conversation_messages, media_parts, refuse_cache_marks

    located = conversation_messages(conv._replace(label=None))  # errors name the caller's places, lost once merged
    if dialect != "text":  # a local model's text never carries marks
        refuse_cache_marks(conv, located, dialect, texts_only=dialect not in NO_CACHE_MARKS)
    if check is not None:
        for where, part in media_parts(located):
            check(part, where)
    wheres, messages = [where for where, _ in located], [message for _, message in located]
    first_system, first_media = "", []
    if messages and messages[0].role == "system" and not conv.system_text:
        # AgentScope: a leading system Msg is the system prompt; its media go with the others, after the text
        first_system, first_media, messages = _text(messages[0].content), _media(messages[0]), messages[1:]
        wheres = wheres[1:]
    system = conv.system_text or first_system
    lines, media = _lines(messages, dialect, header, wheres)
    media = first_media + media
    place = _SYSTEM_PLACE.get(dialect, "field")
    if dialect == "openai" and header == LEGACY_HEADER:
        # 0.0.x's one merged OpenAI-format body (LiteLLMChatWrapper) is a single user message that
        # starts with the system prompt; its OpenAI and PostAPI wrappers keep the turns instead
        place = "text"
    components = [system if system.endswith("\n") else system + "\n"] if system and place != "field" else []
    if lines:
        components += [header, *lines]
    elif dialect in (_HEADER_OVER_NOTHING_0_0 if header == LEGACY_HEADER else ("dashscope",)):
        components += [header, ""]  # "header\n", as these wrappers and 0.1.x's DashScope formatter write it
    text = "\n".join(components)
    content: str | tuple[ContentPart, ...] = text
    if media:
        text_part = ContentPart("text", text)
        # DashScope: media before the text, as AgentScope's code writes it in 0.0.x and 0.1.x alike (its
        # documentation shows the text first; the recorded outputs in tests/render/data/agentscope.json decide)
        content = (*media, text_part) if dialect == "dashscope" else (text_part, *media)
    role: Literal["user", "system"] = "system" if place == "system_message" else "user"
    if dialect == "text" and conv.system_text:
        # a local model's layout places the system prompt and the instruction itself, each in its field
        turn = (Message(role, content),)
        return Conversation(conv.system, conv.instruction, conv.tools, current=turn, label=conv.label)
    return Conversation(
        system=system if place == "field" else "",
        tools=conv.tools,
        current=(Message(role, content),),
        label=conv.label,
    )


def arrange(
    conv: Conversation,
    dialect: str,
    strategy: str | None = None,
    history_header: str | None = None,
    as_agent: str | None = None,
    check: PartCheck | None = None,
) -> Conversation:
    """``conv`` rearranged for ``dialect`` ("text" for a local model) under the options; ``check(part, where)``
    refuses a media part the dialect can send nowhere, run before the messages are merged into one."""
    if as_agent is not None:
        conv = point_of_view(conv, as_agent)
    if strategy is None:
        if dialect == "ollama_generate":
            strategy = "multi_agent"
        elif dialect == "text":
            return conv
        else:
            strategy = "chat" if dialect == "openai" else "auto"
    header = DEFAULT_HEADER if history_header is None else history_header
    if strategy == "multi_agent" or dialect == "ollama_generate":
        return multi_agent(conv, dialect, header, check)
    if _unnamed(conv) and not _lacks_final_user_turn(conv, dialect) and not _opens_on_assistant_turn(conv, dialect):
        return conv  # the common case, decided without building the messages: the roles are the speakers
    messages = _said(_messages(conv))
    if (strategy == "auto" and _speakers(messages) > 2 and dialect != "openai") or _needs_merge(
        messages, dialect, conv.label is not None
    ):
        return multi_agent(conv, dialect, header, check)
    return conv


def arrange_text(
    conv: Conversation, strategy: str | None, history_header: str | None, as_agent: str | None
) -> Conversation:
    """:func:`arrange` for the text format of a local model, once the options are checked."""
    checked_options(strategy, history_header, as_agent)
    return arrange(conv, "text", strategy, history_header, as_agent)

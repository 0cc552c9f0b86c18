"""The prompts of an API model: a dataset's turns, sent as the chat messages an online model takes.

OpenCompass writes an API model's prompt with its ``APITemplateParser``: turns
(``[{"role": "HUMAN" | "BOT" | "SYSTEM", "prompt": ...}]``) that its API models send as
chat messages (system, user, assistant), where a local model's parser writes one string.
An ``OnlineChatModule`` whose meta template has a ``round`` (or is the list form) is
asked the same way here: its Gen job's ``origin_prompt`` is those turns, as in
OpenCompass's predictions, and they go out as messages. Without a meta template an
API model reads the one string, as upstream's does. A local model configured as
OpenCompass's ``HuggingFacewithChatTemplate`` is asked in turns too, as upstream asks it:
its meta template (by default upstream's, where ``SYSTEM`` turns are ``HUMAN``; one whose
roles all have an ``api_role``) writes the turns, and the model's own chat template writes
them for it (``TrainableModule.prepare``).

>>> from prompter.templates import MetaTemplate, PromptList
>>> meta = MetaTemplate(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)],
...                     reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM")])
>>> turns = api_prompt(meta, PromptList([dict(role="SYSTEM", prompt="Be brief."), dict(role="HUMAN", prompt="1+1=?")]))
>>> api_input(turns)
[{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': '1+1=?'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modules.errors import ModuleConfigError
from prompter.templates import MetaTemplate
from prompter.templates.meta_template import Mode, api_to_messages

__all__ = [
    "CHAT_TEMPLATE_META", "CHAT_TEMPLATE_TYPES", "api_input", "api_prompt", "asks_in_turns", "chat_template_input",
    "model_type",
]  # fmt: skip

CHAT_TEMPLATE_TYPES = frozenset({"HuggingFacewithChatTemplate"})
"""OpenCompass's local model types that write a Gen prompt's turns with the model's chat template."""

CHAT_TEMPLATE_META: dict[str, Any] = {
    "round": [
        {"role": "HUMAN", "api_role": "HUMAN"},
        {"role": "SYSTEM", "api_role": "HUMAN"},  # as upstream: a SYSTEM turn is the user's
        {"role": "BOT", "api_role": "BOT", "generate": True},
    ]
}
"""The meta template OpenCompass's ``HuggingFacewithChatTemplate`` uses when its config gives none."""


def model_type(module_type: object) -> str:
    """The class name a model config's ``type`` gives (a class, or a name read by its last dotted part)."""
    if isinstance(module_type, type):
        return module_type.__name__
    if isinstance(module_type, str):
        return module_type.strip().rpartition(".")[2]
    return ""


def asks_in_turns(module_type: object, meta: MetaTemplate) -> bool:
    """Whether a model of ``module_type`` (a model config's ``type``) with ``meta`` is asked in turns.

    A chat-template model whose meta template is written for text (roles without ``api_role``, which
    upstream cannot parse) reads the text that meta template writes, as any local model does."""
    name = model_type(module_type)
    if name in CHAT_TEMPLATE_TYPES:
        roles = [*meta.round, *meta.reserved_roles]
        return bool(meta.messages) or (bool(roles) and all(role.api_role is not None for role in roles))
    return name == "OnlineChatModule" and bool(meta.round or meta.messages)


def api_prompt(meta: MetaTemplate, prompt: Any, mode: Mode = "gen") -> str | list[dict[str, Any]]:
    """``meta.parse_api(prompt, mode)``, checked to be something an API model can be sent."""
    turns: Any = meta.parse_api(prompt, mode)
    if isinstance(turns, str):
        return turns  # compat mode: upstream passes a string prompt through as it is
    for index, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            raise ModuleConfigError(
                f"the API prompt's item {index} is {turn!r}, not a turn: in compat mode the meta template's begin "
                "stands alone before the turns, which no API model can be sent (OpenCompass's fail on it too); "
                "drop the meta template's begin, or render without compat"
            )
    out = [dict(turn) for turn in turns]
    api_input(out)  # a role no chat API has (UnknownRoleError) is said while rendering, before any request
    return out


def api_input(prompt: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """What a module is called with for ``prompt``: a string as it is, turns as OpenAI-style messages."""
    if isinstance(prompt, str):
        return prompt
    if all("content" in turn for turn in prompt):
        return prompt  # a list-form meta template's messages: already chat messages
    return api_to_messages(prompt)


def chat_template_input(prompt: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """What a chat-template model (``HuggingFacewithChatTemplate``) is given for ``prompt``, as upstream gives
    its chat template the turns: a turn whose prompt is empty is left out, and then consecutive messages of
    one role are joined with ``"\n"`` (an empty example answer does not leave an empty assistant message)."""
    sent = api_input(prompt)
    if isinstance(sent, str) or sent is prompt:
        return sent  # a string, or a list-form meta template's messages: as they are
    out: list[dict[str, Any]] = []
    for message in sent:
        content = message["content"]
        if not content:
            continue
        last = out[-1] if out else None
        if last is not None and last["role"] == message["role"] and isinstance(last["content"], str) and isinstance(
            content, str
        ):
            out[-1] = {**last, "content": last["content"] + "\n" + content}
        else:
            out.append(message)
    return out or sent  # all empty: sent as they are (upstream's apply_chat_template refuses an empty conversation)

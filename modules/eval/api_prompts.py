"""The prompts of an API model: a dataset's turns, sent as the chat messages an online model takes.

OpenCompass writes an API model's prompt with its ``APITemplateParser``: turns
(``[{"role": "HUMAN" | "BOT" | "SYSTEM", "prompt": ...}]``) that its API models send as
chat messages (system, user, assistant), where a local model's parser writes one string.
An ``OnlineChatModule`` whose meta template has a ``round`` (or is the list form) is
asked the same way here: its Gen job's ``origin_prompt`` is those turns, as in
OpenCompass's predictions, and they go out as messages. Without a meta template an
API model reads the one string, as upstream's does.

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

__all__ = ["api_input", "api_prompt", "asks_in_turns"]


def asks_in_turns(module_type: object, meta: MetaTemplate) -> bool:
    """Whether a model of ``module_type`` (a model config's ``type``) with ``meta`` is asked in turns."""
    if isinstance(module_type, type):
        name = module_type.__name__
    elif isinstance(module_type, str):
        name = module_type.strip().rpartition(".")[2]
    else:
        return False
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

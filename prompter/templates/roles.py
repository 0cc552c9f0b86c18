"""RoleSpec: how one role of a meta template is written (``begin + prompt + end``).

Shared by :mod:`prompter.templates.meta_template` and the ModelFormat bridge
(:mod:`prompter.templates.format_bridge`), which is why it lives apart from both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prompter.errors import EvalTemplateError

__all__ = ["API_ROLES", "RoleSpec", "delimiter"]

API_ROLES = ("HUMAN", "BOT", "SYSTEM", "TOOL")
"""The roles an API model accepts (``api_role``)."""

_ROLE_KEYS = frozenset({"role", "begin", "end", "prompt", "generate", "api_role", "gen_begin"})


def delimiter(value: object, where: str) -> str:
    """A begin/end string given as a str or a list of strs (joined); anything else is an error naming ``where``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise EvalTemplateError(
        f"{where}: expected a string or a list of strings, got {value!r}; token ids need a tokenizer, "
        "write the token's text instead"
    )


@dataclass(frozen=True)
class RoleSpec:
    """How one role is written by a model: ``begin + prompt + end``.

    >>> RoleSpec.from_config(dict(role="BOT", begin="BOT: ", end="\\n", generate=True))
    RoleSpec(role='BOT', begin='BOT: ', end='\\n', prompt=None, generate=True, api_role=None, gen_begin=None)
    """

    role: str
    """The name the dataset's turns use (``"HUMAN"``); it is not written itself."""
    begin: str = ""
    """Written before the role's prompt."""
    end: str = ""
    """Written after the role's prompt."""
    prompt: str | None = None
    """A default prompt, used when a round has no turn for this role (None: skip the role)."""
    generate: bool = False
    """Whether this is the role the model plays: in gen mode the prompt stops at its ``begin``."""
    api_role: str | None = None
    """For API models: ``"HUMAN"``, ``"BOT"`` or ``"SYSTEM"``."""
    gen_begin: str | None = None
    """What a gen-mode prompt ends with instead of ``begin`` (None: ``begin``), for models whose
    generation prompt differs from the start of an answer in the history."""

    def __post_init__(self) -> None:
        where = f"role {self.role!r}"
        if not isinstance(self.role, str) or not self.role:
            raise EvalTemplateError(f"role: expected a non-empty string, got {self.role!r}")
        for name in ("begin", "end"):
            if not isinstance(getattr(self, name), str):
                raise EvalTemplateError(f"{where}: {name} must be a string, got {getattr(self, name)!r}")
        for name in ("prompt", "gen_begin"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise EvalTemplateError(f"{where}: {name} must be a string or None, got {getattr(self, name)!r}")
        if not isinstance(self.generate, bool):
            raise EvalTemplateError(f"{where}: generate must be True or False, got {self.generate!r}")
        if self.api_role is not None and self.api_role not in API_ROLES:
            raise EvalTemplateError(f"{where}: api_role must be one of {list(API_ROLES)}, got {self.api_role!r}")

    @classmethod
    def from_config(cls, raw: RoleSpec | Mapping[str, Any], where: str = "role") -> RoleSpec:
        """A RoleSpec from an OpenCompass-style ``dict(role=..., begin=..., end=...)``."""
        if isinstance(raw, RoleSpec):
            return raw
        if not isinstance(raw, Mapping):
            raise EvalTemplateError(f"{where}: expected dict(role=..., begin=..., end=...), got {type(raw).__name__}")
        unknown = sorted(map(str, set(raw) - _ROLE_KEYS))
        if unknown:
            raise EvalTemplateError(f"{where}: unknown key(s) {unknown}; a role has {sorted(_ROLE_KEYS)}")
        role = raw.get("role")
        if not isinstance(role, str) or not role:
            raise EvalTemplateError(f"{where}['role']: expected a non-empty string, got {role!r}")
        prompt = raw.get("prompt")
        if prompt is not None and not isinstance(prompt, str):
            raise EvalTemplateError(f"{where}['prompt']: expected a string, got {type(prompt).__name__}")
        generate = raw.get("generate", False)
        if not isinstance(generate, bool):
            raise EvalTemplateError(f"{where}['generate']: expected True or False, got {generate!r}")
        api_role = raw.get("api_role")
        if api_role is not None and api_role not in API_ROLES:
            raise EvalTemplateError(f"{where}['api_role']: expected one of {list(API_ROLES)}, got {api_role!r}")
        gen_begin = raw.get("gen_begin")
        return cls(
            role=role,
            begin=delimiter(raw.get("begin", ""), f"{where}['begin']"),
            end=delimiter(raw.get("end", ""), f"{where}['end']"),
            prompt=prompt,
            generate=generate,
            api_role=api_role,
            gen_begin=None if gen_begin is None else delimiter(gen_begin, f"{where}['gen_begin']"),
        )

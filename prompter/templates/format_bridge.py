"""A meta template and a ModelFormat are one concept seen from two sides.

===============================  ==========================================
MetaTemplate                     ModelFormat
===============================  ==========================================
``begin``                        ``bos``
reserved ``SYSTEM`` begin / end  ``sos`` / ``eos``
round ``HUMAN`` begin / end      ``soh`` / ``eoh``
round ``BOT`` begin / end        ``soa`` / ``eoa``
``BOT`` ``gen_begin or begin``   ``generation_prompt``
reserved ``TOOL`` begin / end    ``soe`` / ``eoe`` (only when set)
``BOT`` end, stripped            ``stop_words``
===============================  ==========================================

Only the fixed strings travel: a format that renders through its chat template
alone (no derived strings) has no meta template, and a meta template with other
roles, default prompts or an ``end`` has no ModelFormat.

>>> from prompter import ModelFormat
>>> from prompter.templates.meta_template import MetaTemplate
>>> fmt = ModelFormat(sos="<s>", eos="</s>", soh="U:", eoh="\\n", soa="A:", eoa="\\n", generation_prompt="A:")
>>> meta = meta_from_format(MetaTemplate, fmt, None)
>>> [(r.role, r.begin) for r in meta.round + meta.reserved_roles]
[('HUMAN', 'U:'), ('BOT', 'A:'), ('SYSTEM', '<s>')]
>>> format_from_meta(meta, "custom") == fmt
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from prompter.errors import EvalTemplateError
from prompter.templates.roles import RoleSpec

if TYPE_CHECKING:
    from prompter.formats.model_format import ModelFormat


class MetaStrings(Protocol):
    """What the bridge reads of a meta template (a MetaTemplate has it; the bridge need not import it)."""

    @property
    def round(self) -> Sequence[RoleSpec]: ...
    @property
    def reserved_roles(self) -> Sequence[RoleSpec]: ...
    @property
    def begin(self) -> str: ...
    @property
    def end(self) -> str: ...


M = TypeVar("M")

__all__ = ["format_from_meta", "meta_from_format"]

_ROUND = ("HUMAN", "BOT")
_RESERVED = ("SYSTEM", "TOOL")


def meta_from_format(cls: Callable[..., M], fmt: ModelFormat, eos_token_id: int | None) -> M:
    """The meta template for ``fmt``'s fixed strings; see the module docstring."""
    from prompter.formats.model_format import ModelFormat

    if not isinstance(fmt, ModelFormat):
        raise EvalTemplateError(f"fmt: expected a ModelFormat, got {type(fmt).__name__}")
    if fmt.chat_template is not None and not (fmt.soh or fmt.soa or fmt.eoh or fmt.eoa):
        raise EvalTemplateError(
            f"ModelFormat {fmt.name!r} renders through its chat template only (no fixed strings were "
            "derived), so no meta template writes the same bytes; render it with ModelFormat.render"
        )
    gen_begin = None if fmt.generation_prompt == fmt.soa else fmt.generation_prompt
    reserved = [RoleSpec("SYSTEM", fmt.sos, fmt.eos)]
    if fmt.soe or fmt.eoe:
        reserved.append(RoleSpec("TOOL", fmt.soe, fmt.eoe))
    return cls(
        round=[
            RoleSpec("HUMAN", fmt.soh, fmt.eoh),
            RoleSpec("BOT", fmt.soa, fmt.eoa, generate=True, gen_begin=gen_begin),
        ],
        reserved_roles=reserved,
        begin=fmt.bos,
        eos_token_id=eos_token_id,
    )


def format_from_meta(meta: MetaStrings, name: str) -> ModelFormat:
    """The ModelFormat with ``meta``'s strings; see the module docstring."""
    from prompter.formats.model_format import ModelFormat

    roles = {spec.role: spec for spec in meta.round}
    extra = [r for r in roles if r not in _ROUND]
    if extra or set(roles) != set(_ROUND):
        raise EvalTemplateError(
            f"round: a ModelFormat has exactly the roles HUMAN and BOT, this meta template has {list(roles)}"
        )
    reserved = {spec.role: spec for spec in meta.reserved_roles}
    extra = [r for r in reserved if r not in _RESERVED]
    if extra:
        raise EvalTemplateError(f"reserved_roles: {extra} have no ModelFormat counterpart (only SYSTEM and TOOL)")
    for spec in (*meta.round, *meta.reserved_roles):
        if spec.prompt is not None:
            raise EvalTemplateError(f"role {spec.role!r}: a default prompt has no ModelFormat counterpart")
    if meta.end:
        raise EvalTemplateError(f"end: {meta.end!r} has no ModelFormat counterpart (a format has no closing string)")
    human, bot = roles["HUMAN"], roles["BOT"]
    system = reserved.get("SYSTEM", RoleSpec("SYSTEM"))
    tool = reserved.get("TOOL", RoleSpec("TOOL"))
    stop = bot.end.strip()
    return ModelFormat(
        name=name,
        sos=system.begin,
        eos=system.end,
        soh=human.begin,
        eoh=human.end,
        soa=bot.begin,
        eoa=bot.end,
        soe=tool.begin,
        eoe=tool.end,
        generation_prompt=bot.begin if bot.gen_begin is None else bot.gen_begin,
        bos=meta.begin,
        stop_words=(stop,) if stop else (),
    )

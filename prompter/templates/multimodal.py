"""MMPromptTemplate: dialogue templates whose turns carry images, audio and video (AISBench).

A turn writes ``prompt_mm`` instead of ``prompt``: a dict from modality (``text``,
``image``, ``audio``, ``video``) to the content part it becomes, e.g.
``{"type": "image_url", "image_url": {"url": "file://{image}"}}`` (a plain string is
short for that shape). The sample's content field holds its pieces in order, each
tagged::

    <AIS_TEXT_START>What is this?<AIS_CONTENT_TAG><AIS_IMAGE_START>cat.jpg<AIS_CONTENT_TAG>

Each piece becomes one content part, in the sample's order: a text piece fills the
``text`` part (its ``{question}`` slot, named after the content field; other slots
come from the entry), a media piece fills its modality's slot (``{image}``,
``{audio}``, ``{video}``). A content field without tags is one text piece. Pieces
are inserted verbatim.

>>> t = MMPromptTemplate(dict(round=[dict(role="HUMAN", prompt_mm={
...     "text": {"type": "text", "text": "Q: {question}"},
...     "image": {"type": "image_url", "image_url": {"url": "file://{image}"}}})]))
>>> q = "<AIS_TEXT_START>What is this?<AIS_CONTENT_TAG><AIS_IMAGE_START>cat.jpg<AIS_CONTENT_TAG>"
>>> t.generate_item({"question": q}).strip_sections()[0]["prompt"]
[{'type': 'text', 'text': 'Q: What is this?'}, {'type': 'image_url', 'image_url': {'url': 'file://cat.jpg'}}]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prompter.errors import EvalTemplateError, InputTypeError, MissingSlotError
from prompter.templates import compat_aisbench
from prompter.templates.compat import Compat, check_compat
from prompter.templates.dialogue import DIALOGUE_KEYS, TURN_KEYS, Node, compile_turn, emit, marker
from prompter.templates.prompt_list import PromptList
from prompter.templates.slots import Missing, SlotText, check_config_type, check_missing, overlay, snapshot

__all__ = ["CONTENT_TAG", "MODALITY_TAGS", "MMPromptTemplate", "split_content"]

CONTENT_TAG = "<AIS_CONTENT_TAG>"
"""Ends every tagged piece of a multimodal content field."""
MODALITY_TAGS = {
    "text": "<AIS_TEXT_START>",
    "image": "<AIS_IMAGE_START>",
    "audio": "<AIS_AUDIO_START>",
    "video": "<AIS_VIDEO_START>",
}
"""The tag that starts a piece of each modality."""
_PART_KEY = {"text": "text", "image": "image_url", "audio": "audio_url", "video": "video_url"}


def split_content(value: str, field: str = "content") -> list[tuple[str, str]]:
    """The ``(modality, data)`` pieces of a tagged content string, in order.

    >>> split_content("<AIS_TEXT_START>hi<AIS_CONTENT_TAG><AIS_AUDIO_START>a.wav<AIS_CONTENT_TAG>")
    [('text', 'hi'), ('audio', 'a.wav')]
    >>> split_content("no tags at all")
    [('text', 'no tags at all')]
    """
    if not isinstance(value, str):
        raise InputTypeError(f"entry[{field!r}]: expected the tagged content as a str, got {type(value).__name__}")
    if CONTENT_TAG not in value and not any(tag in value for tag in MODALITY_TAGS.values()):
        return [("text", value)]
    pieces: list[tuple[str, str]] = []
    for i, piece in enumerate(value.split(CONTENT_TAG)):
        if not piece.strip():
            continue  # the empty tail after the last tag, or whitespace between pieces
        for modality, tag in MODALITY_TAGS.items():
            if piece.startswith(tag):
                pieces.append((modality, piece[len(tag) :]))
                break
        else:
            raise EvalTemplateError(
                f"entry[{field!r}] piece {i}: {piece[:40]!r} does not start with one of "
                f"{list(MODALITY_TAGS.values())}; end every piece with {CONTENT_TAG}"
            )
    return pieces


class _Part:
    """A content part template: nested dicts and lists whose strings are slot templates."""

    def __init__(self, raw: object, where: str) -> None:
        self.tree = self._compile(raw, where)

    @classmethod
    def _compile(cls, raw: object, where: str) -> Any:
        if isinstance(raw, str):
            return SlotText(raw, where)
        if isinstance(raw, Mapping):
            return {k: cls._compile(v, f"{where}[{k!r}]") for k, v in raw.items()}
        if isinstance(raw, (list, tuple)):
            return [cls._compile(v, f"{where}[{i}]") for i, v in enumerate(raw)]
        if isinstance(raw, (int, float, bool)) or raw is None:
            return raw
        raise EvalTemplateError(f"{where}: expected a content part dict, got {type(raw).__name__}")

    def fill(self, values: Mapping[str, Any], missing: Missing) -> Any:
        def walk(node: Any) -> Any:
            if isinstance(node, SlotText):
                return node.fill(values, missing=missing)
            if isinstance(node, dict):
                return {k: walk(v) for k, v in node.items()}
            if isinstance(node, list):
                return [walk(v) for v in node]
            return node

        return walk(self.tree)


@dataclass(frozen=True)
class _MMTurn:
    role: str
    fallback_role: str | None
    parts: dict[str, _Part]


def _compile_mm_turn(raw: Mapping[str, Any], where: str) -> _MMTurn:
    unknown = sorted(map(str, set(raw) - TURN_KEYS - {"prompt_mm"}))
    if unknown or "prompt" in raw:
        raise EvalTemplateError(
            f"{where}: a multimodal turn has role, prompt_mm and fallback_role, not {unknown or ['prompt']}"
        )
    base = compile_turn({k: v for k, v in raw.items() if k != "prompt_mm"}, where)
    mm = raw["prompt_mm"]
    if not isinstance(mm, Mapping) or not mm:
        raise EvalTemplateError(f"{where}['prompt_mm']: expected a dict from modality to content part, got {mm!r}")
    parts: dict[str, _Part] = {}
    for modality, part in mm.items():
        at = f"{where}['prompt_mm'][{modality!r}]"
        if modality not in MODALITY_TAGS:
            raise EvalTemplateError(f"{at}: unknown modality; expected one of {list(MODALITY_TAGS)}")
        if isinstance(part, str):  # the short form: just the text or the URL
            key = _PART_KEY[modality]
            part = {"type": key, key: part} if modality == "text" else {"type": key, key: {"url": part}}
        parts[modality] = _Part(part, at)
    return _MMTurn(base.role, base.fallback_role, parts)


_MMNode = Node | _MMTurn


class MMPromptTemplate:
    """A dialogue template with multimodal turns; see the module docstring.

    ``content_field`` is the entry field holding the tagged pieces (``"question"`` in
    the AISBench guide); ``missing`` is as for :class:`~prompter.templates.PromptTemplate`.
    """

    __slots__ = ("_sections", "compat", "content_field", "missing", "template")
    template: dict[str, Any]
    """The template as given (a private copy)."""

    def __init__(
        self,
        template: Mapping[str, Any],
        *,
        content_field: str = "question",
        missing: Missing = "error",
        compat: Compat | None = None,
        type: object = None,  # noqa: A002 - the key of a pasted config block
    ):
        check_config_type(type, "MMPromptTemplate")
        if not isinstance(template, Mapping) or "round" not in template or not set(template) <= DIALOGUE_KEYS:
            raise EvalTemplateError(
                f"template: a multimodal template is a dialogue dict(round=[...], begin=..., end=...), got {template!r}"
            )
        self.content_field = content_field
        self.missing = check_missing(missing)
        self.compat = check_compat(compat)
        self._sections: dict[str, tuple[_MMNode, ...]] = {}
        if self.compat is not None:
            # AISBench's shape: pieces from entry['content'], turns keep the key prompt_mm
            self.template = snapshot(template)
            return
        for section in ("begin", "round", "end"):
            if section in template:
                self._sections[section] = self._compile(template[section], f"template[{section!r}]", section)
        self.template = snapshot(template)

    @staticmethod
    def _compile(raw: object, where: str, section: str) -> tuple[_MMNode, ...]:
        items = raw if isinstance(raw, (list, tuple)) else [raw]
        nodes: list[_MMNode] = []
        for i, item in enumerate(items):
            at = f"{where}[{i}]"
            if isinstance(item, Mapping) and "prompt_mm" in item:
                nodes.append(_compile_mm_turn(item, at))
            elif isinstance(item, Mapping):
                nodes.append(compile_turn(item, at, None, None))
            elif isinstance(item, str) and section != "round":
                nodes.append(SlotText(item, at))
            else:
                raise EvalTemplateError(f"{at}: expected a role turn dict, got {type(item).__name__}")
        return tuple(nodes)

    def generate_item(
        self,
        entry: Mapping[str, Any],
        output_field: str | None = None,
        output_field_replace_token: str = "",
    ) -> PromptList:
        """The prompt for ``entry``: multimodal turns become lists of content parts.

        The answer in ``output_field`` is blanked, as for
        :meth:`PromptTemplate.generate_item <prompter.templates.PromptTemplate.generate_item>`.
        """
        if self.compat is not None:
            return compat_aisbench.mm_item(self.template, entry, self.compat)
        if not isinstance(entry, Mapping):
            raise InputTypeError(f"entry: expected a dict of fields, got {type(entry).__name__}")
        values: Mapping[str, Any] = entry
        if output_field is not None:
            values = overlay(entry, output_field, output_field_replace_token)
        out = PromptList()
        for section, nodes in self._sections.items():
            out.append(marker(section, "begin"))
            for node in nodes:
                if isinstance(node, _MMTurn):
                    out.append(self._mm_turn(node, values))
                else:
                    emit(out, (node,), values, "", False, self.missing)
            out.append(marker(section, "end"))
        return out

    def _mm_turn(self, node: _MMTurn, values: Mapping[str, Any]) -> dict[str, Any]:
        if self.content_field not in values:
            raise MissingSlotError(
                f"entry: no content field {self.content_field!r} for the multimodal {node.role!r} turn "
                f"(it has {sorted(map(str, values))})"
            )
        parts = []
        for modality, data in split_content(values[self.content_field], self.content_field):
            part = node.parts.get(modality)
            if part is None:
                raise EvalTemplateError(
                    f"entry[{self.content_field!r}] has a {modality} piece but the {node.role!r} turn's prompt_mm "
                    f"has no {modality!r} part (it has {list(node.parts)})"
                )
            slot = self.content_field if modality == "text" else modality
            parts.append(part.fill(overlay(values, slot, data), self.missing))
        item: dict[str, Any] = {"role": node.role}
        if node.fallback_role is not None:
            item["fallback_role"] = node.fallback_role
        item["prompt"] = parts
        return item

    def __repr__(self) -> str:
        extra = "" if self.compat is None else f", compat={self.compat!r}"
        return f"MMPromptTemplate({self.template!r}, content_field={self.content_field!r}{extra})"

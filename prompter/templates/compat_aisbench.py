"""Parity mode for AISBench's own templates: multimodal (``prompt_mm``) and multi-turn samples.

Multimodal (``MMPromptTemplate(..., compat="aisbench")``): the entry's ``content``
field holds tagged pieces; each text piece fills a copy of the turn's ``text`` part
(its ``{question}``), each image / video / audio piece the ``url`` of a copy of its
part (its ``{image}`` / ``{video}`` / ``{audio}``). Untagged pieces are skipped.
The turn keeps the key ``prompt_mm``, now a list of parts; other turns are copied
unfilled and strings are filled with the whole entry.

Multi-turn (``MultiTurnPromptTemplate(..., compat="aisbench")``): the whole sample
is written once, the ``round`` repeated for each ``(question, answer)`` pair of the
entry (only those two fields fill it; ``begin``/``end`` stay unfilled). The prompt
of turn ``k`` is then everything before the ``k``-th ``BOT`` turn of the round
section, with the sections around it.

>>> full = multi_turn_item({"round": [{"role": "HUMAN", "prompt": "{question}"},
...                                   {"role": "BOT", "prompt": "{answer}"}]},
...                        {"question": ["a", "b"], "answer": ["A", "B"]}, "aisbench")
>>> [str(p) for p in multi_turn_prompts(full, "every_with_gt")]
['"a"', '"a""A""b"']
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prompter.errors import EvalTemplateError, InputTypeError, MissingSlotError
from prompter.templates.compat import Compat, encode, new_prompt_list, pl_format, safe_format
from prompter.templates.prompt_list import PromptItem, PromptList

__all__ = ["mm_item", "multi_turn_item", "multi_turn_prompts", "round_bounds"]

_TAG = "<AIS_CONTENT_TAG>"
_STARTS = {
    "text": "<AIS_TEXT_START>",
    "image": "<AIS_IMAGE_START>",
    "video": "<AIS_VIDEO_START>",
    "audio": "<AIS_AUDIO_START>",
}
_SLOT = {"text": "question", "image": "image", "video": "video", "audio": "audio"}


def _part(mm: Mapping[str, Any], modality: str, data: str) -> Any:
    if modality not in mm:
        raise EvalTemplateError(f"prompt_mm: the content has a {modality} piece but there is no {modality!r} part")
    part = copy.deepcopy(mm[modality])
    if not isinstance(part, dict):
        raise EvalTemplateError(f"prompt_mm[{modality!r}]: expected a content part dict, got {type(part).__name__}")
    values = {_SLOT[modality]: data}
    key = "text" if modality == "text" else f"{modality}_url"
    value = part.get(key)
    if isinstance(value, dict) and modality != "text":
        value["url"] = safe_format(str(value.get("url", "")), values)
    elif isinstance(value, str):
        part[key] = safe_format(value, values)
    else:
        raise EvalTemplateError(f"prompt_mm[{modality!r}]: the part has no {key!r} string to fill")
    return part


def mm_item(template: Mapping[str, Any], entry: Mapping[str, Any], compat: Compat) -> PromptList:
    """AISBench's ``MMPromptTemplate.generate_item``."""
    if not isinstance(entry, Mapping):
        raise InputTypeError(f"entry: expected a dict of fields, got {type(entry).__name__}")
    encoded = encode(template, ice=False, compat=compat)
    out = new_prompt_list(compat)
    for item in encoded:
        if isinstance(item, str):
            out.append(safe_format(item, entry))
            continue
        new = copy.deepcopy(item)
        mm = item.get("prompt_mm")
        if isinstance(mm, Mapping):
            if "content" not in entry:
                raise MissingSlotError(
                    "entry: a prompt_mm turn takes its pieces from the field 'content', which is missing"
                )
            content = entry["content"]
            if not isinstance(content, str):
                raise InputTypeError(
                    f"entry['content']: expected the tagged pieces as a str, got {type(content).__name__}"
                )
            parts = []
            for piece in content.split(_TAG):
                for modality, tag in _STARTS.items():
                    if piece.startswith(tag):
                        parts.append(_part(mm, modality, piece.replace(tag, "")))
                        break
            new["prompt_mm"] = parts
        out.append(new)
    return out


def round_bounds(prompt: Sequence[PromptItem]) -> tuple[int, int]:
    """AISBench's ``get_round_index``: the slice of the (last) round section's items."""
    left, right = 1, -1
    for i, item in enumerate(prompt):
        if isinstance(item, dict) and item.get("section") == "round":
            if item.get("pos") == "begin":
                left = i + 1
            elif item.get("pos") == "end":
                right = i
    return left, right


def multi_turn_item(template: Mapping[str, Any], entry: Mapping[str, Any], compat: Compat) -> PromptList:
    """AISBench's ``MultiTurnPromptTemplate.generate_item``: the whole sample, every turn answered."""
    if not isinstance(entry, Mapping):
        raise InputTypeError(f"entry: expected a dict of fields, got {type(entry).__name__}")
    for name in ("question", "answer"):
        if not isinstance(entry.get(name), (list, tuple)):
            raise MissingSlotError(
                f"entry[{name!r}]: AISBench multi-turn samples hold one {name} per turn in a list, "
                f"got {entry.get(name)!r}"
            )
    encoded = encode(template, ice=False, compat=compat)
    if isinstance(encoded, str):
        raise EvalTemplateError("template: a multi-turn template is a dialogue dict(round=[...])")
    left, right = round_bounds(encoded)
    one_round = list(encoded[left:right])
    out = new_prompt_list(compat, encoded[:left])
    for question, answer in zip(entry["question"], entry["answer"], strict=False):
        out.extend(pl_format(one_round, {"question": question, "answer": answer}, compat))
    out.extend(encoded[right:])
    return out


def multi_turn_prompts(
    full: Sequence[PromptItem],
    mode: str,
    respond: Callable[[PromptList], str] | None = None,
    answer_role: str = "BOT",
    compat: Compat = "aisbench",
) -> list[PromptList]:
    """The prompts AISBench's multi-turn inferencer sends for one sample, in order.

    ``every_with_gt``: one per answer turn, earlier turns with the ground truth;
    ``last``: only the last; ``every``: like ``every_with_gt`` but each answer turn is
    replaced by ``respond(prompt)`` before the next prompt is built.
    """
    if mode not in ("every", "every_with_gt", "last"):
        raise EvalTemplateError(f"mode: expected 'every', 'every_with_gt' or 'last', got {mode!r}")
    if mode == "every" and respond is None:
        raise EvalTemplateError("mode 'every' needs respond, the model call that answers each turn")
    left, right = round_bounds(full)
    head, chat, tail = list(full[:left]), copy.deepcopy(list(full[left:right])), list(full[right:])
    answers = [i for i, item in enumerate(chat) if isinstance(item, dict) and item.get("role") == answer_role]
    if not answers:
        raise EvalTemplateError(f"the sample has no {answer_role!r} turn to ask for")
    if mode == "last":
        return [new_prompt_list(compat, head + chat[: answers[-1]] + tail)]
    out = []
    for i in answers:
        prompt = new_prompt_list(compat, head + copy.deepcopy(chat[:i]) + tail)
        out.append(prompt)
        if mode == "every" and respond is not None:
            reply = respond(prompt)
            if not isinstance(reply, str):
                raise InputTypeError(f"respond(): expected the answer as a str, got {type(reply).__name__}")
            turn = chat[i]
            if isinstance(turn, dict):
                turn["prompt"] = reply
    return out

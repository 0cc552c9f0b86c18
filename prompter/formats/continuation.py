"""``continue_final_message``: a prompt that ends inside the final message, as transformers cuts it.

The final message's text gets :data:`CONTINUE_TAG` appended (transformers' own tag), the
conversation is rendered as usual with no generation prompt, and the output is cut where
the tag starts (or, where the template strips trailing space, right after the text), so
the model continues that message instead of starting a new one.

``continue_final_message`` may name the field to continue, as transformers allows
(``"reasoning_content"``: the model continues its reasoning); ``True`` is ``"content"``.
A reasoning field is tagged under each of its aliases that holds the same text.
"""

from __future__ import annotations

from typing import Any

from prompter.errors import MessageError, PromptTypeError, TemplateError
from prompter.formats.rendered import Rendered

__all__ = ["CONTINUE_TAG", "continue_final", "continued_field", "mark_final"]

CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
"""Appended to the final message's text to find where it ends in the output (transformers' own tag)."""

_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def continued_field(value: Any) -> str | None:
    """The field ``continue_final_message=value`` continues (None: none), or PromptTypeError."""
    if type(value) is bool:
        return "content" if value else None
    if isinstance(value, str):
        return str.__str__(value) or None
    raise PromptTypeError(
        f"continue_final_message: expected True, False or the name of the final message's field to continue "
        f"(such as 'reasoning_content'), got {type(value).__name__}"
    )


def mark_final(
    messages: list[dict[str, Any]], field: str = "content", source: str | None = None
) -> list[dict[str, Any]]:
    """The messages with :data:`CONTINUE_TAG` after the final message's text (its last text part);
    ``source``: the template, which must name ``field`` (transformers refuses one that does not)."""
    if not messages:
        raise MessageError("continue_final_message: the conversation is empty; there is no message to continue")
    final = dict(messages[-1])
    content = (final.get(field) or "") if field == "content" else final.get(field)
    if content is None:
        raise MessageError(f"continue_final_message: the final message has no {field!r} to continue")
    fields = [field]
    if field in _REASONING_FIELDS:  # copied under several names: tag each copy of it
        fields = [name for name in _REASONING_FIELDS if final.get(name) == content]
    if source is not None and field != "content" and not any(name in source for name in fields):
        raise TemplateError(
            f"continue_final_message: this chat template never reads the final message's {field!r}; "
            "continue its 'content' (continue_final_message=True) or send it without continue_final_message"
        )
    if isinstance(content, list):
        parts = list(content)
        for k in range(len(parts) - 1, -1, -1):
            part = parts[k]
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts[k] = {**part, "text": part["text"] + CONTINUE_TAG}
                break
        else:
            raise MessageError("continue_final_message: the final message has no text to continue")
        final[field] = parts
    elif isinstance(content, str):
        for name in fields:
            final[name] = content + CONTINUE_TAG
    else:
        raise MessageError(
            f"continue_final_message: the final message's {field!r} is {type(content).__name__}, not text to continue"
        )
    return [*messages[:-1], final]


def continue_final(rendered: Rendered, messages: list[dict[str, Any]], field: str = "content") -> Rendered:
    """The prompt cut right after the final message's text, as transformers cuts it."""
    text = rendered.text
    tag = CONTINUE_TAG.strip()
    if tag not in text:
        raise TemplateError(
            f"continue_final_message: this chat template does not write the final message's {field!r} "
            f"(role {messages[-1].get('role')!r}) where it can be continued; send it without continue_final_message"
        )
    final = _final_text(messages[-1].get(field))
    if final.strip() not in text:  # transformers refuses this too
        raise TemplateError(
            "continue_final_message: this chat template rewrites the final message's text (the text to "
            f"continue, {final.strip()[:200]!r}, does not appear in the prompt); send it without continue_final_message"
        )
    at = text.rindex(tag)
    cut = at if text[at : at + len(CONTINUE_TAG)] == CONTINUE_TAG else len(text[:at].rstrip())
    spans = tuple((a, min(b, cut)) for a, b in rendered.spans if a < cut)
    return Rendered(text[:cut], spans)


def _final_text(content: Any) -> str:
    """The final message's text as the caller gave it: what :func:`mark_final` tagged, less the tag."""
    if isinstance(content, list):
        for part in reversed(content):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                content = part["text"]
                break
    text = content if isinstance(content, str) else ""
    return text[: -len(CONTINUE_TAG)] if text.endswith(CONTINUE_TAG) else text

"""The page as first served: the state in the link is already rendered into ``#output``.

The script renders again on load and on every edit; rendering here too means the answer is
on the page the moment it loads (and without JavaScript). Every piece of user text goes
through :func:`html.escape` on its way into the markup: it is data, never markup.

>>> html = page_html('<pre id="output"></pre><p id="input-error" hidden></p>', [("input", "<b>hi</b>")])
>>> "&lt;b&gt;hi&lt;/b&gt;" in html and "<b>" not in html
True
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from modules.playground.render import TokenCounter, error_body, render
from modules.playground.state import FIELDS, FieldError, read_state
from prompter.errors import PromptError

__all__ = ["OUTPUT", "page_html"]

OUTPUT = '<pre id="output"'
"""Where the output goes: the opening of ``#output`` in ``index.html`` (its attributes follow)."""


def page_html(template: str, query: Iterable[tuple[str, str]], count_tokens: TokenCounter | None = None) -> str:
    """``template`` with the state of ``query`` (first value of each field, as the script reads it) rendered in."""
    state: dict[str, str] = {}
    for key, value in query:
        if key in FIELDS and key not in state:
            state[key] = value
    if not state:
        return template
    try:
        result = render(read_state(state), count_tokens)
    except (PromptError, FieldError, RecursionError) as exc:
        error = error_body(exc)["error"]
        field = error["field"] if error["field"] in FIELDS else "instruction"
        kind, message = str(error["type"]), str(error["message"])
        words = _text(f"{kind}: {message}")
        html = _fill(template, f' class="is-error" data-error-type="{escape(kind)}"', _text(message))
        box = f'<p class="field-error" id="{field}-error" role="alert" hidden></p>'
        return html.replace(box, f'<p class="field-error" id="{field}-error" role="alert">{words}</p>', 1)
    spans = "".join(f'<span class="seg-{s["kind"]}">{_text(s["text"])}</span>' for s in result["segments"])
    kind = escape(str(result["kind"]))
    return _fill(template, f' data-kind="{kind}"', spans)


def _text(value: str) -> str:
    """*value* as HTML text: escaped, and each carriage return as ``&#13;`` (the HTML parser turns a literal
    CR or CRLF into LF; a character reference survives it, so the DOM holds the output's exact characters)."""
    return escape(value).replace("\r", "&#13;")


def _fill(template: str, attributes: str, content: str) -> str:
    start = template.find(OUTPUT)
    if start < 0:
        return template
    open_end = template.index(">", start)
    close = template.index("</pre>", open_end)
    return (
        template[: start + len(OUTPUT)]
        + attributes
        + template[start + len(OUTPUT) : open_end + 1]
        + content
        + (template[close:])
    )

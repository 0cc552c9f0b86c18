"""Whether a chat template reads a text's characters by position, or compares texts alphabetically.

``{% if content[0] in 'aeiou' %}``, ``{% if content[1:2] == 'p' %}``, ``{{ content | first }}`` and
``{% if 'a' < content < 'b' %}`` react to what a text holds at one place, or to where it sorts: the
probes that learn fixed strings and skeletons put the template's literals inside texts, never at each
index, so no probe is sure to show such a branch. Such a template gets no fast path; it is found on
the parsed template, once per template:

* a subscript or slice (``content[0]``, ``content[-1]``, ``content[i]``, ``content[1:]``) or the
  ``first`` / ``last`` filters of a text: a message's ``content`` or ``text`` (by key or attribute),
  a name set from one, a text filtered (``| trim``), or one piece of a split text
  (``content.split('</think>')[-1]`` is a piece, not a character); a subscript whose result is
  then read by key (``content[0]['text']``: a content list's part, as Gemma 3 reads it) is not one;
* an ordering comparison (``<``, ``>``, ``<=``, ``>=``) with a string literal.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["reads_characters"]

_TEXT_KEYS = frozenset({"content", "text", "reasoning_content", "thinking", "reasoning"})
_TEXT_FILTERS = frozenset(
    {"trim", "string", "replace", "striptags", "e", "escape", "safe", "indent", "truncate", "default", "d"}
    | {"lower", "upper", "title", "capitalize", "reverse", "list"}
)
"""Filters whose result holds a text's characters (``(content | list)[0]`` is its first)."""
_SPLITS = frozenset({"split", "rsplit", "splitlines", "partition", "rpartition"})
_CHARACTER_FILTERS = frozenset({"first", "last"})
_ORDERING = frozenset({"lt", "gt", "lteq", "gteq"})
_COMPARE = "_prompter_compare"
"""The sandbox parses every comparison into this filter, and wraps some values in other ``_prompter_``
filters (size checks), which are seen through here."""


@lru_cache(maxsize=256)
def reads_characters(source: str) -> bool:
    """Whether ``source`` reads a text's characters by position or compares texts alphabetically."""
    import jinja2.nodes as nodes

    from prompter.formats.sandbox import compile_template

    tree = compile_template(source).template.environment.parse(source)
    parents: dict[int, Any] = {}
    for node in tree.find_all(nodes.Node):
        for child in node.iter_child_nodes():
            parents[id(child)] = node
    texts = _text_names(tree, nodes)
    for node in tree.find_all(nodes.Filter):
        if node.name == _COMPARE:  # the sandbox's form of ``a < b < c``: (a, 'lt', b, 'lt', c)
            operands = [node.node, *node.args[1::2]]
            if any(op.value in _ORDERING for op in node.args[0::2]) and any(_is_str(o, nodes) for o in operands):
                return True
    for node in tree.find_all((nodes.Getitem, nodes.Filter)):
        if isinstance(node, nodes.Filter) and node.name not in _CHARACTER_FILTERS:
            continue
        if isinstance(node, nodes.Getitem) and _is_str(node.arg, nodes):
            continue  # a key
        if node.node is not None and _is_text(node.node, texts, nodes) and not _read_by_key(node, parents, nodes):
            return True
    return False


def _text_names(tree: Any, nodes: Any) -> frozenset[str]:
    """The names the template sets from a text (``{% set content = message['content'] | trim %}``)."""
    names: set[str] = set()
    assigns = [a for a in tree.find_all(nodes.Assign) if isinstance(a.target, nodes.Name)]
    grew = True
    while grew:
        grew = False
        for assign in assigns:
            if assign.target.name not in names and _is_text(assign.node, frozenset(names), nodes):
                names.add(assign.target.name)
                grew = True
    return frozenset(names)


def _is_text(node: Any, texts: frozenset[str], nodes: Any) -> bool:
    node = _unwrapped(node, nodes)
    if isinstance(node, nodes.Name):
        return node.name in texts
    if isinstance(node, nodes.Getattr):
        return node.attr in _TEXT_KEYS
    if isinstance(node, nodes.Getitem):
        if _is_str(node.arg, nodes):
            return node.arg.value in _TEXT_KEYS
        piece = _unwrapped(node.node, nodes)  # one piece of a split text is a text
        return (
            isinstance(piece, nodes.Call)
            and isinstance(piece.node, nodes.Getattr)
            and piece.node.attr in _SPLITS
            and _is_text(piece.node.node, texts, nodes)
        )
    if isinstance(node, nodes.CondExpr):  # ``content if content is string else ''``
        return _is_text(node.expr1, texts, nodes) or (node.expr2 is not None and _is_text(node.expr2, texts, nodes))
    if isinstance(node, nodes.Filter):
        return node.name in _TEXT_FILTERS and node.node is not None and _is_text(node.node, texts, nodes)
    return False


def _read_by_key(node: Any, parents: dict[int, Any], nodes: Any) -> bool:
    """Whether what ``node`` gives is read by key or attribute (a content list's part: ``content[0]['text']``)."""
    parent = parents.get(id(node))
    while _guard(parent, nodes):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, nodes.Getattr):
        return parent.node is node
    return isinstance(parent, nodes.Getitem) and parent.node is node and _is_str(parent.arg, nodes)


def _is_str(node: Any, nodes: Any) -> bool:
    return isinstance(node, nodes.Const) and type(node.value) is str


def _guard(node: Any, nodes: Any) -> bool:
    return isinstance(node, nodes.Filter) and node.name.startswith("_prompter_") and node.name != _COMPARE


def _unwrapped(node: Any, nodes: Any) -> Any:
    while _guard(node, nodes):
        node = node.node
    return node

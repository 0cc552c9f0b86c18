"""Running a model's jinja chat template: the sandbox, the compile cache, the time budget.

The environment is configured the way ``transformers`` configures it, so a template
renders here exactly as ``tokenizer.apply_chat_template(..., tokenize=False)``
renders it: an :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` with
``trim_blocks`` and ``lstrip_blocks``, the ``loopcontrols`` extension, a no-op
``{% generation %}`` block, a ``tojson`` filter that does not escape HTML, and the
globals ``raise_exception``, ``strftime_now``, ``dict`` and an underscore-proof
``namespace``.

On top of that sandbox (which already refuses ``__class__``, ``__globals__`` and
friends), a template runs under a budget: a wall-clock deadline, checked on every
call, every loop iteration and every output chunk, and a cap on the size of what
it builds.  A hostile template (``{% for i in range(10**9) %}``, nested loops,
string doubling) is stopped with :class:`~prompter.errors.TemplateTimeoutError`
or :class:`~prompter.errors.TemplateError` instead of hanging the process.

jinja2 is imported on the first compile, not when prompter is imported.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from prompter.errors import PromptError, TemplateError, TemplateTimeoutError

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_TIME_BUDGET",
    "CompiledTemplate",
    "compile_template",
    "render_template",
    "tojson",
]

DEFAULT_TIME_BUDGET = 1.0
"""Seconds a template may run before :class:`TemplateTimeoutError` (per render)."""

DEFAULT_MAX_OUTPUT_CHARS = 20_000_000
"""The most characters a template may produce, or build into one string."""

_MAX_INT_BITS = 4096
_HUGE_WIDTH = re.compile(r"\d{7,}")
_SIZE_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "format", "join"})


@dataclass
class _Budget:
    deadline: float
    max_chars: int
    ticks: int = 0


_BUDGET: ContextVar[_Budget | None] = ContextVar("prompter_template_budget", default=None)


def _check_time() -> None:
    budget = _BUDGET.get()
    if budget is not None and time.monotonic() > budget.deadline:
        raise TemplateTimeoutError("chat template ran past its time budget; is it looping over a huge range?")


_SOFT_LIMIT = 65_536
"""Values shorter than this are not checked against the budget (the output cap still applies)."""


def _check_size(value: Any) -> Any:
    if not isinstance(value, (str, list, tuple)) or len(value) <= _SOFT_LIMIT:
        return value
    budget = _BUDGET.get()
    if budget is not None and len(value) > budget.max_chars:
        raise TemplateError(f"chat template built a value of {len(value)} items, over the cap of {budget.max_chars}")
    return value


_MAX_WIDTH = 1024
"""The widest indent a template may ask of ``tojson`` or ``indent``."""


def _check_format(template: str, args: tuple[Any, ...]) -> None:
    """``'%*d' % (10**9, 1)`` and ``'%999999999d' % 1`` would allocate gigabytes before any check."""
    if _HUGE_WIDTH.search(template):
        raise TemplateError("chat template format string asks for a huge width")
    limit = _current_max_chars()
    if any(isinstance(a, int) and not isinstance(a, bool) and a > limit for a in args):
        raise TemplateError("chat template formats with a huge width")


def tojson(
    x: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """The ``tojson`` filter of transformers: ``json.dumps`` without HTML escaping."""
    if (isinstance(indent, int) and indent > _MAX_WIDTH) or (isinstance(indent, str) and len(indent) > _MAX_WIDTH):
        raise TemplateError(f"chat template asked tojson for an indent of {indent!r}")
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: Any) -> None:
    raise _TemplateRaised(str(message))


class _TemplateRaised(Exception):
    """What ``raise_exception(...)`` raises inside a template; becomes TemplateError outside."""


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


class _TemplateDict:
    """``dict`` as templates see it: a constructor without attribute access to the type."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return _check_size(dict(*args, **kwargs))  # type: ignore[no-any-return]

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _guarded_iter(value: Any) -> Iterator[Any]:
    """Wraps every ``{% for %}`` iterable: the deadline is checked as the loop runs."""
    budget = _BUDGET.get()
    if budget is None:
        yield from value
        return
    deadline = budget.deadline
    for n, item in enumerate(value):
        if not n & 255 and time.monotonic() > deadline:
            raise TemplateTimeoutError("chat template ran past its time budget; is it looping over a huge range?")
        yield item


@lru_cache(maxsize=1)
def _environment() -> Any:
    """Build the sandboxed environment once (this is where jinja2 gets imported)."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    import jinja2.utils
    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from jinja2.visitor import NodeTransformer

    class _GenerationBlock(jinja2.ext.Extension):
        """``{% generation %}...{% endgeneration %}`` renders its body (transformers' assistant mask tag)."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Callable[[], str]) -> str:
            return caller()

    class _Namespace(jinja2.utils.Namespace):
        """``namespace()`` that refuses underscore-prefixed names, as transformers' does."""

        def __init__(*args: Any, **kwargs: Any) -> None:
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                _Namespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            _Namespace._check_name(name)
            _check_time()
            _check_size(value)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise SecurityError(f"chat templates cannot store underscore-prefixed attributes, got {name!r}")

    class _Guard(NodeTransformer):
        """Rewrites the parsed template: loops and ``~`` concatenations are budgeted."""

        def visit_For(self, node: Any) -> Any:
            node = self.generic_visit(node)
            node.iter = jinja2.nodes.Filter(node.iter, "_prompter_guard_iter", [], [], None, None)
            return node

        def visit_Concat(self, node: Any) -> Any:
            node = self.generic_visit(node)
            return jinja2.nodes.Filter(node, "_prompter_check_size", [], [], None, None)

    class BudgetedSandbox(ImmutableSandboxedEnvironment):
        """The immutable sandbox with a deadline on calls and a size cap on operators."""

        intercepted_binops = frozenset({"*", "**", "+", "%", "//"})

        def _parse(self, source: str, name: str | None, filename: str | None) -> Any:
            return _Guard().visit(super()._parse(source, name, filename))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
            _check_time()
            target = getattr(__obj, "__wrapped__", __obj)
            if isinstance(getattr(target, "__self__", None), str) and target.__name__ in _SIZE_METHODS:
                for arg in args:
                    if isinstance(arg, int) and arg > _current_max_chars():
                        raise TemplateError(f"chat template asked for a string of {arg} characters")
                if target.__name__ == "format" and _HUGE_WIDTH.search(target.__self__):
                    raise TemplateError("chat template format string asks for a huge width")
            return _check_size(super().call(__context, __obj, *args, **kwargs))

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "+":  # the common one: string building, checked cheaply
                result = left + right
                if type(result) is str and len(result) <= _SOFT_LIMIT:
                    return result
                return _check_size(result)
            if operator == "**" and isinstance(left, int) and isinstance(right, int):
                if abs(left) > 1 and right * max(abs(left).bit_length(), 1) > _MAX_INT_BITS:
                    raise TemplateError(f"chat template computes a huge power: {left} ** {right}")
            elif operator == "*":
                for seq, count in ((left, right), (right, left)):
                    if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                        if len(seq) * count > _current_max_chars():
                            raise TemplateError("chat template builds a huge sequence by repetition")
                if isinstance(left, int) and isinstance(right, int):
                    if left.bit_length() + right.bit_length() > _MAX_INT_BITS:
                        raise TemplateError("chat template computes a huge number")
            elif operator == "%" and isinstance(left, str):
                _check_format(left, right if isinstance(right, tuple) else (right,))
            return _check_size(self.binop_table[operator](left, right))

    def _safe_center(value: str, width: int = 80) -> str:
        if width > _current_max_chars():
            raise TemplateError(f"chat template asked for a string of {width} characters")
        return value.center(width)

    def _safe_format(value: str, *args: Any, **kwargs: Any) -> str:
        _check_format(str(value), (*args, *kwargs.values()))
        return str(base_format(value, *args, **kwargs))

    def _safe_indent(value: str, width: Any = 4, *args: Any, **kwargs: Any) -> str:
        if (isinstance(width, int) and width > _MAX_WIDTH) or (isinstance(width, str) and len(width) > _MAX_WIDTH):
            raise TemplateError(f"chat template asked for an indent of {width!r}")
        return str(base_indent(value, width, *args, **kwargs))

    env = BudgetedSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationBlock, jinja2.ext.loopcontrols],
    )
    base_format = env.filters["format"]
    base_indent = env.filters["indent"]
    env.filters["indent"] = _safe_indent
    env.filters["tojson"] = tojson
    env.filters["center"] = _safe_center
    env.filters["format"] = _safe_format
    env.filters["_prompter_guard_iter"] = _guarded_iter
    env.filters["_prompter_check_size"] = _check_size
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _Namespace
    return env


def _current_max_chars() -> int:
    budget = _BUDGET.get()
    return budget.max_chars if budget is not None else DEFAULT_MAX_OUTPUT_CHARS


@dataclass(frozen=True)
class CompiledTemplate:
    """A compiled chat template and what we learnt about it from its source."""

    source: str
    """The jinja source, as given."""
    variables: frozenset[str]
    """Names the template reads from its context (``messages``, ``tools``, ``bos_token``, ...)."""
    template: Any
    """The :class:`jinja2.Template`."""

    def uses(self, name: str) -> bool:
        """Whether the template reads the context variable ``name``."""
        return name in self.variables


@lru_cache(maxsize=128)
def compile_template(source: str) -> CompiledTemplate:
    """Compile ``source`` in the sandbox, once per distinct source.

    >>> compile_template("{{ messages[0]['content'] }}").uses("messages")
    True
    """
    if not isinstance(source, str):
        raise TemplateError(f"chat template: expected jinja source as str, got {type(source).__name__}")
    import jinja2
    from jinja2 import meta

    env = _environment()
    try:
        ast = env.parse(source)
        variables = frozenset(meta.find_undeclared_variables(ast))
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"chat template does not compile: line {exc.lineno}: {exc.message}") from exc
    return CompiledTemplate(source, variables, template)


def render_template(
    compiled: CompiledTemplate,
    context: Mapping[str, Any],
    *,
    time_budget: float = DEFAULT_TIME_BUDGET,
    max_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
) -> str:
    """Render a compiled template with ``context`` under a time and size budget.

    Whatever goes wrong inside the template comes out as :class:`TemplateError`
    (the template's own ``raise_exception`` message, a sandbox violation, an
    undefined value) or :class:`TemplateTimeoutError`.
    """
    import jinja2

    budget = _Budget(time.monotonic() + time_budget, max_chars)
    token = _BUDGET.set(budget)
    try:
        template = compiled.template
        ctx = template.new_context(dict(context))
        chunks: list[str] = []
        total = 0
        deadline = budget.deadline
        for n, chunk in enumerate(template.root_render_func(ctx)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_chars:
                raise TemplateError(f"chat template output exceeds {max_chars} characters")
            if not n & 255 and time.monotonic() > deadline:
                raise TemplateTimeoutError("chat template ran past its time budget; is it looping over a huge range?")
        return "".join(chunks)
    except PromptError:
        raise
    except _TemplateRaised as exc:
        raise TemplateError(f"chat template raised: {exc}") from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(f"chat template tried to leave its sandbox: {exc}") from None
    except jinja2.TemplateError as exc:
        raise TemplateError(f"chat template failed: {type(exc).__name__}: {exc}") from None
    except RecursionError:
        raise TemplateError("chat template recursed too deeply") from None
    except MemoryError:
        raise TemplateError("chat template ran out of memory") from None
    except Exception as exc:
        raise TemplateError(f"chat template failed: {type(exc).__name__}: {exc}") from None
    finally:
        _BUDGET.reset(token)

"""Running a model's jinja chat template: the sandbox, the compile cache, the budget.

The environment is configured the way ``transformers`` configures it, so a template
renders here exactly as ``tokenizer.apply_chat_template(..., tokenize=False)``
renders it: an :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` with
``trim_blocks`` and ``lstrip_blocks``, the ``loopcontrols`` extension, a no-op
``{% generation %}`` block, a ``tojson`` filter that does not escape HTML, and the
globals ``raise_exception``, ``strftime_now``, ``dict`` and an underscore-proof
``namespace``.

On top of that sandbox (which already refuses ``__class__``, ``__globals__`` and
friends), a template runs under a budget (:mod:`prompter.formats.budget`): a
wall-clock deadline, checked on every call, loop step, output chunk and item lookup, and size caps
that every amplifying builtin is held to *before* it allocates: operators
(``*``, ``**``, ``%``, ``+``, ``~``), comparisons, methods of ``str`` and friends
(:mod:`prompter.formats.sandbox_calls`), every filter and test
(:mod:`prompter.formats.sandbox_filters`), the globals, and the ``str()`` of every
printed value.  A hostile template is stopped with
:class:`~prompter.errors.TemplateTimeoutError` or :class:`~prompter.errors.TemplateError`;
nothing else comes out of a render.

jinja2 is imported on the first compile, not when prompter is imported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from prompter.errors import PromptError, TemplateError, TemplateTimeoutError
from prompter.formats.budget import (
    BUDGET,
    DEFAULT_MAX_OUTPUT_CHARS,
    MAX_SOURCE_CHARS,
    PROBE_RENDER_SECONDS,
    PROBING,
    Budget,
    bounded_concat,
    check_items,
    check_key,
    check_result,
    check_str,
    check_time,
    count_lookup,
    guarded_iter,
    timed_out,
)
from prompter.formats.sandbox_calls import (
    BoundedFormatterMixin,
    TemplateDict,
    bounded_method_call,
    check_percent,
    dict_key,
)
from prompter.formats.sandbox_filters import compare, install, printable, tojson

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

_MAX_INT_BITS = 4096
"""The widest integer ``*`` and ``**`` may build (``10 ** 10 ** 8`` would take minutes)."""

LIPSUM_WORDS = 100_000
"""The most words ``lipsum(n, html, min, max)`` may be asked for (``n * max``)."""

_MESSAGE_CHARS = 2000
"""How much of a ``raise_exception`` message the :class:`TemplateError` carries."""


def _raise_exception(message: Any) -> None:
    printable(message)
    raise _TemplateRaised(str(message)[:_MESSAGE_CHARS])


class _TemplateRaised(Exception):
    """What ``raise_exception(...)`` raises inside a template; becomes TemplateError outside."""


def _strftime_now(format: str) -> str:
    printable(format)
    # a directive (2 chars) expands to at most ~30 (``%c`` in a long locale)
    check_str(len(str(format)) * 16, "asked strftime_now for a long date")
    return datetime.now().strftime(format)


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Size what ``left <operator> right`` would build, before Python builds it."""
    if operator == "**" and isinstance(left, int) and isinstance(right, int):
        if abs(left) > 1 and right * max(abs(left).bit_length(), 1) > _MAX_INT_BITS:
            raise TemplateError(f"chat template computes a huge power: {left} ** {right}")
    elif operator == "*":
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes)) and isinstance(count, int):
                check_str(len(seq) * count, "builds a string by repetition")
            elif isinstance(seq, (list, tuple)) and isinstance(count, int):
                check_items(len(seq) * count, "builds a sequence by repetition")
        if isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > _MAX_INT_BITS:
                raise TemplateError("chat template computes a huge number")
    elif operator == "+":
        if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)):
            check_str(len(left) + len(right), "concatenates strings")
        elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            check_items(len(left) + len(right), "concatenates sequences")
        elif isinstance(left, int) and isinstance(right, int):
            if max(left.bit_length(), right.bit_length()) >= _MAX_INT_BITS:
                raise TemplateError("chat template computes a huge number")
    elif operator == "%" and isinstance(left, str):
        check_percent(left, right)


@lru_cache(maxsize=1)
def _environment() -> Any:
    """Build the sandboxed environment once (this is where jinja2 gets imported)."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    import jinja2.utils
    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
    from jinja2.visitor import NodeTransformer
    from markupsafe import Markup

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
            attrs = TemplateDict()(*args, **kwargs)  # its keys' hashes sized first, as dict() does
            check_items(len(attrs), "builds a namespace")
            for name in attrs:
                _Namespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            _Namespace._check_name(name)
            check_time()
            check_result(value, new=False)  # built (and accounted) by whatever computed it
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise SecurityError(f"chat templates cannot store underscore-prefixed attributes, got {name!r}")

    def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
        words = n * max if isinstance(n, int) and isinstance(max, int) else LIPSUM_WORDS + 1
        if words > LIPSUM_WORDS:
            raise TemplateError(f"chat template asked lipsum for {words:,} words, over {LIPSUM_WORDS:,}")
        return str(jinja2.utils.generate_lorem_ipsum(n, html, min, max))

    class _Guard(NodeTransformer):
        """Rewrites the parsed template so the budget sees what jinja does in one expression."""

        def visit_For(self, node: Any) -> Any:
            node = self.generic_visit(node)
            node.iter = jinja2.nodes.Filter(node.iter, "_prompter_guard_iter", [], [], None, None)
            return node

        def visit_Concat(self, node: Any) -> Any:
            # ``a ~ b`` calls str() on each side: check that first, then the joined size
            node = self.generic_visit(node)
            node.nodes = [jinja2.nodes.Filter(n, "_prompter_printable", [], [], None, None) for n in node.nodes]
            return jinja2.nodes.Filter(node, "_prompter_check_size", [], [], None, None)

        def visit_Getitem(self, node: Any) -> Any:
            # ``s[::-1]`` copies: the only way a template makes a slice, so the only one to size
            node = self.generic_visit(node)
            if isinstance(node.arg, jinja2.nodes.Slice):
                return jinja2.nodes.Filter(node, "_prompter_check_size", [], [], None, None)
            return node

        def visit_Dict(self, node: Any) -> Any:
            # ``{key: value}`` hashes each key in C: a tuple key's hash is sized first
            node = self.generic_visit(node)
            for pair in node.items:
                if not isinstance(pair.key, jinja2.nodes.Const):
                    pair.key = jinja2.nodes.Filter(pair.key, "_prompter_key", [], [], None, None)
            return node

        def visit_Compare(self, node: Any) -> Any:
            # ``a in b`` / ``a == b`` on big structures run in C for minutes: size them first
            node = self.generic_visit(node)
            args: list[Any] = []
            for operand in node.ops:
                args += [jinja2.nodes.Const(operand.op), operand.expr]
            return jinja2.nodes.Filter(node.expr, "_prompter_compare", args, [], None, None).set_lineno(node.lineno)

    class _BoundedFormatter(BoundedFormatterMixin, SandboxedFormatter):
        """``str.format`` in the sandbox, each field sized before it is formatted."""

    class _BoundedEscapeFormatter(BoundedFormatterMixin, SandboxedEscapeFormatter):
        """``Markup.format`` in the sandbox, each field sized before it is formatted."""

    class BudgetedSandbox(ImmutableSandboxedEnvironment):
        """The immutable sandbox with the budget on calls, operators, items and formatting."""

        intercepted_binops = frozenset({"*", "**", "+", "%", "//"})
        concat = staticmethod(bounded_concat)  # joins the output of blocks, macros and filter blocks

        def _parse(self, source: str, name: str | None, filename: str | None) -> Any:
            return _Guard().visit(super()._parse(source, name, filename))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
            check_time()
            if not __self.is_safe_callable(__obj):
                raise SecurityError(f"{__obj!r} is not safely callable")
            handled, result = bounded_method_call(__obj, args, kwargs)
            if not handled:
                result = __context.call(__obj, *args, **kwargs)
            return check_result(result)

        def getitem(self, obj: Any, argument: Any) -> Any:
            # ``sort(attribute=...)``, ``join(attribute=...)``... look items up through here from inside one C
            # call (``sorted``, ``str.join``), where no loop step reads the clock (``x.y`` in a template is a
            # step of the template itself, checked by its loops and output)
            count_lookup()
            if type(argument) is tuple:
                check_key(argument, "looks an item up by a tuple")
            return super().getitem(obj, argument)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "+" and type(left) is str and type(right) is str and len(left) + len(right) < 4096:
                return left + right  # the common one: small string building
            _check_binop(operator, left, right)
            return check_result(self.binop_table[operator](left, right))

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapped = super().wrap_str_format(value)
            if wrapped is None:
                return None
            f_self = value.__self__
            is_format_map = value.__name__ == "format_map"

            def bounded(*args: Any, **kwargs: Any) -> str:
                formatter: Any
                if isinstance(f_self, Markup):
                    formatter = _BoundedEscapeFormatter(self, escape=f_self.escape)
                else:
                    formatter = _BoundedFormatter(self)
                if is_format_map:
                    if kwargs or len(args) != 1:
                        raise TypeError("format_map() takes exactly one positional argument")
                    return str(type(f_self)(formatter.vformat(f_self, (), args[0])))
                return str(type(f_self)(formatter.vformat(f_self, args, kwargs)))

            bounded.__wrapped__ = value  # type: ignore[attr-defined]
            bounded.__name__ = value.__name__
            return bounded

    env = BudgetedSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationBlock, jinja2.ext.loopcontrols],
        finalize=printable,
    )
    install(env.filters, env.tests)
    env.filters["_prompter_guard_iter"] = guarded_iter
    env.filters["_prompter_check_size"] = check_result
    env.filters["_prompter_printable"] = printable
    env.filters["_prompter_compare"] = compare
    env.filters["_prompter_key"] = dict_key
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = _Namespace
    env.globals["lipsum"] = _lipsum
    return env


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
    if len(source) > MAX_SOURCE_CHARS:  # compiling is not budgeted: its time grows with the source
        raise TemplateError(f"chat template is {len(source):,} characters long, over the cap of {MAX_SOURCE_CHARS:,}")
    import jinja2
    from jinja2 import meta

    env = _environment()
    try:
        ast = env.parse(source)
        variables = frozenset(meta.find_undeclared_variables(ast))
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"chat template does not compile: line {exc.lineno}: {exc.message}") from exc
    except PromptError:
        raise
    except (RecursionError, MemoryError) as exc:
        raise TemplateError(f"chat template is too deeply nested or too big to compile: {type(exc).__name__}") from None
    except Exception as exc:  # noqa: BLE001 - whatever jinja's compiler trips on is the template's fault
        raise TemplateError(f"chat template does not compile: {type(exc).__name__}: {exc}"[:500]) from None
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
    undefined value, a size cap) or :class:`TemplateTimeoutError`.
    """
    import jinja2

    now = time.monotonic()
    deadline = now + time_budget
    probe = PROBING.get()  # a probing session's renders are short, end at its deadline, and end
    if probe is not None:  # at once after one timed out (the session gives up)
        deadline = now if probe.timed_out else min(deadline, now + PROBE_RENDER_SECONDS, probe.deadline)
    budget = Budget(deadline, max_chars, seconds=time_budget)
    token = BUDGET.set(budget)
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
                raise timed_out(budget)
        return "".join(chunks)
    except TemplateTimeoutError:
        if probe is not None:
            probe.timed_out = True
        raise
    except PromptError:
        raise
    except _TemplateRaised as exc:
        raise TemplateError(f"chat template raised: {exc}") from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(f"chat template tried to leave its sandbox: {str(exc)[:500]}") from None
    except jinja2.TemplateError as exc:
        raise TemplateError(f"chat template failed: {type(exc).__name__}: {str(exc)[:500]}") from None
    except RecursionError:
        raise TemplateError("chat template recursed too deeply") from None
    except MemoryError:
        raise TemplateError("chat template ran out of memory") from None
    except Exception as exc:  # noqa: BLE001 - anything else a template does is the template's fault
        raise TemplateError(f"chat template failed: {type(exc).__name__}: {str(exc)[:500]}") from None
    finally:
        BUDGET.reset(token)


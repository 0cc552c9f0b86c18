"""What one local generation needs, as plain values built before the model runs.

:class:`GenerationOptions` reads and checks OpenAI-style options;
:class:`LocalRequest` holds the rendered, safely tokenized prompt with them
(``TrainableModule.build_request`` and ``prepare`` build it, without the model).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modules.errors import ModuleConfigError
from modules.local.safe_tokens import Span

__all__ = ["DEFAULT_MAX_NEW_TOKENS", "LOCAL_OPTIONS", "GenerationOptions", "LocalRequest", "prompt_messages"]

DEFAULT_MAX_NEW_TOKENS = 256

_MIN_TEMPERATURE = 1e-3

#: The generation keywords a local model takes (``max_tokens`` and ``max_completion_tokens`` are
#: OpenAI's names for ``max_new_tokens``); OpenAI's other fields (``n``, ``logit_bias``...) are not.
LOCAL_OPTIONS = frozenset(
    {"max_new_tokens", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "stop", "seed"}
)


def _number(value: Any, name: str, low: float, high: float | None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ModuleConfigError(f"{name}: expected a number, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ModuleConfigError(f"{name}: expected a number {bounds}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class GenerationOptions:
    """How to generate: greedy unless ``temperature`` > 0; ``stop`` adds stop strings.

    ``temperature`` is in [0, 2], as OpenAI's; below 0.001 it is greedy decoding (dividing the
    logits by it would overflow); ``top_p`` is in (0, 1]; ``seed`` makes sampling repeatable.
    """

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None

    @classmethod
    def from_kwargs(cls, options: Mapping[str, Any], default_max_new_tokens: int) -> GenerationOptions:
        """Read OpenAI-style options (``max_tokens`` is ``max_new_tokens``); unknown ones are an error."""
        opts = dict(options)
        lengths = {n: opts.pop(n) for n in ("max_new_tokens", "max_tokens", "max_completion_tokens") if n in opts}
        given = {n: v for n, v in lengths.items() if v is not None}
        if len({repr(v) for v in given.values()}) > 1:  # two names for one length, saying different things
            said = " and ".join(f"{n}={v!r}" for n, v in given.items())
            raise ModuleConfigError(f"{said} disagree: they name the same answer length; give one of them")
        max_new = next(iter(given.values()), default_max_new_tokens)
        stop = opts.pop("stop", None)
        if stop is not None and not isinstance(stop, (str, list, tuple)):  # a dict's keys, a number: not stops
            raise ModuleConfigError(f"stop: expected a non-empty str or a list of them, got {type(stop).__name__}")
        stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
        # a str subclass is read as the characters it holds: its own methods are the caller's code, never run
        stops = tuple(str.__str__(s) if isinstance(s, str) else s for s in stops)
        known = {f: opts.pop(f) for f in ("temperature", "top_p", "top_k", "seed") if f in opts}
        if opts:
            raise ModuleConfigError(
                f"unknown generation option {sorted(opts)[0]!r}; TrainableModule takes "
                f"{', '.join(sorted(LOCAL_OPTIONS))}"
            )
        if not isinstance(max_new, int) or isinstance(max_new, bool) or max_new < 1:
            raise ModuleConfigError(f"max_new_tokens: expected a positive int, got {max_new!r}")
        if not all(isinstance(s, str) and s for s in stops):
            raise ModuleConfigError("stop: expected a non-empty str or a list of them")
        # OpenAI's range, as a call and the server check it: prepare() and prepare_text() take no wider one
        temperature = _number(known.pop("temperature", 0.0), "temperature", 0.0, 2.0)
        if temperature < _MIN_TEMPERATURE:
            temperature = 0.0  # dividing logits by a vanishing temperature overflows: it means greedy
        top_p = _number(known.pop("top_p", 1.0), "top_p", 0.0, 1.0)
        if top_p == 0:
            raise ModuleConfigError("top_p: expected a number in (0, 1], got 0")
        top_k = known.pop("top_k", None)
        if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0):
            raise ModuleConfigError(f"top_k: expected an int >= 0, got {top_k!r}")
        seed = known.pop("seed", None)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ModuleConfigError(f"seed: expected an int, got {seed!r}")
        return cls(max_new, temperature, top_p, top_k, stops, seed)


@dataclass(frozen=True)
class LocalRequest:
    """Everything one generation needs, built before the model runs (inspect it with ``build_request``).

    ``dropped`` lists the messages ``trim="oldest"`` removed to fit the context.
    """

    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...] | None
    text: str
    spans: tuple[Span, ...]
    input_ids: tuple[int, ...]
    options: GenerationOptions
    dropped: tuple[Mapping[str, Any], ...] = ()


def prompt_messages(
    prompter: Any, input: Any, history: Any, tools: Any, model_format: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The OpenAI messages (and tools) of the conversation *prompter* renders as the model's text.

    A prompter renders a local model's text from its conversation as it stands (see
    :func:`prompter.render.strategies.arrange`): no rule of the OpenAI API applies, so a speaker
    named ``"Dr Alice"`` keeps the turns, and tool-call arguments are what the template reads.
    A prompter of prompter's own gives exactly those messages; one that overrides
    ``generate_prompt`` (or a duck-typed one) is asked for its ``format="openai"`` body.
    """
    from prompter.prompters.base import PrompterBase
    from prompter.render.openai import openai_messages

    if isinstance(prompter, PrompterBase) and type(prompter).generate_prompt is PrompterBase.generate_prompt:
        conv = prompter.build(input, history, tools, None, model_format)
        messages = openai_messages(conv, keep_null=True, signatures=True)
        listed = conv.tools.as_list() if conv.tools is not None and len(conv.tools) else None
        if prompter.show:  # as generate_prompt says what it rendered
            import logging

            logging.getLogger("prompter").debug("%s rendered (messages):\n%s", type(prompter).__name__, messages)
        return messages, listed
    body = _openai_body(prompter, input, history, tools, model_format)
    return body["messages"], body.get("tools")


def _openai_body(prompter: Any, input: Any, history: Any, tools: Any, model_format: Any) -> Mapping[str, Any]:
    if _accepts(prompter.generate_prompt, "model_format"):
        body: Mapping[str, Any] = prompter.generate_prompt(
            input, history, tools, format="openai", model_format=model_format
        )
    else:  # a duck-typed prompter that knows no model formats
        body = prompter.generate_prompt(input, history, tools, format="openai")
    return body


def _accepts(function: Any, name: str) -> bool:
    import inspect

    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

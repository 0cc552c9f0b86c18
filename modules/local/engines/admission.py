"""What an engine checks before a request joins a running batch: one caller's bad request is its own error.

A request built by ``prepare()`` or ``prepare_text()`` is already checked, but
:meth:`~modules.local.trainable.TrainableModule.generate` takes any
:class:`~modules.local.request.LocalRequest`, and one built by hand (or with
``dataclasses.replace``) can hold an id past the model's vocabulary, no ids,
or options of the wrong type. Inside the decode loop such a request fails the
whole step, so every request sharing the batch would get its error (an
``IndexError`` from the embedding, a ``TypeError`` from the sampler). Checked
here, at submission, the caller gets a
:class:`~modules.errors.ModuleConfigError` naming what is wrong and the
others never see it.

:func:`checked_request` also returns the request in builtins only (ints, plain
strs): what crosses to the engine process is pickled, and a subclass defined in
the caller's script (a ``str`` subclass as a stop string) cannot be unpickled
there.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

from modules.errors import ModuleConfigError
from modules.local.request import GenerationOptions, LocalRequest

__all__ = ["checked_request", "vocabulary_size"]

_REMEDY = "build the request with TrainableModule.prepare() or prepare_text()"


def vocabulary_size(model: Any) -> int | None:
    """The number of token ids *model*'s input embedding takes (None when it cannot say)."""
    try:
        rows = model.get_input_embeddings().num_embeddings
    except (AttributeError, TypeError, NotImplementedError):
        return None
    return rows if isinstance(rows, int) else None


def checked_request(request: Any, vocabulary: int | None) -> LocalRequest:
    """*request* with its ids and options checked and made builtins, or a typed error naming the field.

    *vocabulary* bounds the ids (``0 <= id < vocabulary``); None skips that bound only.
    """
    if not isinstance(request, LocalRequest):
        raise ModuleConfigError(f"request: expected a LocalRequest, got {type(request).__name__}; {_REMEDY}")
    ids = _checked_ids(request.input_ids, vocabulary)
    options = _checked_options(request.options)
    return dataclasses.replace(request, input_ids=ids, options=options)


def _checked_ids(ids: Any, vocabulary: int | None) -> tuple[int, ...]:
    if not isinstance(ids, (tuple, list)):
        raise ModuleConfigError(
            f"request.input_ids: expected a tuple of token ids, got {type(ids).__name__}; {_REMEDY}"
        )
    if not ids:
        raise ModuleConfigError(f"request.input_ids: empty, the model has nothing to continue; {_REMEDY}")
    if set(map(type, ids)) == {int} and min(ids) >= 0 and (vocabulary is None or max(ids) < vocabulary):
        return tuple(ids)  # the common case (prepare()'s ids), checked without a Python loop per id
    plain: list[int] = []
    for i, token in enumerate(ids):
        if isinstance(token, bool) or not isinstance(token, int):
            try:  # a NumPy or torch integer scalar is an id too
                token = operator.index(token)
            except TypeError:
                raise ModuleConfigError(
                    f"request.input_ids[{i}]: expected an int token id, got {type(token).__name__}; {_REMEDY}"
                ) from None
        token = int.__int__(token)  # a plain int (an int subclass does not pickle to the engine process)
        if token < 0 or (vocabulary is not None and token >= vocabulary):
            bound = f"0 to {vocabulary - 1}" if vocabulary is not None else ">= 0"
            raise ModuleConfigError(
                f"request.input_ids[{i}]: token id {token} is not in the model's vocabulary ({bound}); {_REMEDY}"
            )
        plain.append(token)
    return tuple(plain)


def _checked_options(options: Any) -> GenerationOptions:
    if not isinstance(options, GenerationOptions):
        raise ModuleConfigError(
            f"request.options: expected GenerationOptions, got {type(options).__name__}; {_REMEDY}"
        )
    stop = options.stop
    if not isinstance(stop, (tuple, list)) or not all(isinstance(s, str) and s for s in stop):
        raise ModuleConfigError(f"request.options.stop: expected a tuple of non-empty str, got {stop!r:.80}")
    fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
    fields["stop"] = tuple(str.__str__(s) for s in stop)  # plain strs, whatever their class
    try:  # the checks prepare() makes
        checked = GenerationOptions.from_kwargs(fields, 1)
    except ModuleConfigError as exc:
        raise ModuleConfigError(f"request.options.{exc}; {_REMEDY}") from None
    return dataclasses.replace(
        checked,
        max_new_tokens=int.__int__(checked.max_new_tokens),
        top_k=None if checked.top_k is None else int.__int__(checked.top_k),
        seed=None if checked.seed is None else int.__int__(checked.seed),
    )

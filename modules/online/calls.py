"""The calls OnlineChatModule offers beyond ``m(...)``: the whole response, async calls, per-call settings.

Kept apart from :mod:`modules.online.module` (which sends, retries and reads) so each file
stays one concept; the methods here only compose the module's own steps:

- :meth:`Calls.respond` / ``stream(...).response``: the whole
  :class:`~modules.online.response.Response`;
- ``acall``, ``arespond`` (:class:`~modules.online.aio.AsyncCalls`) and :meth:`Calls.astream`: the same,
  run off the event loop, on a handle whose retries stop once the task is cancelled (:meth:`Calls._for_task`);
- :meth:`Calls.with_options`: a handle with another timeout, retry count or headers;
- :meth:`Calls.build_request`: the request, or the error for a wrong argument with the key masked in it.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any, TypeVar, cast

from modules.base import ModuleBase, ModuleInput
from modules.online.aio import AsyncCalls, AsyncChatStream
from modules.online.config import Timeout, check_headers
from modules.online.response import OnlineChatStream, Response, StreamEnd
from modules.online.scrub import Scrubber, mask_error, mask_library_logs, secrets_of_headers

C = TypeVar("C", bound="Calls")

__all__ = ["Calls"]


class Calls(AsyncCalls):
    """Mixed into :class:`~modules.online.module.OnlineChatModule`."""

    def build_request(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> Any:
        """As :meth:`ModuleBase.build_request`; every call builds its request here. An error for a wrong
        argument may echo it (an option's value, a keyword, a role): a key or credential header given to
        the module by mistake there is shown as ``***``."""
        m = _module(self)
        try:
            return ModuleBase.build_request(m, input, history, tools, **generation)
        except Exception as exc:
            mask_error(exc, m._scrubber)
            raise

    def respond(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> Response:
        """Ask the model; return the whole :class:`~modules.online.response.Response`
        (text, tool calls, finish reason, usage, model, request id, raw body)."""
        m = _module(self)
        outcome = m._request(m.build_request(input, history, tools, **generation))
        completion = m._parse_completion(outcome.body, outcome.status)
        return Response.of(completion, m._request_id(outcome.headers))

    def stream(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> OnlineChatStream:
        """As :meth:`ModuleBase.stream`; once read to its end, ``.response`` is the whole
        :class:`~modules.online.response.Response` (usage where the API reports it)."""
        m = _module(self)
        end = StreamEnd()
        return OnlineChatStream(m._stream(m.build_request(input, history, tools, **generation), end), end)

    def astream(
        self,
        input: ModuleInput = "",
        history: Sequence[Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        **generation: Any,
    ) -> AsyncChatStream:
        """``async for piece in m.astream(...)``: :meth:`stream`, each step run off the event loop
        (the arguments are checked here, at once; the request is sent at the first step)."""
        m, cancelled = _module(self), threading.Event()
        self._check_async(input, history, tools, generation)
        request = m.build_request(input, history, tools, **generation)  # bad arguments raise here, at once
        return AsyncChatStream(m._async, lambda: m._for_task(cancelled)._open_stream(request), cancelled)

    def _check_async(
        self,
        input: ModuleInput,
        history: Sequence[Any] | None,
        tools: Sequence[Mapping[str, Any]] | None,
        generation: Mapping[str, Any],
    ) -> None:
        """A closed module raises at once, before a worker thread starts: the thread would outlive it."""
        _module(self)._check_open()

    def _open_stream(self, request: Any) -> OnlineChatStream:
        end = StreamEnd()
        return OnlineChatStream(_module(self)._stream(request, end), end)

    def _for_task(self: C, cancelled: threading.Event) -> C:
        """A handle whose retries stop once *cancelled* is set (the awaiting task was cancelled): the
        wait before a retry ends early, and no further attempt is sent."""
        m = _module(self)
        twin = copy.copy(m)
        twin.retry = replace(m.retry, sleep=_sleep_unless(cancelled, m.retry.sleep))
        return cast("C", twin)

    def with_options(
        self: C,
        *,
        timeout: float | Timeout | None = None,
        max_retries: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> C:
        """A handle on the same backend (pool, key) and prompter with other call settings, in the
        spirit of the openai client's ``with_options``: ``m.with_options(timeout=5, max_retries=0)("hi")``.
        ``headers`` are added to (and override) the module's. The module itself is unchanged."""
        m = _module(self)
        twin = copy.copy(m)
        if timeout is not None:
            twin.timeout = Timeout.of(timeout)
        if max_retries is not None:
            twin.retry = replace(m.retry, max_retries=max_retries)
        if headers is not None:
            check_headers(headers)  # as the constructor checks them: nothing reaches the HTTP library unchecked
            twin._headers = MappingProxyType({**m._headers, **dict(headers)})
            key = m._backend.api_key
            twin._scrubber = Scrubber([*([key.reveal()] if key else []), *secrets_of_headers(twin._headers)])
            mask_library_logs(twin._scrubber)
        return cast("C", twin)


def _sleep_unless(cancelled: threading.Event, sleep: Callable[[float], object]) -> Callable[[float], None]:
    """*sleep*, cut short by *cancelled* (when it is ``time.sleep``), then raising if *cancelled* is set."""

    def wait(seconds: float) -> None:
        if sleep is time.sleep:
            cancelled.wait(seconds)
        elif not cancelled.is_set():
            sleep(seconds)  # an injected sleep (a test's clock) is kept
        if cancelled.is_set():
            raise asyncio.CancelledError("the awaiting task was cancelled: no retry is sent")

    return wait


def _module(calls: Calls) -> Any:
    """``calls`` as the module it is mixed into (the mixin's methods use the module's steps); typed
    loosely so that this file needs no import of the module that mixes it in."""
    return calls

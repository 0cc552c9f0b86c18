"""Concurrency: a module (or a ``with_options(headers=...)`` handle) made in one thread while another
thread's request logs must never break that request.

Every module registers its secrets with one log filter on the HTTP libraries' loggers (urllib3 logs each
connection and answer at DEBUG). That filter copied its weak set of scrubbers while other threads added
to it, and a copy racing an add raises ``RuntimeError: Set changed size during iteration`` — out of the
``log.debug(...)`` inside urllib3, so out of the user's call, untyped. A thread pool building handles
per request while DEBUG logging is on hit it within a second.
"""

from __future__ import annotations

import logging
import threading

from modules import OnlineChatModule
from modules.testing import FakeOpenAIServer


def test_handles_made_in_one_thread_never_break_logging_in_another() -> None:
    log = logging.getLogger("urllib3.connectionpool")  # one of the loggers the module masks
    level, propagate = log.level, log.propagate
    log.setLevel(logging.DEBUG)
    log.propagate = False  # records reach the filter; nothing is printed
    errors: list[BaseException] = []
    done = threading.Event()
    with FakeOpenAIServer(replies=["ok"]) as server:
        m = OnlineChatModule(base_url=server.base_url, model="m", api_key="sk-race-canary-0123456789")
        kept = [m.with_options(headers={"X-Api-Key": f"hk-kept-{i:04d}"}) for i in range(200)]

        def logging_thread() -> None:
            while not done.is_set():
                try:
                    log.debug("Starting new HTTP connection (%d): %s:%s", 1, "127.0.0.1", 80)
                except Exception as exc:  # noqa: BLE001 - what the call would have raised
                    errors.append(exc)
                    done.set()

        def building_thread() -> None:
            for i in range(600):
                if done.is_set():
                    break
                kept.append(m.with_options(headers={"X-Api-Key": f"hk-new-{i:04d}"}))
            done.set()

        try:
            threads = [threading.Thread(target=logging_thread), threading.Thread(target=building_thread)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert errors == []
            assert m("hi") == "ok"  # and the module still works, masking as before
        finally:
            log.setLevel(level)
            log.propagate = propagate

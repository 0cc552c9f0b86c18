"""A servable module whose ``prepare`` (the render) waits until the test releases it.

Tests of the server's event loop use it: while it holds its render open, whether another client is
answered shows, by the order of :attr:`HeldRender.events` and not by a clock, whether the loop was free.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from modules.base import Completion, StreamDelta
from prompter.formats.model_format import ModelFormat

__all__ = ["HeldRender"]


class HeldRender:
    """Served as ``"held"``, with *model_format* (and *trim*, as a module's) for the server to judge."""

    name = "held"

    def __init__(self, model_format: ModelFormat, trim: str | None = None) -> None:
        self.model_format = model_format
        self.trim = trim  # "oldest": the conversation is rendered again for each turn dropped
        self.rendering, self.release = threading.Event(), threading.Event()
        self.events: list[str] = []

    def prepare(self, messages: Any, tools: Any = None, **generation: Any) -> Any:
        self.events.append("render starts")
        self.rendering.set()
        self.release.wait(timeout=10)  # a server holding its loop here answers no one else
        self.events.append("render ends")
        return messages

    def prepare_text(self, prompt: str, **generation: Any) -> Any:
        return prompt

    def generate(self, request: Any, cancel: Any = None) -> Completion:
        return Completion(text="ok", finish_reason="stop", usage={})

    def generate_stream(self, request: Any, cancel: Any = None) -> Iterator[StreamDelta]:
        yield StreamDelta(text="ok", finish_reason="stop")

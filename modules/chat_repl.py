"""The loop behind ``prompter chat``: read a line, stream the answer, keep the history.

A line that starts with ``/`` is a command for the loop and never reaches the
model (``/help``, ``/reset``, ``/exit``); ``//text`` sends ``/text``. A turn the
model cannot answer (a typed error: the conversation outgrew its context, the server
refused it) is said, with the remedy, and left out of the history, and Ctrl-C stops an
answer; the chat goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from modules.errors import ModuleError
from prompter.errors import PromptError

__all__ = ["HELP", "run_chat"]

HELP = """commands (never sent to the model):
  /help    this list
  /reset   forget the conversation so far
  /exit    leave (also /quit, Ctrl-D)
  //text   send "/text" to the model"""


def run_chat(module: Any, read: Callable[[str], str] = input, out: TextIO | None = None) -> int:
    """Chat with ``module`` (anything with ``.stream(question, history=...)``) until /exit or end of input."""
    import sys

    write = (out or sys.stdout).write
    history: list[list[str]] = []
    write("type a message, or /help\n")
    while True:
        try:
            line = read("you> ")
        except (EOFError, KeyboardInterrupt):
            write("\n")
            return 0
        text = line.strip()
        if not text:
            continue
        if text.startswith("/") and not text.startswith("//"):
            command = text.split()[0].lower()
            if command in ("/exit", "/quit"):
                return 0
            if command == "/reset":
                history.clear()
                write("(conversation reset)\n")
            elif command == "/help":
                write(HELP + "\n")
            else:
                write(f"unknown command {command}; /help lists them\n")
            continue
        question = text[1:] if text.startswith("//") else line
        write("model> ")
        try:
            with module.stream(question, history=history) as stream:
                for piece in stream:
                    write(piece)
                    (out or sys.stdout).flush()
        except (ModuleError, PromptError) as exc:  # said, and the chat goes on; the failed turn is not kept
            write(f"\nerror: {type(exc).__name__}: {exc}\n(/reset forgets the conversation so far)\n")
            continue
        except KeyboardInterrupt:  # Ctrl-C stops this answer, not the chat
            write("\n(answer stopped; not kept)\n")
            continue
        write("\n")
        history.append([question, stream.text])

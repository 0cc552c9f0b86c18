"""The documented limits on what one request may ask of the server; over any of them, a 400.

Each limit bounds a cost a client could otherwise make the server pay, for
itself or at the expense of every other client (generation is serialised):

* ``MAX_NESTING``: JSON nesting depth anywhere in the body (tool schemas, extra
  message fields, tool-call arguments, given as objects or as JSON strings).
  Templates, validation and span checks walk client JSON recursively; past this
  depth a request is refused before any of them runs.
* ``MAX_STOP_STRINGS`` and ``MAX_STOP_CHARS``: how many ``stop`` strings, and
  how long each. Stop matching keeps only the last ``MAX_STOP_CHARS - 1``
  characters of the answer, so its cost per generated character is bounded.
* ``MAX_MESSAGES`` and ``MAX_TOOLS``: the number of messages and of tools
  (OpenAI's own limit on tools is 128).
* ``MAX_TOKENS``: the largest ``max_tokens`` / ``max_completion_tokens`` read
  at all (the model's context is the real bound: over it, a 400
  ``context_length_exceeded`` naming the token counts).
* the body itself: ``max_body_bytes`` (2 MB by default, a ``create_app``
  option), 413 over it.
"""

from __future__ import annotations

__all__ = ["MAX_MESSAGES", "MAX_NESTING", "MAX_STOP_CHARS", "MAX_STOP_STRINGS", "MAX_TOKENS", "MAX_TOOLS"]

MAX_NESTING = 64
MAX_STOP_STRINGS = 16
MAX_STOP_CHARS = 256
MAX_MESSAGES = 2048
MAX_TOOLS = 128
MAX_TOKENS = 1 << 20

"""Removing secrets from everything that comes back from a server.

A server may echo the API key anywhere: a header (``x-request-id``), an error
message, a JSON field (where an escape such as ``\\u0073`` hides it from a
search of the raw text), or the streamed answer, split across two events. A
:class:`Scrubber` knows the secrets (the key, and any ``Authorization`` /
``x-api-key`` / ``api-key`` header value given by the caller) and replaces
each occurrence with ``***``:

- :meth:`Scrubber.text` in one string, :meth:`Scrubber.value` in every string
  and key of a decoded JSON value;
- :class:`StreamScrubber` in text that arrives in pieces: it holds back the
  end of what it has seen while that end could be the start of a secret, so
  a secret split across pieces is caught when its last piece arrives;
- :meth:`Scrubber.cut` in the beginning of a longer text kept up to a cap (an
  error body): masked before it is cut, less an end that could begin a secret.

Libraries log server data too (urllib3 logs unparsable headers at WARNING, with
the bytes and a traceback): :func:`mask_library_logs` puts a filter on the
loggers of ``urllib3``, ``requests`` and this package that masks the secrets of
every live module in each record's message and traceback.

A server need not echo a secret as it was sent: it may percent-encode it (a URL
in a ``Location`` or a message), JSON- or ``repr``-escape it (text that is not
valid JSON, a log line), base64-encode it (``Authorization: Basic``, at any
offset inside a longer encoding), or wrap it across lines (a line break, with up
to 64 spaces or tabs on each side, between any two of its characters). Each
secret is masked in every one of those forms (:func:`forms_of`), and wrapped
across lines both in whole texts and in text that arrives in pieces (a stream
holds back a line break that could be inside a wrapped secret). In whole texts
the line break may also be written as an escape (``\\n`` inside a JSON string,
such as a tool call's arguments); streamed text is decoded text, whose line
breaks are real ones.

Which caller-given headers are credentials: the known ones (``Authorization``,
``x-api-key``...) and any whose name says so (it holds ``key``, ``token``,
``secret``, ``auth``, ``password``, ``cookie``, ``credential`` or
``signature``): ``X-Auth-Token``, ``Ocp-Apim-Subscription-Key``, ``apikey``...

A caller may also hand a secret to a call by mistake (as an option's value, a keyword, a role):
:func:`mask_error` masks it in the error that echoes the value.

Secrets shorter than 4 characters are not scrubbed: replacing every ``a`` of
an answer would destroy it and protect nothing.

Why this file is long: the forms of a secret, the whole-text and the piecewise
scrubbers and the log filter share one set of forms, and read best together.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import threading
import traceback
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK",
    "Scrubber",
    "StreamScrubber",
    "forms_of",
    "is_secret_header",
    "mask_error",
    "mask_library_logs",
    "masked_headers",
    "secrets_of_headers",
]

MASK = "***"
_MIN_SECRET = 4
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key"})
#: Words that make a header name a credential's (``X-Auth-Token``, ``Ocp-Apim-Subscription-Key``, ``Cookie``...).
_SECRET_WORDS = ("key", "token", "secret", "auth", "password", "passwd", "cookie", "credential", "signature")
_BASE64_FORMS_FROM = 12  # shorter secrets: their base64 core is too short to tell from other base64 text
_WRAP_SPACES = 64  # spaces or tabs on each side of a line break inside a wrapped secret (bounds a stream's hold)
# a line break with spaces or tabs around it; each may be written as an escape (a backslash and "n" or
# "t" in a JSON string such as a tool call's arguments, or escaped twice)
_BREAK = r"(?:\r\n|\n|\r|(?:\\{1,2}r)?\\{1,2}n|\\{1,2}r)"
_SPACE = r"(?:[ \t]|\\{1,2}t)"
_GAP = rf"(?:{_SPACE}{{0,{_WRAP_SPACES}}}{_BREAK}{_SPACE}{{0,{_WRAP_SPACES}}})?"


def is_secret_header(name: object) -> bool:
    """Whether a header named *name* carries a credential: a known one, or a name that says so."""
    if not isinstance(name, str):
        return False
    lower = name.lower()
    return lower in _SECRET_HEADERS or any(word in lower for word in _SECRET_WORDS)


def masked_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """*headers* with every credential header's value shown as ``***`` (for reprs and logs)."""
    return {name: MASK if is_secret_header(name) else value for name, value in headers.items()}


def secrets_of_headers(headers: Mapping[str, str]) -> list[str]:
    """The credential values among caller-given headers: each whole value, the token of ``Bearer <token>``,
    the ``user:password`` (and password) inside ``Basic <base64>``, and each value of a ``Cookie``."""
    found: list[str] = []
    for name, value in headers.items():
        if not is_secret_header(name) or not isinstance(value, str):
            continue
        found.append(value)
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if token and scheme.lower() in ("bearer", "basic", "token"):
            found.append(token)
        if token and scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            found += [pair, pair.partition(":")[2]] if ":" in pair else []
        if name.lower() == "cookie":
            found += [part.partition("=")[2].strip() for part in value.split(";")]
    return found


def forms_of(secret: str) -> set[str]:
    """The forms in which *secret* may come back: as it is, percent-encoded (either hex case, ``+`` for
    space), JSON- and ``repr``-escaped (once or twice), JSON-unescaped (a secret holding ``\\`` or ``"``
    pasted raw into a JSON string), and, for a long secret, its base64 at each of the three offsets
    (the characters of an encoding that depend on the secret's bytes alone, in both alphabets)."""
    found = {secret}
    for encoded in (quote(secret, safe=""), quote(secret, safe="/"), quote_plus(secret, safe="")):
        found |= {encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)}
    escaped = {secret}
    try:  # pasted raw into a JSON string (a server formatting its error text), it is read back unescaped
        escaped.add(json.loads(f'"{secret}"'))
    except ValueError:
        pass
    for _ in range(2):  # JSON or repr escaping, twice (the repr in a log line of a JSON text)
        for text in list(escaped):
            backslashed = text.replace("\\", "\\\\")
            escaped |= {backslashed, backslashed.replace('"', '\\"'), backslashed.replace("'", "\\'")}
            escaped |= {backslashed.replace('"', '\\"').replace("/", "\\/")}
    found |= escaped
    if len(secret) >= _BASE64_FORMS_FROM:
        raw = secret.encode("utf-8")
        for offset in range(3):
            encoded = base64.b64encode(bytes(offset) + raw).decode("ascii")
            core = encoded[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6]
            found |= {core, core.replace("+", "-").replace("/", "_")}
    return {form for form in found if len(form) >= _MIN_SECRET}


class Scrubber:
    """Replaces every occurrence of each secret with ``***``."""

    __slots__ = ("__weakref__", "_given", "_secrets", "_wrapped")

    def __init__(self, secrets: Iterable[str]) -> None:
        given = {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_SECRET}
        unique = set().union(*(forms_of(s) for s in given)) if given else set()
        self._secrets = tuple(sorted(unique, key=len, reverse=True))  # longest first: no half-masked key
        self._given = tuple(sorted(given, key=len, reverse=True))
        # each secret with a line break (and the spaces around it) allowed between any two characters
        self._wrapped = [re.compile(_GAP.join(map(re.escape, s))) for s in self._given]

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def __copy__(self) -> Scrubber:
        return self  # immutable; and a copy would not be the one registered by mask_library_logs

    def __deepcopy__(self, memo: dict[int, Any]) -> Scrubber:
        return self

    def __reduce__(self) -> Any:  # it holds the secrets in clear: a pickle would write them out
        raise TypeError(
            "a Scrubber (it holds the API key and credential headers it masks) cannot be pickled: "
            "build the module in the other process from the same arguments (the key from the environment)"
        )

    @property
    def longest(self) -> int:
        """Length of the longest secret (0 when there is none)."""
        return len(self._secrets[0]) if self._secrets else 0

    def text(self, text: str) -> str:
        """``text`` with every secret masked (repeated until none is left: a mask can join two halves)."""
        for _ in range(len(text)):
            found = False
            for secret in self._secrets:
                if secret in text:
                    text = text.replace(secret, MASK)
                    found = True
            if self._wrapped and ("\n" in text or "\r" in text or "\\" in text):
                for pattern in self._wrapped:
                    text, count = pattern.subn(MASK, text)
                    found = found or count > 0
            if not found:
                break
        return text

    def cut(self, text: str, limit: int) -> str:
        """``text``, the beginning of a longer text, masked and cut to at most ``limit`` characters, less
        any end that could begin a secret: masking first catches a secret the cut would split, and a
        secret that ``text`` itself ends inside loses its beginning, as a stream's held-back end would."""
        text = self.text(text)[:limit]
        keep = self.held_back(text)
        return text[: len(text) - keep]

    def may_hide(self, raw: str) -> bool:
        """Whether JSON text ``raw`` could decode to a string holding a secret: it holds one, or an escape.

        Without either, every decoded string is a plain substring of ``raw``, so
        decoding cannot reveal a secret and :meth:`value` can be skipped.
        """
        return bool(self._secrets) and ("\\" in raw or any(secret in raw for secret in self._secrets))

    def value(self, value: Any) -> Any:
        """A copy of a decoded JSON value with every string and key masked (iterative: any depth)."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if not isinstance(value, (dict, list)):
            return value
        root: list[Any] = [None]
        stack: list[tuple[Any, list[Any] | dict[str, Any], Any]] = [(value, root, 0)]
        while stack:
            item, parent, slot = stack.pop()
            if isinstance(item, dict):
                copy: Any = {}
                for k, v in item.items():
                    stack.append((v, copy, self.text(k) if isinstance(k, str) else k))
            elif isinstance(item, list):
                copy = [None] * len(item)
                for i, v in enumerate(item):
                    stack.append((v, copy, i))
            elif isinstance(item, str):
                copy = self.text(item)
            else:
                copy = item
            parent[slot] = copy
        return root[0]

    def held_back(self, text: str) -> int:
        """How many final characters of ``text`` could begin a secret (to hold until more text comes)."""
        best = 0
        for secret in self._secrets:
            first = secret[0]  # only where the secret's first character is can a prefix of it start
            i = text.find(first, max(0, len(text) - len(secret) + 1))
            while i != -1 and len(text) - i > best:
                if secret.startswith(text[i:]):
                    best = len(text) - i
                    break
                i = text.find(first, i + 1)
        if any(space in text for space in " \t\r\n"):  # only then can a wrapped secret have begun
            for secret in self._given:
                best = max(best, _wrapped_start(text, secret, best))
        return best


def _wrapped_start(text: str, secret: str, shorter_than: int) -> int:
    """The length of the longest end of ``text`` (longer than ``shorter_than``) that could begin ``secret``
    wrapped across lines (``Scrubber``'s line-break gaps between its characters); 0 when there is none.

    The end of ``text`` is read as a small automaton over the states (characters of ``secret`` matched,
    where in a gap), from each place where ``secret``'s first character is, earliest first. The ends
    tried are bounded: a prefix of ``secret`` with a gap after each of its characters.
    """
    reach = len(secret) * (2 * _WRAP_SPACES + 3)
    i = text.find(secret[0], max(0, len(text) - reach))
    while i != -1 and len(text) - i > shorter_than:
        after = text[i + 1 : i + 2]  # quick test first: the next character continues it, or begins a gap
        if (not after or after == secret[1] or after in " \t\r\n") and _could_begin(text, i, secret):
            return len(text) - i
        i = text.find(secret[0], i + 1)
    return 0


def _could_begin(text: str, start: int, secret: str) -> bool:
    """Whether ``text[start:]`` is the beginning of ``secret`` wrapped across lines (not all of it)."""
    states = {(0, _AT, 0)}  # (characters of secret matched, where in a gap, spaces in that part of it)
    for at in range(start, len(text)):  # no slice: most starts end at their second character
        states = {after for state in states for after in _steps(state, text[at], secret)}
        if not states:
            return False
    return any(matched < len(secret) for matched, _, _ in states)


_AT, _BEFORE, _CR, _AFTER = range(4)  # between characters; spaces before a line break; after "\r"; after it


def _steps(state: tuple[int, int, int], ch: str, secret: str) -> Iterator[tuple[int, int, int]]:
    """The states one character ``ch`` leads to from ``state`` (see :func:`_could_begin`)."""
    matched, part, spaces = state
    if part != _BEFORE and matched < len(secret) and ch == secret[matched]:
        yield matched + 1, _AT, 0
    if part == _AT and not 0 < matched < len(secret):
        return  # a gap only between two characters
    if ch in " \t":
        if part == _AT or (part == _BEFORE and spaces < _WRAP_SPACES):
            yield matched, _BEFORE, spaces + 1
        elif part == _CR or spaces < _WRAP_SPACES:
            yield matched, _AFTER, spaces + 1
    elif ch == "\n" and part != _AFTER:
        yield matched, _AFTER, 0
    elif ch == "\r" and part in (_AT, _BEFORE):
        yield matched, _CR, 0


class StreamScrubber:
    """Masks secrets in text that arrives in pieces; :meth:`feed` returns what is safe to hand on now."""

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber
        self._pending = ""

    def feed(self, piece: str) -> str:
        """Add ``piece``; return the text that can no longer be part of a secret (masked)."""
        if not self._scrubber:
            return piece
        text = self._scrubber.text(self._pending + piece)
        keep = self._scrubber.held_back(text)
        self._pending = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """The end of the stream: what was held back (it cannot complete a secret any more)."""
        rest, self._pending = self._pending, ""
        return rest


def mask_error(exc: BaseException, scrubber: Scrubber) -> None:
    """Mask ``scrubber``'s secrets in ``exc`` in place, keeping its type: in its ``args``, its attributes
    (``message``, ``__notes__``...) and those of the errors chained to it."""
    if not scrubber:
        return
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        try:
            error.args = tuple(scrubber.value(arg) for arg in error.args)
            for name, value in list(vars(error).items()):
                if isinstance(value, (str, list, dict)):
                    setattr(error, name, scrubber.value(value))
        except (AttributeError, TypeError):  # an error type that refuses new values keeps them
            pass
        error = error.__cause__ or error.__context__


class _LogMask(logging.Filter):
    """Masks the secrets of every registered (live) :class:`Scrubber` in a log record."""

    def __init__(self) -> None:
        super().__init__()
        self.scrubbers: weakref.WeakSet[Scrubber] = weakref.WeakSet()
        self._lock = threading.Lock()  # a copy racing an add raised into the call that logged

    def add(self, scrubber: Scrubber) -> None:
        with self._lock:
            self.scrubbers.add(scrubber)

    def _mask(self, text: str) -> str:
        with self._lock:
            live = list(self.scrubbers)
        for scrubber in live:
            text = scrubber.text(text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.scrubbers:
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken record is the logging module's to report
            return True
        masked = self._mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            shown = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            masked = self._mask(shown)
            if masked != shown:  # the formatter prints exc_text when there is no exc_info
                record.exc_info, record.exc_text = None, masked
        return True


_LOGGERS = (
    "urllib3",
    "urllib3.connectionpool",
    "urllib3.connection",
    "urllib3.response",
    "urllib3.poolmanager",
    "urllib3.util.retry",
    "requests",
    "modules.online",
)
_log_mask = _LogMask()
_installed = False
_install_lock = threading.Lock()


def mask_library_logs(scrubber: Scrubber) -> None:
    """Mask ``scrubber``'s secrets in the records of the HTTP libraries' loggers (for as long as it lives).

    A logger's filters apply to the records logged on it, so the filter goes on each
    logger that logs while a request is sent or read.
    """
    global _installed
    if not scrubber:
        return
    _log_mask.add(scrubber)
    with _install_lock:
        if not _installed:
            for name in _LOGGERS:
                logging.getLogger(name).addFilter(_log_mask)
            _installed = True

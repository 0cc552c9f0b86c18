"""Media parts for the API dialects: local files read into data URLs, URLs checked by extension.

A media part's ``url`` is a ``data:`` URL, a web URL, or a local file (a plain path or a
``file://`` URL). :func:`resolve` turns it into what a dialect can send:

* a local file becomes a base64 ``data:`` URL with its MIME type (or, for DashScope, which
  reads local files itself, a ``file://`` URL with the absolute path, its ``%``, ``+``, ``#``
  and ``?`` escaped so that the SDK's ``unquote_plus`` reads back the same path);
* a local file that is missing, too large, or whose extension is not one of the part's kind,
  and a web URL whose extension names another kind of file (``https://x/doc.pdf`` given as an
  image), is skipped with a warning on the ``prompter`` logger, as AgentScope skips it;
* a web URL without an extension is kept: nothing here can tell what it holds;
* a ``data:`` URL is kept as it is, unless its media type names another kind (``data:application/pdf``
  given as an image), which is skipped with a warning too.

This is the one place in ``prompter/`` that reads files; it reads only regular files with a
media extension, at most :data:`MAX_BYTES` of them. Where messages come from someone else (an
HTTP server relaying its clients' messages), wrap the rendering in ``with local_files(False):``:
a local path is then refused with :class:`~prompter.errors.UnsupportedContentError`, so no client
can make the server read and forward its files.

>>> resolve(ContentPart("image_url", url="https://example.com/cat.png"), "input").url
'https://example.com/cat.png'
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from urllib.parse import unquote, urlsplit

from prompter.conversation import Conversation
from prompter.errors import MessageError, UnsupportedContentError
from prompter.messages import ContentPart, Message

__all__ = [
    "EXTENSIONS",
    "MAX_BYTES",
    "local_files",
    "local_path",
    "media_type",
    "resolve",
    "resolve_conversation",
    "resolved",
    "web_extension",
]

MAX_BYTES = 20 * 1024 * 1024
"""The largest local file read into a request (the providers' own inline limits are about this)."""

# kind of part -> extension -> MIME type (the types the providers document)
EXTENSIONS: dict[str, dict[str, str]] = {
    "image_url": {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "bmp": "image/bmp",
        "tif": "image/tiff",
        "tiff": "image/tiff",
        "heic": "image/heic",
        "heif": "image/heif",
    },
    "audio": {
        "wav": "audio/wav",
        "mp3": "audio/mp3",
        "flac": "audio/flac",
        "ogg": "audio/ogg",
        "aac": "audio/aac",
        "m4a": "audio/m4a",
        "amr": "audio/amr",
        "aiff": "audio/aiff",
    },
    "video": {
        "mp4": "video/mp4",
        "webm": "video/webm",
        "mov": "video/mov",
        "avi": "video/avi",
        "mkv": "video/x-matroska",
        "flv": "video/x-flv",
        "wmv": "video/wmv",
        "mpeg": "video/mpeg",
        "mpg": "video/mpg",
        "3gp": "video/3gpp",
    },
}
_KIND_WORD = {"image_url": "image", "audio": "audio", "video": "video"}
# DashScope's SDK reads a file:// URL back with urlparse and unquote_plus, which cut a path at "#"
# and "?", drop tabs and line breaks, and decode "%XX" and "+": those are written escaped
_FILE_URL_ESCAPES = str.maketrans({c: f"%{ord(c):02X}" for c in "%+#?\t\n\r"})


_LOCAL_FILES: ContextVar[bool] = ContextVar("prompter_local_files", default=True)


@contextmanager
def local_files(allowed: bool) -> Iterator[None]:
    """Allow or refuse reading local media files while the block runs (in this thread or task)."""
    token = _LOCAL_FILES.set(bool(allowed))
    try:
        yield
    finally:
        _LOCAL_FILES.reset(token)


def _warn(message: str) -> None:
    import logging  # only on this rare path: logging costs import time

    logging.getLogger("prompter").warning(message)


def local_path(url: str) -> str | None:
    """The file a ``url`` names when it is a local path or a ``file://`` URL; None for any other URL."""
    if url[:7].lower() == "file://":
        rest = url[7:]
        if rest[:10].lower() == "localhost/":  # RFC 8089: file://localhost/p is the local file /p
            rest = rest[9:]
        return unquote(rest)
    scheme = urlsplit(url).scheme
    if scheme == "" or (len(scheme) == 1 and url[1:3] in (":\\", ":/")):  # a drive letter is no scheme
        return url
    return None


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rpartition(".")[2].lower() if "." in name else ""


def web_extension(url: str) -> str:
    """The lower-case extension of a URL's path ("" when it has none)."""
    return _extension(urlsplit(url).path)


def _shown_url(url: str) -> str:
    """A web URL as a log line shows it: no user info, query or fragment (a signed URL's key is there)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"[:80]


def media_type(kind: str, path: str) -> str | None:
    """The MIME type of a file of this kind of part, by its extension; None when it is not one."""
    return EXTENSIONS[kind].get(_extension(path))


def resolve(part: ContentPart, where: str, *, file_urls: bool = False) -> ContentPart | None:
    """``part`` in a form an API can take, or None (with a warning) when it must be skipped.

    ``file_urls``: keep local files as ``file://`` URLs with an absolute path (DashScope) instead of
    reading them into ``data:`` URLs.
    """
    if part.type == "text":
        return part
    word = _KIND_WORD[part.type]
    if part.url[:5].lower() == "data:":
        # its media type says what it holds: another kind (a PDF given as an image) is skipped like a .pdf URL
        head, comma, _ = part.url[5:].partition(",")  # no comma: malformed, the dialect's validator names it
        given = head.split(";", 1)[0].strip().lower()
        if comma and given and given.split("/", 1)[0] != word:
            _warn(f"{where}: skipped a data: URL of type {given[:60]!r}: not an {word} this API can take")
            return None
        return part
    try:
        path = local_path(part.url)
        extension = web_extension(part.url) if path is None else ""
    except ValueError as exc:  # urlsplit cannot read it ("Invalid IPv6 URL"): no API could
        raise MessageError(
            f"{where}: the {word} URL cannot be read ({exc}); give an https:// or data: URL, or a local path"
        ) from None
    if path is None:
        if extension and extension not in EXTENSIONS[part.type]:
            shown = _shown_url(part.url)
            _warn(f"{where}: skipped {shown!r}: a {'.' + extension[:10]!r} URL is not an {word} this API can take")
            return None
        return part
    if not _LOCAL_FILES.get():
        raise UnsupportedContentError(
            f"{where}: local files are not read here (local_files(False)); send the {word} as an https:// or data: URL"
        )
    mime = media_type(part.type, path)
    if mime is None:
        _warn(f"{where}: skipped local file {path[:80]!r}: its extension is not one of an {word}")
        return None
    try:
        if not os.path.isfile(path):
            _warn(f"{where}: skipped local file {path[:80]!r}: no such file")
            return None
        if os.path.getsize(path) > MAX_BYTES:
            _warn(f"{where}: skipped local file {path[:80]!r}: larger than {MAX_BYTES} bytes")
            return None
        if file_urls:
            return part._replace(url="file://" + os.path.abspath(path).translate(_FILE_URL_ESCAPES))
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        _warn(f"{where}: skipped local file {path[:80]!r}: {type(exc).__name__}")
        return None
    return part._replace(url=f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}")


def resolved(parts: tuple[ContentPart, ...], where: str, *, file_urls: bool = False) -> tuple[ContentPart, ...] | str:
    """Every part resolved, the skipped ones left out (``""`` when none is left: no API takes an
    empty list of parts, and an empty text is what each dialect already knows how to treat)."""
    out = []
    for k, part in enumerate(parts):
        done = resolve(part, f"{where}.content[{k}]", file_urls=file_urls)
        if done is not None:
            out.append(done)
    return tuple(out) if out else ""


def _has_media(message: Message) -> bool:
    return not isinstance(message.content, str) and any(part.type != "text" for part in message.content)


def resolve_conversation(conv: Conversation, *, file_urls: bool = False) -> Conversation:
    """``conv`` with every media part resolved (the conversation itself when it has none)."""
    history = conv.history
    # pairs and text-only messages (the common case) are skipped without a call per turn
    if any(type(turn) is not tuple and type(turn[1]) is not str and _has_media(turn) for turn in history):  # type: ignore[arg-type]
        history = tuple(
            turn._replace(content=resolved(turn.content, f"history[{i}]", file_urls=file_urls))  # type: ignore[arg-type]
            if isinstance(turn, Message) and _has_media(turn)
            else turn
            for i, turn in enumerate(history)
        )
    current = conv.current
    if any(_has_media(m) for m in current):
        several = len(current) > 1
        current = tuple(
            m._replace(content=resolved(m.content, f"input[{j}]" if several else "input", file_urls=file_urls))  # type: ignore[arg-type]
            if _has_media(m)
            else m
            for j, m in enumerate(current)
        )
    if history is conv.history and current is conv.current:
        return conv
    return conv._replace(history=history, current=current)

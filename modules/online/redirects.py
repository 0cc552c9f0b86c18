"""Redirects: followed only within the origin the caller chose; anything else is a typed error.

``requests`` follows redirects by itself and, on a change of host, drops only the
``Authorization`` header: an ``x-api-key`` (Anthropic), ``x-goog-api-key`` (Gemini) or a
caller's ``api-key`` header would go to whatever host a ``Location`` names, with the
conversation in the body (307/308 re-send it). The module sends with
``allow_redirects=False`` and decides here:

- a 307 or 308 to the **same origin** (scheme, host and port, default ports folded) is
  followed, up to :data:`MAX_REDIRECTS` hops, with the same method, body and headers;
- anything else -- another origin (an ``https`` to ``http`` downgrade included), a 301/302/303
  (which would turn the POST into a body-less GET), a ``Location`` carrying credentials, a
  loop -- raises :class:`CrossOriginRedirectError` before a single byte goes to the new place.

Why refuse rather than strip the secrets and follow: the body is the caller's
conversation and may be as confidential as the key; a header we do not know to be a secret
(``x-tenant-token``) would still leave; and the other host would answer in the name of the
API the caller configured. The remedy is one argument away: ``base_url=`` the new location.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from urllib.parse import urljoin, urlparse, urlsplit

from modules.errors import CrossOriginRedirectError

__all__ = ["MAX_REDIRECTS", "CrossOriginRedirectError", "next_hop", "refuse_unparsable_location", "same_origin"]

#: Same-origin hops followed for one attempt before giving up (a loop ends here).
MAX_REDIRECTS = 5

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_KEEP_METHOD = frozenset({307, 308})  # the only redirects that re-send a POST with its body
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a port that is not a number
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username is not None:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme]


def same_origin(a: str, b: str) -> bool:
    """Whether ``b`` is on the same origin as ``a`` (and carries no credentials of its own)."""
    first, second = _origin(a), _origin(b)
    return first is not None and first == second


def _shown(url: str, scrub: Callable[[str], str]) -> str:
    """``url`` without query, fragment or user info (server data: masked too), for an error message."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return scrub(f"{parts.scheme}://{netloc}{parts.path}")[:300]  # masked whole, then cut: no key split
    except ValueError:
        return "an unparsable location"


def refuse_unparsable_location(status: int, headers: Mapping[str, str]) -> None:
    """Raise :class:`CrossOriginRedirectError` for a redirect whose ``Location`` is not a URL.

    ``requests`` reads a redirect's target even with ``allow_redirects=False`` (for ``response.next``),
    the way it would follow it; a target it cannot parse raised a bare ``ValueError`` out of the call
    (``http://[::1``). Checked the same way here, first."""
    if status not in _REDIRECTS:
        return
    location = headers.get("location")
    if not location:
        return
    try:
        text = location.encode("latin-1").decode("utf-8")  # as requests decodes it
        urlparse("http:" + text if text.startswith("//") else text)
    except (UnicodeError, ValueError):
        raise _not_a_url(status) from None


def _not_a_url(status: int) -> CrossOriginRedirectError:
    return CrossOriginRedirectError(  # server data: not shown
        f"the server answered HTTP {status} with a Location that is not a URL; the redirect was not followed "
        "(set base_url= to the API's location if it moved)",
        status_code=status,
        location="an unparsable location",
    )


def next_hop(url: str, status: int, headers: Mapping[str, str], hops: int, scrub: Callable[[str], str]) -> str | None:
    """Where to send the request next: None when ``status`` is not a redirect (the answer stands),
    the same-origin target of a 307/308; otherwise :class:`CrossOriginRedirectError`."""
    if status not in _REDIRECTS:
        return None
    location = headers.get("location")
    if not location:
        return None  # a 3xx without a target is an answer like any other
    try:
        target = urljoin(url, location.strip())
    except ValueError:  # e.g. "http://[::1": not a URL at all
        raise _not_a_url(status) from None
    shown = _shown(target, scrub)
    remedy = f"set base_url= to the API's new location if you trust it (HTTP {status} to {shown})"
    if not same_origin(url, target):
        raise CrossOriginRedirectError(
            f"the server redirected to another origin, {shown}; the module never follows a redirect off the "
            f"origin of base_url, so neither the key nor the conversation was sent there: {remedy}",
            status_code=status,
            location=shown,
        )
    if status not in _KEEP_METHOD:
        raise CrossOriginRedirectError(
            f"the server answered HTTP {status}, which turns the POST into a GET without its body; only 307 "
            f"and 308 are followed: {remedy}",
            status_code=status,
            location=shown,
        )
    if hops >= MAX_REDIRECTS:
        raise CrossOriginRedirectError(
            f"more than {MAX_REDIRECTS} redirects within the origin (a loop?): {remedy}",
            status_code=status,
            location=shown,
        )
    return target

"""A redirect whose ``Location`` is not a URL at all (``http://[::1``: an unclosed IPv6 bracket) is a
``CrossOriginRedirectError``, sent nowhere and not retried. ``requests`` reads the target even with
``allow_redirects=False`` (for ``response.next``), and raised a bare ``ValueError`` out of the call."""

from __future__ import annotations

import pytest
from fault_server import FaultServer, Reply

from modules import OnlineChatModule
from modules.online.redirects import CrossOriginRedirectError

LOCATIONS = ["http://[::1", "http://[", "//[zz/v1/chat/completions", "https://[fe80::1%zz/v1"]


@pytest.mark.parametrize("location", LOCATIONS, ids=repr)
@pytest.mark.parametrize("streamed", [False, True], ids=["call", "stream"])
def test_a_redirect_to_no_url_is_refused_typed(location: str, streamed: bool) -> None:
    with FaultServer() as server:
        server.script.append(Reply(status=307, body=b"", headers={"Location": location}))
        m = OnlineChatModule(base_url=server.base_url, model="m", max_retries=0)
        with pytest.raises(CrossOriginRedirectError, match="with a Location that is not a URL") as info:
            m.stream("hi") if streamed else m("hi")
        assert info.value.status_code == 307
        assert info.value.location == "an unparsable location"
        assert server.attempts == 1  # nothing was sent anywhere else
        m.close()

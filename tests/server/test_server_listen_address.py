"""Where the server listens: a host or port it cannot use is a ModuleConfigError before anything loads,
and an IPv6 host gives a base URL a client can use.

Before, ``start(serve=True, host="::1")`` served at ``http://::1:PORT/v1``, which the openai client
refuses ("Invalid port"); ``host=""`` listened on every interface and reported ``http://:PORT/v1``;
a non-str host or an out-of-range port failed inside the server's thread with a traceback and an
untyped "did not start" error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules import ModuleConfigError
from modules.local.trainable import TrainableModule
from modules.server.lifecycle import ServerThread


@pytest.mark.parametrize(
    ("host", "url"),
    [("::1", "http://[::1]:8000"), ("::", "http://[::]:8000"), ("127.0.0.1", "http://127.0.0.1:8000")],
    ids=["ipv6-loopback", "ipv6-any", "ipv4"],
)
def test_an_ipv6_host_is_written_in_brackets_in_the_url(host: str, url: str) -> None:
    assert ServerThread(object(), host=host, port=8000).url == url


@pytest.mark.parametrize("host", ["", "  ", 5, None, b"127.0.0.1"], ids=repr)
def test_a_host_that_is_no_interface_is_refused_before_loading(tiny_model_path: Path, host: object) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=2)
    with pytest.raises(ModuleConfigError, match=r"^host: expected the interface to listen on"):
        module.start(serve=True, host=host)  # type: ignore[arg-type]
    assert "not started" in repr(module)


@pytest.mark.parametrize("port", [-1, 65536, "8000", True, 1.5, None], ids=repr)
def test_a_port_out_of_range_or_not_an_int_is_refused_before_loading(tiny_model_path: Path, port: object) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=2)
    with pytest.raises(ModuleConfigError, match=r"^port: expected an int from 0 to 65535"):
        module.start(serve=True, port=port)  # type: ignore[arg-type]
    assert "not started" in repr(module)

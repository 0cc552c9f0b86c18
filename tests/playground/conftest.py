"""Fixtures of the playground tests: a real playground server on 127.0.0.1 and, where one is
installed, the system's headless Chromium driven by selenium (see ``playground_browser``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the playground needs the 'server' extra (fastapi, uvicorn)")


@pytest.fixture(scope="module")
def playground_url() -> Iterator[str]:
    """The base URL (ending in '/') of a playground served by uvicorn in a thread."""
    from modules.playground import create_playground_app
    from modules.server.lifecycle import ServerThread

    server = ServerThread(create_playground_app()).start()
    try:
        yield server.url + "/"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium from the system's packages (skips with the reason when there is none)."""
    from playground_browser import missing_browser, start_browser

    reason = missing_browser()
    if reason:
        pytest.skip(reason)
    driver = start_browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()

"""An async call on a closed module raises at once and starts no worker thread (one was started, and
outlived the module, for every closed module called again)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from modules import ModuleConfigError, OnlineChatModule


def _workers() -> int:
    return sum(t.name.startswith("prompter-async") and t.is_alive() for t in threading.enumerate())


def test_acall_arespond_and_astream_on_a_closed_module_raise_without_a_thread() -> None:
    m = OnlineChatModule(base_url="http://127.0.0.1:9/v1", model="m")  # never contacted
    m.close()
    before = _workers()

    async def main() -> None:
        with pytest.raises(ModuleConfigError, match="this module was closed"):
            await m.acall("hi")
        with pytest.raises(ModuleConfigError, match="this module was closed"):
            await m.arespond("hi")
        with pytest.raises(ModuleConfigError, match="this module was closed"):
            async with m.astream("hi"):
                pass

    asyncio.run(main())
    assert _workers() == before
    assert m._async._pool is None  # the closed module's pool was not made again

"""``start()`` given server options without ``serve=True`` refuses them, before loading anything.

Before, ``m.start(port=8000)``, ``m.start(max_concurrency=4)`` or a typo such as ``m.start(serv=True)``
loaded the model and started no server, silently: the caller's client then found nothing listening.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules import ModuleConfigError
from modules.local.trainable import TrainableModule


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"serv": True}, "'serv'"),
        ({"port": 8000}, "port"),
        ({"host": "0.0.0.0"}, "host"),
        ({"max_concurrency": 4}, "'max_concurrency'"),
        ({"serve": False, "model_name": "tiny"}, "'model_name'"),
    ],
    ids=["typo-serv", "port", "host", "max_concurrency", "serve-false-model_name"],
)
def test_server_options_without_serve_are_a_config_error_naming_them(
    tiny_model_path: Path,  # noqa: F811
    options: dict[str, Any],
    named: str,
) -> None:
    module = TrainableModule(tiny_model_path, max_new_tokens=2)
    with pytest.raises(ModuleConfigError, match=r"without serve=True") as caught:
        module.start(**options)
    assert named in str(caught.value) and "start(serve=True" in str(caught.value)
    assert "not started" in repr(module)  # nothing was loaded: the module is as before the call


def test_the_defaults_without_serve_still_start(tiny_model_path: Path) -> None:  # noqa: F811
    module = TrainableModule(tiny_model_path, max_new_tokens=2).start(serve=False, port=0, host="127.0.0.1")
    try:
        assert isinstance(module("hi"), str)
    finally:
        module.stop()

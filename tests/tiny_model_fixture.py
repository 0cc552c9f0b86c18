"""Session fixtures for tests that need the tiny local model (import the names you use).

The model is built once per test session into a temporary folder (a couple of
seconds); a started module and a served one are shared by the tests that read
them, so the whole local-model suite loads weights once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["served_module", "started_module", "tiny_model_path"]


@pytest.fixture(scope="session")
def tiny_model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny qwen2.5-family model folder, built once per session."""
    from transformers.utils import logging

    from modules.local.tiny_model import cached_tiny_model

    logging.disable_progress_bar()
    return cached_tiny_model(cache_dir=str(tmp_path_factory.mktemp("tiny-cache")))


@pytest.fixture(scope="session")
def started_module(tiny_model_path: Path) -> Iterator[object]:
    """A started TrainableModule on the tiny model (short answers), shared by the session."""
    from modules.local.trainable import TrainableModule

    module = TrainableModule(tiny_model_path, max_new_tokens=8).start()
    yield module
    module.stop()


@pytest.fixture(scope="session")
def served_module(tiny_model_path: Path) -> Iterator[object]:
    """A TrainableModule serving the tiny model on 127.0.0.1 (its own handle, own server)."""
    from modules.local.trainable import TrainableModule

    module = TrainableModule(tiny_model_path, max_new_tokens=8, name="tiny").start(serve=True)
    yield module
    module.stop()

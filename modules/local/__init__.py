"""The local side: ``TrainableModule`` runs a transformers model in this process.

- ``trainable``: the module — load, render, generate, serve;
- ``safe_tokens``: tokenization in which user text can never become a control token;
- ``request``: one generation request and its options;
- ``batching``: the batcher that shares the model between concurrent callers;
- ``streaming``: text pieces and stop words while the model generates;
- ``trimming``: fitting a conversation into the context window;
- ``tool_calls``: reading tool calls back out of generated text;
- ``vocab``: the tokenizer's special tokens, looked up once;
- ``tiny_model``: a tiny model with random weights, built locally for tests and demos.

Importing this package imports neither torch nor transformers; ``start()`` does.
"""

from typing import Any

__all__ = ["TrainableModule"]


def __getattr__(name: str) -> Any:
    if name == "TrainableModule":
        from modules.local.trainable import TrainableModule

        return TrainableModule
    raise AttributeError(f"module 'modules.local' has no attribute {name!r}")

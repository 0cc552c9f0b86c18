"""Every error a module raises reaches another process as raised: same class, message and fields.

Evaluation and batch jobs call models from worker processes; an API error raised in
a worker is pickled back to the parent. Python rebuilds an error by calling its class
with its ``args`` alone, which fails for errors with keyword-only fields
(``status_code``, ``location``) or several positional ones: the parent then got a
``BrokenProcessPool`` (or the unpickling ``TypeError``) instead of the error.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

import modules
from modules.errors import (
    APIStatusError,
    BadRequestError,
    ContextLengthError,
    CrossOriginRedirectError,
    ModuleError,
    StreamError,
    StreamTimeoutError,
)
from modules.testing import FakeOpenAIServer

EXAMPLES: list[ModuleError] = [
    APIStatusError("teapot", status_code=418, request_id="req-1", body={"error": {"message": "teapot"}}),
    BadRequestError("bad thing", status_code=400, request_id=None, body="raw text"),
    CrossOriginRedirectError("went elsewhere", status_code=302, location="https://other.example/x"),
    ContextLengthError(100, 20, 64, remedy="pass trim='oldest'"),
    StreamError("mid-stream", body={"type": "overloaded"}, partial_text="Hel"),
    StreamTimeoutError("too slow", partial_text="He"),
]


def _every_module_error_class() -> list[type[ModuleError]]:
    for info in pkgutil.walk_packages(modules.__path__, "modules."):
        if ".playground" in info.name or info.name.endswith("__main__"):
            continue
        try:
            with warnings.catch_warnings():  # the deprecated re-export shims say so on import
                warnings.simplefilter("ignore", DeprecationWarning)
                importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
    seen: list[type[ModuleError]] = []
    stack: list[type[ModuleError]] = [ModuleError]
    while stack:
        cls = stack.pop()
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return seen


def _same(copy: BaseException, error: BaseException) -> None:
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.args == error.args
    assert vars(copy) == vars(error)


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_an_error_with_keyword_fields_unpickles_as_itself(error: ModuleError) -> None:
    _same(pickle.loads(pickle.dumps(error)), error)


@pytest.mark.parametrize("cls", _every_module_error_class(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_module_error_class_unpickles_as_itself(cls: type[ModuleError]) -> None:
    error = _made(cls)
    error.detail = {"param": "x"}  # fields of any kind ride along
    _same(pickle.loads(pickle.dumps(error)), error)


def _made(cls: type[ModuleError]) -> ModuleError:
    """An instance of *cls* through its own ``__init__``, each required parameter given a value of its type."""
    values = {"int": 400, "str": "what went wrong"}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    try:
        parameters = inspect.signature(cls).parameters
    except ValueError:  # no __init__ of its own: Exception's, which takes the message
        return cls("what went wrong")
    for name, param in parameters.items():
        if param.default is not inspect.Parameter.empty or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        value = values.get(str(param.annotation), f"{name} value")
        if param.kind is param.KEYWORD_ONLY:
            kwargs[name] = value
        else:
            args.append(value)
    return cls(*args, **kwargs)


def _call(url: str) -> Any:
    from modules import OnlineChatModule

    return OnlineChatModule(base_url=url, model="m", max_retries=0)("hi")


def test_an_api_error_in_a_worker_process_reaches_the_parent_as_raised() -> None:
    with FakeOpenAIServer(replies=[{"status": 400, "error": "bad thing"}]) as server:
        with ProcessPoolExecutor(1) as pool:
            with pytest.raises(BadRequestError, match="bad thing") as caught:
                pool.submit(_call, server.base_url).result(timeout=60)
    assert caught.value.status_code == 400

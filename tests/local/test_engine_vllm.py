"""The vLLM engine: typed errors without vLLM or a GPU, and the adapter against a fake ``AsyncLLM``.

No GPU and no vLLM here: the fake engine checks what vLLM would receive (a
``TokensPrompt`` of prompter's token ids, ``SamplingParams`` with the request's
options and the format's stop ids, ``DELTA`` outputs, ``abort`` on cancel) and
answers with scripted token ids, so stop words, streaming, tool-call parsing
and the server are checked to behave as with the transformers engine.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.errors import MissingExtraError, ModuleConfigError
from modules.local.engines import EngineUnavailableError
from modules.local.engines import vllm as vllm_engine
from modules.local.engines.vllm import VLLMEngine
from modules.local.trainable import TrainableModule

DELTA = "DELTA"  # stands in for vllm.sampling_params.RequestOutputKind.DELTA


# -- without vLLM or a GPU ---------------------------------------------------------------------------


def test_vllm_engine_without_vllm_is_a_typed_error_naming_the_extra(tiny_model_path: Path) -> None:  # noqa: F811
    if vllm_engine._has_vllm():  # pragma: no cover - a machine with vLLM
        pytest.skip("vLLM is installed here")
    with pytest.raises(MissingExtraError) as info:
        TrainableModule(tiny_model_path, engine="vllm")
    message = str(info.value)
    assert "vLLM" in message and "pip install 'prompter-kit[vllm]'" in message and "engine='transformers'" in message


@pytest.mark.parametrize(("gpus", "tp"), [(0, 1), (1, 2), (2, 4)])
def test_vllm_engine_without_enough_gpus_is_a_typed_error(
    monkeypatch: pytest.MonkeyPatch,
    tiny_model_path: Path,  # noqa: F811
    gpus: int,
    tp: int,
) -> None:
    monkeypatch.setattr(vllm_engine, "_has_vllm", lambda: True)
    monkeypatch.setattr(vllm_engine, "_gpu_count", lambda: gpus)
    with pytest.raises(EngineUnavailableError) as info:
        TrainableModule(tiny_model_path, engine="vllm", tensor_parallel_size=tp)
    assert "CUDA GPU" in str(info.value) and f"tensor_parallel_size={tp}" in str(info.value)
    assert isinstance(info.value, ModuleConfigError)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"engine": "tgi"}, "engine"),
        ({"tensor_parallel_size": 2}, "tensor_parallel_size"),
        ({"tensor_parallel_size": 0}, "tensor_parallel_size"),
    ],
)
def test_bad_engine_options_are_refused_by_name(tiny_model_path: Path, options: dict[str, Any], named: str) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match=named):
        TrainableModule(tiny_model_path, **options)


# -- the adapter, on a fake AsyncLLM ------------------------------------------------------------------


def _tokens_prompt(**fields: Any) -> dict[str, Any]:
    """vLLM's TokensPrompt is a TypedDict: calling it makes a dict."""
    assert set(fields) == {"prompt_token_ids"}
    return dict(fields)


@dataclass
class _Params:
    """Records the keyword arguments SamplingParams was built with."""

    fields: dict[str, Any]


def _sampling_params(**fields: Any) -> _Params:
    return _Params(fields)


@dataclass
class _Completion:
    token_ids: list[int]


@dataclass
class _Output:
    outputs: list[_Completion]
    finished: bool


class FakeAsyncLLM:
    """Answers each request with *script* token ids, one DELTA output per token; records what it got."""

    def __init__(self, script: list[int], endless: bool = False) -> None:
        self.script = script
        self.endless = endless
        self.calls: list[tuple[Any, Any, str]] = []
        self.aborted: list[str] = []
        self.shut_down = False

    async def generate(self, prompt: Any, sampling_params: Any, request_id: str) -> AsyncIterator[_Output]:
        self.calls.append((prompt, sampling_params, request_id))
        i = 0
        while self.endless or i < len(self.script):
            if request_id in self.aborted:
                return
            token = self.script[i % len(self.script)]
            i += 1
            yield _Output([_Completion([token])], finished=not self.endless and i == len(self.script))
            if self.endless:  # as a real engine, a token takes time: the caller's cancel can land meanwhile
                await asyncio.sleep(0.001)

    async def abort(self, request_id: str) -> None:
        self.aborted.append(request_id)

    def shutdown(self) -> None:
        self.shut_down = True


def _on_fake(module: TrainableModule, fake: FakeAsyncLLM) -> VLLMEngine:
    engine = VLLMEngine(
        fake, module._stop_ids, tokens_prompt=_tokens_prompt, sampling_params=_sampling_params, delta=DELTA
    )
    module._backend.model = module._backend.batcher = engine
    return engine


@pytest.fixture
def module(tiny_model_path: Path) -> Iterator[TrainableModule]:  # noqa: F811
    """A TrainableModule whose engine is the vLLM adapter (set by each test), stopped afterwards."""
    m = TrainableModule(tiny_model_path, name="tiny")
    yield m
    m.stop()


def _ids(module: TrainableModule, text: str) -> list[int]:
    return [int(t) for t in module.tokenizer.encode(text, add_special_tokens=False)]


def test_vllm_receives_prompter_token_ids_and_sampling_params(module: TrainableModule) -> None:
    stop = module._stop_ids()[0]
    fake = FakeAsyncLLM([*_ids(module, "Hello there"), stop])
    _on_fake(module, fake)
    # A user typing a control token: vLLM must get prompter's ids for it (plain text), never re-tokenize.
    request = module.prepare(
        [{"role": "user", "content": "hi <|im_start|>system"}], max_new_tokens=9, temperature=0.7, top_p=0.5, seed=3
    )
    done = module.generate(request)
    assert done.text == "Hello there" and done.finish_reason == "stop"
    ((prompt, params, _rid),) = fake.calls
    assert prompt == {"prompt_token_ids": list(request.input_ids)}
    im_start = module.tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert list(request.input_ids).count(im_start) == 3  # system, user and assistant turns; none from the text
    assert params.fields == {
        "max_tokens": 9,
        "temperature": 0.7,
        "top_p": 0.5,
        "top_k": 0,
        "seed": 3,
        "stop_token_ids": sorted(module._stop_ids()),
        "detokenize": False,
        "skip_special_tokens": False,
        "output_kind": DELTA,
    }


def test_vllm_answers_stop_at_stop_words_and_stream_like_transformers(module: TrainableModule) -> None:
    fake = FakeAsyncLLM(_ids(module, "one two STOP three four"))
    _on_fake(module, fake)
    request = module.prepare([{"role": "user", "content": "count"}], max_new_tokens=50, stop=["STOP"])
    done = module.generate(request)
    assert done.text == "one two " and done.finish_reason == "stop"
    assert fake.aborted  # the stop string ended the request in vLLM too
    deltas = list(module.generate_stream(module.prepare([{"role": "user", "content": "count"}], stop=["STOP"])))
    assert "".join(d.text for d in deltas) == "one two " and deltas[-1].finish_reason == "stop"
    assert len(deltas) > 2  # pieces as they came, not one block


def test_vllm_answers_parse_tool_calls(module: TrainableModule) -> None:
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    _on_fake(module, FakeAsyncLLM([*_ids(module, call), module._stop_ids()[0]]))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    done = module.generate(module.prepare([{"role": "user", "content": "weather?"}], tools))
    assert done.finish_reason == "tool_calls"
    assert [c["function"] for c in done.tool_calls] == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]


def test_cancelling_a_vllm_request_aborts_it_in_vllm(module: TrainableModule) -> None:
    fake = FakeAsyncLLM(_ids(module, "la "), endless=True)
    _on_fake(module, fake)
    cancel = threading.Event()
    stream = module.generate_stream(module.prepare([{"role": "user", "content": "sing"}], max_new_tokens=1000), cancel)
    next(stream)
    cancel.set()
    rest = list(stream)
    assert rest[-1].finish_reason == "cancelled"
    assert [rid for _, _, rid in fake.calls] == fake.aborted


def test_the_server_serves_the_vllm_engine(module: TrainableModule) -> None:
    _on_fake(module, FakeAsyncLLM([*_ids(module, "Served by vLLM"), module._stop_ids()[0]]))
    module.start(serve=True)  # the engine is loaded already: start only serves
    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}
    answer = httpx.post(module.url + "/chat/completions", json=body, timeout=30).json()
    assert answer["choices"][0]["message"]["content"] == "Served by vLLM"
    events = httpx.post(module.url + "/chat/completions", json={**body, "stream": True}, timeout=30).text
    chunks = [json.loads(line[6:]) for line in events.splitlines() if line.startswith("data: {")]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "Served by vLLM"
    assert events.rstrip().endswith("data: [DONE]")


def test_stop_shuts_vllm_down(module: TrainableModule) -> None:
    fake = FakeAsyncLLM([1])
    engine = _on_fake(module, fake)
    module.stop()
    assert fake.shut_down and not engine._thread.is_alive()


def test_prompter_serve_engine_vllm_without_vllm_says_what_is_missing(
    tiny_model_path: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    if vllm_engine._has_vllm():  # pragma: no cover - a machine with vLLM
        pytest.skip("vLLM is installed here")
    from modules.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", "--model", str(tiny_model_path), "--port", "0", "--engine", "vllm"])
    assert info.value.code != 0
    err = capsys.readouterr().err
    assert "needs vLLM" in err and "pip install 'prompter-kit[vllm]'" in err and "Traceback" not in err


# -- VLLMEngine.load, on stand-ins for vLLM's modules ---------------------------------------------------


@dataclass
class _EngineArgs:
    """Stands in for vllm.engine.arg_utils.AsyncEngineArgs (a dataclass whose fields are vLLM's argument names)."""

    model: str
    tokenizer: str
    dtype: str = "auto"
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_num_seqs: int = 256


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """vLLM's modules as stand-ins (the engine, the argument dataclass, the prompt and params classes)."""
    import enum
    import sys
    import types

    started: dict[str, Any] = {}

    class AsyncLLM:
        @staticmethod
        def from_engine_args(args: _EngineArgs) -> FakeAsyncLLM:
            started["args"] = args
            started["env"] = {k: v for k, v in __import__("os").environ.items() if k.startswith("VLLM_")}
            started["llm"] = FakeAsyncLLM([7, 8])
            return started["llm"]

    class RequestOutputKind(enum.Enum):
        DELTA = 1

    modules = {
        "vllm": types.SimpleNamespace(SamplingParams=_sampling_params, TokensPrompt=_tokens_prompt),
        "vllm.engine": types.SimpleNamespace(),
        "vllm.engine.arg_utils": types.SimpleNamespace(AsyncEngineArgs=_EngineArgs),
        "vllm.sampling_params": types.SimpleNamespace(RequestOutputKind=RequestOutputKind),
        "vllm.v1": types.SimpleNamespace(),
        "vllm.v1.engine": types.SimpleNamespace(),
        "vllm.v1.engine.async_llm": types.SimpleNamespace(AsyncLLM=AsyncLLM),
    }
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(vllm_engine, "_has_vllm", lambda: True)
    monkeypatch.setattr(vllm_engine, "_gpu_count", lambda: 1)
    for name in ("VLLM_WORKER_MULTIPROC_METHOD", "VLLM_USE_FLASHINFER_SAMPLER"):
        monkeypatch.delenv(name, raising=False)
    return started


def _start_and_stop(module: TrainableModule) -> None:
    """Start *module* on the stand-in vLLM (which records what it was started with), then stop it."""
    try:
        module.start()
    finally:
        module.stop()


def test_vllm_options_reach_vllm_engine_args(fake_vllm: dict[str, Any], tiny_model_path: Path) -> None:  # noqa: F811
    options = {"gpu_memory_utilization": 0.25, "max_num_seqs": 32}
    module = TrainableModule(tiny_model_path, engine="vllm", dtype="bfloat16", vllm_options=options)
    try:
        module.start()
        args = fake_vllm["args"]
        assert (args.model, args.tokenizer) == (str(tiny_model_path), str(tiny_model_path))
        assert (args.dtype, args.gpu_memory_utilization, args.max_num_seqs) == ("bfloat16", 0.25, 32)
        assert options == {"gpu_memory_utilization": 0.25, "max_num_seqs": 32}  # the caller's dict is untouched
        assert module.generate(module.prepare([{"role": "user", "content": "hi"}])).text
    finally:
        module.stop()


def test_vllm_starts_its_engine_process_fresh_and_samples_without_flashinfer(
    fake_vllm: dict[str, Any],
    tiny_model_path: Path,  # noqa: F811
) -> None:
    # On a GPU machine: a forked engine process cannot use CUDA this process touched, and vLLM's
    # sampler imports FlashInfer unless told otherwise (both stopped vLLM 0.25.1 from starting).
    _start_and_stop(TrainableModule(tiny_model_path, engine="vllm"))
    assert fake_vllm["env"]["VLLM_WORKER_MULTIPROC_METHOD"] == "spawn"
    assert fake_vllm["env"]["VLLM_USE_FLASHINFER_SAMPLER"] == "0"  # FlashInfer is not installed here


def test_vllm_start_defaults_never_override_the_users_environment(
    fake_vllm: dict[str, Any],
    tiny_model_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VLLM_WORKER_MULTIPROC_METHOD", "fork")
    _start_and_stop(TrainableModule(tiny_model_path, engine="vllm"))
    assert fake_vllm["env"]["VLLM_WORKER_MULTIPROC_METHOD"] == "fork"


def test_an_option_vllm_does_not_know_is_refused_by_name(
    fake_vllm: dict[str, Any],
    tiny_model_path: Path,  # noqa: F811
) -> None:
    module = TrainableModule(tiny_model_path, engine="vllm", vllm_options={"gpu_memory_utilisation": 0.5})
    with pytest.raises(ModuleConfigError, match="gpu_memory_utilisation"):
        module.start()
    assert "args" not in fake_vllm  # refused before vLLM was started


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"dtype": "float16"}, "TrainableModule\\(dtype"),
        ({"model": "/elsewhere"}, "'model'"),
        ({"tensor_parallel_size": 2}, "TrainableModule\\(tensor_parallel_size"),
        ({1: 2}, "keys are"),
        (["gpu_memory_utilization"], "expected a dict"),
    ],
)
def test_options_prompter_sets_itself_are_refused_at_once(
    fake_vllm: dict[str, Any],
    tiny_model_path: Path,  # noqa: F811
    options: Any,
    named: str,
) -> None:
    with pytest.raises(ModuleConfigError, match=named):
        TrainableModule(tiny_model_path, engine="vllm", vllm_options=options)


def test_vllm_options_without_the_vllm_engine_are_refused(tiny_model_path: Path) -> None:  # noqa: F811
    with pytest.raises(ModuleConfigError, match="engine='vllm'"):
        TrainableModule(tiny_model_path, vllm_options={"max_num_seqs": 8})

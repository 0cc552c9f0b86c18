"""``prompter serve --torch-threads``: PyTorch's intra-op threads leave a core to the HTTP event loop."""

from __future__ import annotations

import argparse

import pytest

from modules.errors import ModuleConfigError
from modules.server.cli_options import add_engine_options, apply_torch_threads, default_torch_threads


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_engine_options(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(("cpus", "expected"), [(None, 1), (1, 1), (2, 1), (8, 7)])
def test_default_leaves_one_core_to_the_event_loop(cpus: int | None, expected: int) -> None:
    assert default_torch_threads(cpus) == expected


def test_torch_threads_option_sets_pytorch_threads() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        apply_torch_threads(_args("--torch-threads", "1"))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_torch_threads_below_one_is_a_config_error_naming_the_option() -> None:
    with pytest.raises(ModuleConfigError, match="--torch-threads"):
        apply_torch_threads(_args("--torch-threads", "0"))


def test_torch_threads_reach_the_module_and_its_default_is_the_modules() -> None:
    """The engine process takes ``--torch-threads`` from the module (it no longer inherits the server's)."""
    from modules.server.cli_options import engine_options

    assert engine_options(_args("--torch-threads", "3"))["torch_threads"] == 3
    assert engine_options(_args())["torch_threads"] is None  # the module's default (by the model's size)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ((), {"max_batch_size": 64, "engine_process": True}),  # batched, in its own process
        (("--max-batch-size", "1"), {"max_batch_size": 1, "engine_process": True}),  # serialised, still apart
        (("--no-engine-process",), {"max_batch_size": 64, "engine_process": False}),
        (("--engine", "vllm"), {"engine": "vllm", "engine_process": False}),  # vLLM runs its own processes
    ],
)
def test_serve_batches_in_an_engine_process_by_default(argv: tuple[str, ...], expected: dict[str, object]) -> None:
    from modules.server.cli_options import engine_options

    options = engine_options(_args(*argv))
    assert {key: options[key] for key in expected} == expected


def test_serve_passes_dtype_and_device_to_the_module() -> None:
    from modules.server.cli_options import engine_options

    options = engine_options(_args("--dtype", "bfloat16", "--device", "cuda:1"))
    assert options["dtype"] == "bfloat16" and options["device"] == "cuda:1"
    assert engine_options(_args())["dtype"] == "float32" and engine_options(_args())["device"] == "cpu"


def test_serve_refuses_an_unknown_dtype_by_name() -> None:
    with pytest.raises(SystemExit):
        _args("--dtype", "int3")


def test_vllm_options_from_the_command_line_are_typed_json_values() -> None:
    from modules.server.cli_options import engine_options

    args = _args(
        "--engine", "vllm", "--vllm-option", "gpu_memory_utilization=0.25", "--vllm-option", "enforce_eager=true"
    )
    assert engine_options(args)["vllm_options"] == {"gpu_memory_utilization": 0.25, "enforce_eager": True}
    assert engine_options(_args("--vllm-option", "kv_cache_dtype=fp8"))["vllm_options"] == {"kv_cache_dtype": "fp8"}
    assert "vllm_options" not in engine_options(_args())


def test_a_vllm_option_without_a_value_is_refused_by_name() -> None:
    from modules.server.cli_options import engine_options

    with pytest.raises(ModuleConfigError, match="--vllm-option"):
        engine_options(_args("--vllm-option", "enforce_eager"))

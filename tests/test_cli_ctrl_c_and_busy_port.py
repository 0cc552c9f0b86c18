"""Two things a new user does at the command line that must stay one line on stderr, never a traceback: pressing
Ctrl-C while a command works (a model loading for seconds, a config running), and starting a server on a port
that something else holds, which is said before any model loads, with the remedy; and a seed torch cannot take."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from modules.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 that a listening socket holds for the test."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def _exit(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    return int(exited.value.code or 0)


def test_ctrl_c_during_a_command_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """A real SIGINT in the middle of `prompter view CONFIG` (the config sends it to its own process)."""
    config = tmp_path / "interrupted.py"
    config.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport time\ntime.sleep(30)\n")

    def default_sigint() -> None:  # a shell's background job ignores SIGINT; the user's terminal does not
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "modules.cli", "view", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=default_sigint,  # the child only resets one signal
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr == "prompter view: interrupted (Ctrl-C)\n"
    assert done.returncode == 130


def test_serve_on_a_port_in_use_is_refused_before_the_model_loads(
    busy_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the model folder does not exist: had the load begun, the error would be about the folder, not the port
    assert _exit(["serve", "--model", str(tmp_path / "no-model"), "--port", str(busy_port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"prompter serve: error: --port: port {busy_port} on 127.0.0.1 is already in use")
    assert "pick another with --port N" in err
    assert "loading" not in err


def test_playground_on_a_port_in_use_is_one_line_naming_the_remedy(
    busy_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit(["playground", "--port", str(busy_port)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"prompter playground: error: --port: port {busy_port} on 127.0.0.1 is already in use; stop what holds it, "
        "or pick another with --port N (0 picks a free one)\n"
    )


@pytest.mark.parametrize("host", ["999.1.1.1", "no-such-host.invalid", "a" * 300], ids=["bad-ip", "unknown", "long"])
@pytest.mark.parametrize("command", [["playground"], ["serve", "--model", "no-model"]], ids=["playground", "serve"])
def test_a_host_that_is_no_address_of_this_machine_is_one_line(
    command: list[str], host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit([*command, "--host", host, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"prompter {command[0]}: error: --host: cannot listen on "), err
    assert "127.0.0.1" in err  # the remedy: an address of this machine


def test_the_playground_names_the_extra_as_every_command_does() -> None:
    """docs/install.md: `prompter CMD: error: this command needs the 'server' extra (...): pip install ...`."""
    code = (  # as if fastapi were not installed: the check asks importlib where it is
        "import importlib.util\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'fastapi' else real(name, *a)\n"
        "from modules.cli import main\n"
        "main(['playground', '--port', '0'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr == (
        "prompter playground: error: this command needs the 'server' extra (fastapi not installed): "
        "pip install 'prompter-kit[server]'\n"
    )


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1, 10**30], ids=["2**64", "-2**63-1", "10**30"])
def test_tiny_model_seed_out_of_torchs_range_is_one_line_and_writes_nothing(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "tiny"
    assert _exit(["tiny-model", str(target), "--seed", str(seed)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"prompter tiny-model: error: --seed: expected an int from -2**63 to 2**64 - 1 (torch's seed range), got {seed}\n"
    )
    assert not target.exists()

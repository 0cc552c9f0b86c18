"""``prompter serve`` / ``prompter chat`` with a ``--max-new-tokens`` below 1: one error line and exit 2, before loading.

Accepted, it started a server (after loading the model) that answered every
request leaving out ``max_tokens`` with a 400 ``invalid_request_error`` about
``max_new_tokens``, an option the client never sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from modules.cli import main


@pytest.mark.parametrize("command", ["serve", "chat"])
@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_max_new_tokens_below_one_is_refused_before_the_model_loads(
    command: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an empty folder: were the value not checked first, the error would be about the model folder
    with pytest.raises(SystemExit) as exited:
        main([command, "--model", str(tmp_path), "--max-new-tokens", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == f"prompter {command}: error: --max-new-tokens: expected an int >= 1, got {value}\n", err

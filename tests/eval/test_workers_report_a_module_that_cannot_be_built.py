"""``workers > 1`` with a model config that cannot be built ends the run with that error.

Each worker process builds its own module in the pool's initializer. A multiprocessing pool
replaces a worker whose initializer raises, for ever: a wrong model path or type (which one
worker reports at once as a ModuleConfigError) made ``prompter eval --workers 2`` spawn
workers without end and never return. The run is done in a child process with a deadline, so
a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import sys
    from modules.errors import ModuleConfigError
    from modules.eval.runner import run_eval

    dataset = dict(
        path=[{"question": "1+1=?", "answer": "2"}] * 4,
        reader_cfg=dict(output_column="answer"),
        infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="Q: {question}\\nA: {answer}")),
    )
    if __name__ == "__main__":
        try:
            run_eval(dict(dataset=dataset, model={"type": "NoSuchModule"}, workers=int(sys.argv[1])),
                     output=sys.argv[2], progress=False)
        except ModuleConfigError as error:
            print("ModuleConfigError:", error)
            sys.exit(3)
    """
)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_module_that_cannot_be_built_ends_the_run_with_its_error(tmp_path: Path, workers: int) -> None:
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    try:
        done = subprocess.run(
            [sys.executable, str(script), str(workers), str(tmp_path / "out.jsonl")],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"workers={workers}: the run never ended (the pool kept replacing workers that failed to start)")
    assert done.returncode == 3, done.stderr[-2000:]
    assert "unknown module 'NoSuchModule'" in done.stdout
    assert (tmp_path / "out.jsonl").read_text() == ""

"""The CLI and eval's worker processes keep working beside an application's own ``modules`` package.

Two ways the application's ``modules`` used to win over ours:

- the console script: pip writes ``from modules.cli import main`` for an entry point named
  ``modules.cli:main``, so with the application's folder on ``PYTHONPATH`` (``PYTHONPATH=.``,
  a container's ``PYTHONPATH=/app``) ``prompter`` itself died with ``No module named 'modules.cli'``;
- eval's worker processes: CPython starts the forkserver with ``python -c``, so the working folder
  comes first on its path; preloading ``modules.eval.runner`` there bound ``modules`` to the
  application's package in every worker, each worker died on import, and the pool started new ones
  for ever: ``prompter eval --workers 2`` run from the application's folder never ended.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import prompter
from modules.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def _python(tmp_path: Path) -> str:
    """A fresh venv's interpreter that sees this environment's third-party packages but not its editable
    finder (which would load ``modules.cli`` from this checkout whatever the name ``modules`` holds, as an
    installed wheel never does): a ``.pth`` path line does not run that folder's own ``.pth`` files."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    Path(site, "zz_third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python


def _app(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    (app / "modules").mkdir(parents=True)
    (app / "modules" / "__init__.py").write_text("MINE = 'app'\n", encoding="utf-8")
    return app


def _console_script() -> str:
    """The script pip writes for the ``prompter`` entry point (distlib's template)."""
    entry = re.search(r'^prompter = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert entry, "pyproject.toml has no `prompter` script"
    module, _, attribute = entry.group(1).partition(":")
    return textwrap.dedent(f"""\
        import re
        import sys
        from {module} import {attribute.split(".")[0]}
        if __name__ == '__main__':
            sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
            sys.exit({attribute}())
        """)


def test_the_console_script_runs_with_the_application_folder_first_on_the_path(tmp_path: Path) -> None:
    app = _app(tmp_path)
    script = tmp_path / "bin" / "prompter"
    script.parent.mkdir()
    script.write_text(_console_script(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(app), str(ROOT)])}
    done = subprocess.run(
        [_python(tmp_path), str(script), "--version"], cwd=app, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"prompter {prompter.__version__}"


def test_eval_with_two_workers_finishes_when_run_from_the_application_folder(tmp_path: Path) -> None:
    app = _app(tmp_path)
    rows = [{"question": f"q{i}", "answer": f"a{i}"} for i in range(4)]
    (app / "toy.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    script = tmp_path / "bin" / "prompter"  # outside the app: the CLI's own path has no working folder on it
    script.parent.mkdir()
    script.write_text(_console_script(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with FakeOpenAIServer() as server:  # echoes the prompt back
        config = {
            "dataset": {
                "path": "toy.jsonl",
                "abbr": "toy",
                "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
                "infer_cfg": {
                    "prompt_template": {"type": "PromptTemplate", "template": "Q: {question}\nA: {answer}"},
                    "retriever": {"type": "ZeroRetriever"},
                    "inferencer": {"type": "GenInferencer", "max_out_len": 4},
                },
            },
            "model": {"type": "OnlineChatModule", "base_url": server.base_url, "model": "fake"},
        }
        (app / "eval.json").write_text(json.dumps(config), encoding="utf-8")
        try:
            done = subprocess.run(
                [_python(tmp_path), str(script), "eval", "eval.json", "--output", "out.jsonl", "--workers", "2"],
                cwd=app, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
        except subprocess.TimeoutExpired as hung:
            tail = (hung.stderr or b"")[-2000:]
            raise AssertionError(f"prompter eval --workers 2 did not finish: {tail!r}") from None
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (app / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(rows)


def test_prompter_modules_reaches_our_subpackages_beside_the_application_package(tmp_path: Path) -> None:
    # docs import deep names (modules.eval.run_eval, modules.online.scoring): an application whose `modules`
    # holds the name reaches them through the documented facade, as `from prompter.modules import eval`
    app = _app(tmp_path)
    code = textwrap.dedent("""
        import modules
        from prompter.modules import eval, online
        from prompter.modules import local
        assert callable(eval.run_eval) and callable(online.OnlineChatModule) and local.__name__.endswith("local")
        import modules as again
        assert again is modules and modules.MINE == "app"
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=app, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]

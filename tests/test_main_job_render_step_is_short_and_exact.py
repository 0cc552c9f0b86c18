"""The main job's first step (``examples/render_formats.py``, run by ``scripts/demo.sh``) is short and exact.

Issue 10 found the demo printing about 900 lines of near-identical JSON; ``prompter demo`` was
made to tell a short story, but ``bash scripts/demo.sh`` still printed 1009 lines first: every
API body indented, seven dialects per example. Each body is now one line that parses back to
exactly what ``generate_prompt`` returns, and a dialect that cannot carry the conversation says
why on its line.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path
from types import ModuleType

from prompter import PromptError
from prompter.render import DIALECTS

ROOT = Path(__file__).resolve().parent.parent


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_formats", ROOT / "examples" / "render_formats.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_main_job_render_step_shows_each_dialect_body_on_one_exact_line() -> None:
    example = _example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        example.main()
    lines = out.getvalue().splitlines()
    assert len(lines) < 400, len(lines)
    for title, prompter, value, history in example.EXAMPLES:
        start = lines.index(f"=== {title} ===")
        section = lines[start + 1:]
        for dialect in DIALECTS:
            line = next(x for x in section if x.startswith(f"--- {dialect}:"))
            shown = line.split(": ", 1)[1]
            try:
                body = prompter.generate_prompt(value, history=history, format=dialect)
            except PromptError:
                assert shown.startswith("(cannot be sent: "), line
                continue
            assert json.loads(shown) == body, (title, dialect)


def test_the_render_step_still_indents_on_request() -> None:
    example = _example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        example.main(indent=2)
    assert '--- openai ---\n{\n  "messages": [' in out.getvalue()

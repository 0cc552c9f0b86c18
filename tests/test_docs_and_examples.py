"""Every python block in README.md and docs/, and every script in examples/, runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def _blocks(page: Path) -> list[str]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: p.name)
def test_docs_code_blocks_run(page: Path) -> None:
    # blocks of one page run in order in one namespace, as a reader would run them
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for number, block in enumerate(_blocks(page), 1):
        code = compile(block, f"{page.name}[block {number}]", "exec")
        exec(code, namespace)  # noqa: S102 - our own documentation


# fences whose code is not ours to run: shell commands, output, and another library's code
# on a "Coming from" page (tagged `py`, the library not being a dependency)
NOT_RUN = {"bash", "text", "json", "py"}


def test_every_code_block_either_runs_or_is_declared_not_python() -> None:
    wrong = []
    for page in PAGES:
        for number, tag in enumerate(re.findall(r"^```(\S*)$", page.read_text(encoding="utf-8"), re.M)[::2], 1):
            if tag == "python":
                continue
            if tag not in NOT_RUN or (tag == "py" and not page.name.startswith("coming-from-")):
                wrong.append(f"{page.name} fence {number}: ```{tag}")
    assert not wrong, "tag python blocks `python` so they run; other library's code `py` on coming-from pages: " + str(
        wrong
    )


def test_every_migration_page_shows_their_code_and_ours_and_a_table_of_differences() -> None:
    for name in ("lazyllm", "hf-chat-templates", "langchain", "opencompass", "agentscope"):
        text = (ROOT / "docs" / f"coming-from-{name}.md").read_text(encoding="utf-8")
        assert "## Deliberate differences" in text, name
        section = text.split("## Deliberate differences", 1)[1]
        assert section.count("\n| ") >= 3, f"{name}: the differences table has fewer than two rows"
        assert _blocks(ROOT / "docs" / f"coming-from-{name}.md"), f"{name}: no block of ours that runs"


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_examples_run(script: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip(), f"{script.name} printed nothing"


def test_every_docs_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.name not in nav]
    assert not missing, f"add to mkdocs.yml nav: {missing}"


def test_the_documentation_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        # no -q: quiet, mkdocs does not count warnings, and --strict then passes a site with broken references
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").exists()


# what each reason in the LazyLLM parity test's DELIBERATE list is called in the migration page's table
_LAZYLLM_PAGE_ROWS = {
    "tools-as-json": "`json.dumps(tools, ensure_ascii=False)`",
    "one-pass-fill": "one pass; values are never rescanned",
    "literal-markers": "`<!lazyllm-spliter!>`",
    "label-message": "the label is an assistant message in dict output",
    "identifier-slots": "only `{identifier}` is a slot",
    "enable-system": "`enable_system=False`",
    "extra-keys-kept": "the extra keys are kept",
    "tools-locked": "constructor tools lock the set",
    "anthropic-tools": "`input_schema`",
    "anthropic-empty-turn": "`format=\"anthropic\"` accepts an empty user turn",
    "tool-call-shape": "tool calls in history keep their given shape",
    "tool-round-text": "text history prints a tool call",
}


def test_the_lazyllm_page_lists_every_deliberate_difference_the_parity_test_allows() -> None:
    import ast

    parity = ast.parse((ROOT / "tests" / "prompters" / "test_lazyllm_parity.py").read_text(encoding="utf-8"))
    (allowed,) = [
        node.value for node in parity.body
        if isinstance(node, ast.AnnAssign | ast.Assign) and "DELIBERATE" in ast.unparse(node).split("=", 1)[0]
    ]
    assert isinstance(allowed, ast.Dict)
    reasons = {ast.literal_eval(key) for key in allowed.keys if key is not None}
    assert reasons == set(_LAZYLLM_PAGE_ROWS), "name the new reason's row of docs/coming-from-lazyllm.md here"
    page = (ROOT / "docs" / "coming-from-lazyllm.md").read_text(encoding="utf-8")
    table = page.split("## Deliberate differences", 1)[1].split("\n## ", 1)[0]
    missing = [reason for reason, row in _LAZYLLM_PAGE_ROWS.items() if row not in table]
    assert not missing, f"docs/coming-from-lazyllm.md lists no row for: {missing}"


def test_the_lazyllm_page_names_both_default_system_prompts() -> None:
    # the same code gives other bytes until the system prompt is set: a migrating user must be told
    from prompter.settings import LIBRARY_DEFAULT_SYSTEM

    page = (ROOT / "docs" / "coming-from-lazyllm.md").read_text(encoding="utf-8")
    assert "You are an AI-Agent developed by LazyLLM." in page and LIBRARY_DEFAULT_SYSTEM in page


def test_the_local_model_example_runs_without_the_openai_client(tmp_path: Path) -> None:
    # the official openai client is in no extra: after `pip install "prompter-kit[all]"` it is absent
    (tmp_path / "openai.py").write_text("raise ModuleNotFoundError(\"No module named 'openai'\", name='openai')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "local_model.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "in process:" in done.stdout and "pip install openai" in done.stdout


def test_the_install_page_names_every_extra_the_distribution_has() -> None:
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = project.split("[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^([\w-]+) = \[", section, re.M))  # tomllib is 3.11+; the project supports 3.10
    page = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w-]+)` \|", page, re.M))
    assert rows == set(extras) - {"dev"}, f"docs/install.md's table of extras: add {set(extras) - {'dev'} - rows}"


def test_a_block_that_imports_a_package_no_extra_installs_says_to_pip_install_it_first() -> None:
    # after `pip install "prompter-kit[all]"` a copied block must run, or the text just before it says what to add
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    dev = project.split("\ndev = [", 1)[1].split("\n]", 1)[0]
    extras = project.split("[project.optional-dependencies]\n", 1)[1].split("\ndev = [", 1)[0]
    only_dev = {name.lower() for name in re.findall(r'^\s*"([A-Za-z][\w.-]*)', dev, re.M)} - {
        name.lower() for name in re.findall(r'"([A-Za-z][\w.-]*)', extras)
    }
    unsaid = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()].rsplit("```", 1)[-1]  # the prose since the previous fence
            for name in re.findall(r"^(?:import|from) ([A-Za-z_]\w*)", match.group(1), re.M):
                if name.lower() in only_dev and f"pip install {name}" not in before:
                    unsaid.append(f"{page.name}: {name}")
    assert not unsaid, f"say `pip install NAME` just before the block (no extra installs it): {unsaid}"

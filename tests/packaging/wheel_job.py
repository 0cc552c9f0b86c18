"""CI job: build the wheel, install it (not editable) into a fresh venv, and run what a new user runs.

    python tests/packaging/wheel_job.py        (scripts/test.sh runs it after the suite)

From a folder that has its own ``modules/`` package, against the installed
files only: the README quickstart, ``prompter --version``, ``prompter
tiny-model``, one local and one online call through ``prompter.modules``, the
getting-started page and the five migration pages (from the same folder), and
``prompter demo``. Offline and without downloading torch again: the fresh venv
gets the wheel with ``--no-deps``, and the third-party packages already
installed in the running environment are appended to its ``sys.path`` by a
``.pth`` line. A path line does not run that folder's own ``.pth`` files, so
the checkout's editable finder stays out, and the job checks that
``prompter`` and ``modules`` really load from the fresh venv.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dist_files import ROOT, build_dists  # noqa: E402 - after the path set-up above

_CHECK_INSTALLED = """
import importlib.metadata, sys
from pathlib import Path
import prompter, prompter.modules
from prompter.modules import OnlineChatModule, TrainableModule, __version__
venv = Path(sys.prefix).resolve()
ours = Path(sys.modules[OnlineChatModule.__module__].__file__).resolve()
assert Path(prompter.__file__).resolve().is_relative_to(venv), prompter.__file__
assert ours.is_relative_to(venv), ours
assert importlib.metadata.version("prompter-kit") == prompter.__version__ == __version__
import modules
assert modules.MINE == "app", "the application's own modules package was replaced"
print(f"prompter {prompter.__version__} from {Path(prompter.__file__).parent}; I/O package from {ours.parent}")
"""

_MODEL_CALLS = """
import sys
from prompter import ChatPrompter
from prompter.modules import OnlineChatModule, TrainableModule, testing
p = ChatPrompter("You answer questions about {topic}.", system="Be brief.")
with TrainableModule(sys.argv[1], max_new_tokens=6).prompt(p) as local:
    print("local answer:", repr(local({"topic": "cats", "input": "Why purr?"})))
with testing.FakeOpenAIServer(replies=["They are content."]) as server:
    online = OnlineChatModule(base_url=server.base_url, model="fake").prompt(p)
    print("online answer:", repr(online({"topic": "cats", "input": "Why purr?"})))
"""

_TYPED_USER_CODE = """
import prompter.modules.server.lifecycle
from prompter.modules import OnlineChatModule, TrainableModule
from prompter.modules.local.trainable import TrainableModule as Local
from prompter.modules.online.sources import Source


def build(path: str) -> TrainableModule:
    local: Local = TrainableModule(path)
    return local


def named(source: Source, module: OnlineChatModule) -> str:
    return f"{source!r} {module!r} {prompter.modules.server.lifecycle.__name__}"
"""


def main() -> int:
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="prompter-wheel-job-"))
    try:
        _job(work, t0)
    except subprocess.CalledProcessError as failed:
        print(f"wheel job: FAILED: {' '.join(map(str, failed.cmd))[:300]}", file=sys.stderr)
        print((failed.stdout or "")[-3000:], (failed.stderr or "")[-3000:], sep="\n", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wheel job: passed in {time.perf_counter() - t0:.0f}s")
    return 0


def _job(work: Path, t0: float) -> None:
    def step(text: str) -> None:
        print(f"wheel job [{time.perf_counter() - t0:5.1f}s] {text}", flush=True)

    step("building the sdist, and the wheel from it")
    _, wheel = build_dists(work / "dist")
    venv, bin_dir = work / "venv", work / "venv" / "bin"
    step(f"installing {wheel.name} (not editable) into a fresh venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(bin_dir / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    # third-party packages (jinja2, torch, fastapi ...) from the running environment, after the venv's own
    Path(site, "zz_third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, text=True,
    )

    app = work / "app"  # a user's project with its own `modules` package, first on sys.path
    (app / "modules").mkdir(parents=True)
    (app / "modules" / "__init__.py").write_text('MINE = "app"\n', encoding="utf-8")
    cache = work / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PROMPTER_CHAT_TEMPLATES", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PROMPTER_CACHE=str(cache))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"

    def run(*argv: str, cwd: Path = app) -> str:
        done = subprocess.run(list(argv), cwd=cwd, env=env, check=True, capture_output=True, text=True, timeout=300)
        return done.stdout

    step("the installed files are the ones imported; the app's modules package is untouched")
    print("   ", run(python, "-c", _CHECK_INSTALLED).strip())
    step("the README quickstart")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = re.search(r"^```python\n(.*?)^```", readme, re.S | re.M)
    assert quickstart, "README.md has no python block"
    run(python, "-c", quickstart.group(1))
    step("prompter --version")
    version = run(str(bin_dir / "prompter"), "--version").strip()
    assert re.fullmatch(r"prompter \d+\.\d+\.\d+\S*", version), version
    print("   ", version)
    step("prompter tiny-model (the chat templates must come from the wheel)")
    tiny = cache / "prompter-tiny" / "qwen2.5-0"  # where the demo's cache looks: built once, used twice
    print("   ", run(str(bin_dir / "prompter"), "tiny-model", str(tiny)).strip())
    (tiny / ".complete").write_text("ok\n", encoding="utf-8")
    step("one local call and one online call through prompter.modules")
    print("   ", run(python, "-c", _MODEL_CALLS, str(tiny)).strip().replace("\n", "\n    "))
    step("docs/getting-started.md and the coming-from-*.md pages, each page's blocks in order, beside the app's modules")
    for page in ("getting-started.md", *sorted(p.name for p in (ROOT / "docs").glob("coming-from-*.md"))):
        blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "docs" / page).read_text(encoding="utf-8"), re.S | re.M)
        assert blocks, page
        run(python, "-c", "\n".join(blocks) + "\nimport modules\nassert modules.MINE == 'app'\n")
    step("the pages and examples that load a model, beside the app's modules (the rest run in the suite)")
    for page in ("local-models.md", "finetune.md"):
        blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "docs" / page).read_text(encoding="utf-8"), re.S | re.M)
        assert blocks, page
        run(python, "-c", "\n".join(blocks) + "\nimport modules\nassert modules.MINE == 'app'\n")
    for script in ("local_model.py", "finetune_distributed.py"):
        path = str(ROOT / "examples" / script)
        run(python, "-c", f"import runpy\nrunpy.run_path({path!r}, run_name='__main__')\nimport modules\nassert modules.MINE == 'app'\n")
    step("mypy --strict on code that imports through prompter.modules, against the installed stubs")
    typed = work / "typed"  # a folder without a `modules` package of its own: mypy would read that one instead
    typed.mkdir()
    (typed / "user_code.py").write_text(_TYPED_USER_CODE, encoding="utf-8")
    # as pyproject.toml does for our own run: torch and transformers ship no types worth a minute of CI
    skip = "[mypy-torch.*,transformers.*,tokenizers.*]\nfollow_imports = skip\nignore_missing_imports = True\n"
    (typed / "mypy.ini").write_text("[mypy]\n" + skip, encoding="utf-8")
    cache_dir = str(work / "mypy-cache")
    run(python, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache_dir, "user_code.py", cwd=typed)
    step("prompter demo")
    demo = run(str(bin_dir / "prompter"), "demo")
    assert "(same as in-process: True)" in demo, demo[-2000:]
    step("prompter serve (batched, its engine process importing the wheel's modules, not the app's)")
    print("   ", _serve_once(str(bin_dir / "prompter"), str(tiny), app, env))


def _serve_once(prompter: str, model: str, cwd: Path, env: dict[str, str]) -> str:
    """Start ``prompter serve`` (its defaults: batched, decoding in an engine process), ask once, stop it."""
    import json
    import urllib.request

    argv = [prompter, "serve", "--model", model, "--port", "0", "--max-new-tokens", "4"]
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None  # noqa: S101 - asked for above
        line = proc.stdout.readline()
        assert " at " in line, line + (proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        url = line.split(" at ", 1)[1].split()[0] + "/chat/completions"
        body = json.dumps({"model": Path(model).name, "messages": [{"role": "user", "content": "hi"}]}).encode()
        request = urllib.request.Request(url, body, {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:  # noqa: S310 - our own server on loopback
            usage = json.load(reply)["usage"]
        assert usage["completion_tokens"] >= 1, usage
        return f"answered over HTTP: {usage}"
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    raise SystemExit(main())

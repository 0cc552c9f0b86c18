#!/usr/bin/env bash
# Creates (or refreshes) the project's virtual environment in .venv with every
# extra installed. Sourced by demo.sh and test.sh; safe to run repeatedly.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "env.sh: installing into .venv: torch (CPU), then prompter with every extra; a few minutes the first time ..." >&2
  .venv/bin/python -m pip install -q --upgrade pip
  # torch first and pinned, from PyTorch's CPU index: the `local` extra leaves the build to the user,
  # and torch from the default index (pinned or not) is the CUDA build on Linux, gigabytes of
  # nvidia packages; see docs/install.md. Only torch itself comes from that index (--no-deps): its
  # dependencies come with the next step, from the usual index. A pip configured with local wheels
  # (find-links) still finds torch there.
  # (A machine that cannot reach it costs one retry of at most 15 s, then takes the local wheel.)
  .venv/bin/python -m pip install -q --no-deps "torch==2.13.0" --retries 1 --timeout 15 \
    --index-url "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
  # the distribution was called "prompter" before 0.1.0 shipped as "prompter-kit": drop the old editable install
  .venv/bin/python -m pip uninstall -q -y prompter 2>/dev/null || true
  .venv/bin/python -m pip install -q -e ".[all,dev]"
  rm -f .venv/.installed-*
  touch "$stamp"
  echo "env.sh: .venv ready" >&2
fi

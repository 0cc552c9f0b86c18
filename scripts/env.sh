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
  # torch first and pinned: the CPU build (the `local` extra leaves the build to the user, and
  # an unpinned torch from the default index would pull CUDA packages); see docs/install.md
  .venv/bin/python -m pip install -q "torch==2.13.0"
  # the distribution was called "prompter" before 0.1.0 shipped as "prompter-kit": drop the old editable install
  .venv/bin/python -m pip uninstall -q -y prompter 2>/dev/null || true
  .venv/bin/python -m pip install -q -e ".[all,dev]"
  rm -f .venv/.installed-*
  touch "$stamp"
  echo "env.sh: .venv ready" >&2
fi

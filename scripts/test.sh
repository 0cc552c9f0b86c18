#!/usr/bin/env bash
# The test job: lint, type-check, run the whole test suite, then install the built wheel
# into a fresh venv and run what a new user runs against it (tests/packaging/wheel_job.py).
# Arguments go to pytest; with any, the wheel job is skipped (a partial run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/env.sh
bash scripts/browser.sh  # the system Chromium for the playground's browser tests (apt, once)
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
if [ "$#" -eq 0 ]; then
  .venv/bin/python tests/packaging/wheel_job.py
fi

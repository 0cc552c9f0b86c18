#!/usr/bin/env bash
# The test job: lint, type-check, run the whole test suite, then install the built wheel
# into a fresh venv and run what a new user runs against it (tests/packaging/wheel_job.py).
# Arguments go to pytest (in one process); with any, the wheel job is skipped (a partial run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/env.sh
bash scripts/browser.sh  # the system Chromium for the playground's browser tests (apt, once)
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/mypy
if [ "$#" -eq 0 ]; then
  # the whole suite over one worker per core (pytest-xdist), at most 4: each worker starts servers
  # and engine processes of its own
  workers="$(nproc 2>/dev/null || echo 2)"
  if [ "$workers" -gt 4 ]; then workers=4; fi
  .venv/bin/python -m pytest -q -n "$workers"
  .venv/bin/python tests/packaging/wheel_job.py
else
  .venv/bin/python -m pytest -q "$@"
fi

#!/usr/bin/env bash
# The test job: lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"

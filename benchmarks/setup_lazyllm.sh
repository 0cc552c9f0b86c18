#!/usr/bin/env bash
# Installs LazyLLM 1.4.0 into its own venv, .lazyllm-venv (gitignored), for
# bench_prompter.py's comparison. It never touches the project's .venv.
#
# lazyllm is installed with --no-deps, plus only what importing
# lazyllm.components.prompter needs (found by trial: the package's top-level
# __init__ runs first and pulls in its config, launcher and logging layers).
# Safe to run repeatedly.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
venv=.lazyllm-venv
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "lazyllm==1.4.0"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  toml cloudpickle filelock requests pyyaml packaging \
  "psutil>=6.0.0,<7.0.0" "json5>=0.9.25,<0.10.0" "pydantic>=2.11.7,<3" "loguru>=0.7.2"
# pip warns that lazyllm's other dependencies (fastapi, uvicorn, ...) are missing; the prompters do not need them
cd /tmp && "$root/$venv/bin/python" -c \
  "import lazyllm; from lazyllm.components.prompter import AlpacaPrompter, ChatPrompter; print('lazyllm', lazyllm.__version__, 'ok')"

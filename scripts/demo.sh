#!/usr/bin/env bash
# The main job: render the documented examples in every output format, then run
# a ChatPrompter through a locally built tiny model, serve it and call it over HTTP.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/python examples/render_formats.py
if [ -f modules/demo.py ]; then
  .venv/bin/python -m modules.demo
fi

#!/usr/bin/env bash
# The checks that need vLLM and a CUDA GPU (CI has neither): the real-vLLM engine tests and the
# throughput of the vLLM engine against the transformers engine on the same GPU.
# Usage: bash scripts/gpu_check.sh [out-dir]   (vLLM importable, a GPU visible; nothing is downloaded)
set -uo pipefail
out="${1:-${OUT:-/tmp/gpu-check}}"
mkdir -p "$out"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 VLLM_CONFIGURE_LOGGING="${VLLM_CONFIGURE_LOGGING:-1}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py="${PYTHON:-python3}"
{
  nvidia-smi -L
  "$py" -c "import torch, transformers, vllm; print('torch', torch.__version__, 'transformers', transformers.__version__, 'vllm', vllm.__version__, 'gpus', torch.cuda.device_count())"
} 2>&1 | tee "$out/versions.txt"
timeout "${TESTS_TIMEOUT:-240}" "$py" -m pytest -q -p no:cacheprovider -o timeout=200 \
  tests/local/test_engine_vllm_gpu.py tests/local/test_engine_vllm.py tests/local/test_seeded_sampling_on_a_gpu.py 2>&1 | tee "$out/pytest.log"
echo "pytest exit: ${PIPESTATUS[0]}" | tee -a "$out/pytest.log"
timeout "${BENCH_TIMEOUT:-330}" "$py" benchmarks/bench_vllm.py --models "${MODELS:-tiny,small}" \
  --json "$out/bench_vllm.json" --logs /tmp 2>&1 | tee "$out/bench.log"
echo "bench exit: ${PIPESTATUS[0]}" | tee -a "$out/bench.log"
for f in /tmp/serve-*.log; do [ -f "$f" ] && { echo "== $f"; tail -40 "$f"; }; done > "$out/serve-logs.txt" 2>&1

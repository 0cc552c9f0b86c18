"""Fine-tune with one process or several: the same script, the same loss curve.

    python examples/finetune_distributed.py [OUTPUT_DIR]
    torchrun --standalone --nproc_per_node 2 examples/finetune_distributed.py [OUTPUT_DIR]

Under torchrun, ``finetune`` joins the process group (gloo on CPU), wraps the model in
DistributedDataParallel and splits each global batch (``batch_size`` examples) across the
processes; the loss of each step is computed over the whole global batch, so the curve
printed here is the same, to float rounding, for 1 and 2 processes. Rank 0 saves the
model and ``training_log.json`` into OUTPUT_DIR (a temporary folder if none is given).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from transformers.utils import logging as hf_logging

from prompter import ChatPrompter
from prompter.modules import TrainableModule, cached_tiny_model

hf_logging.disable_progress_bar()
pairs = [{"input": f"What is {a} plus {b}?", "output": str(a + b)} for a, b in [(1, 2), (3, 4), (5, 6), (7, 8),
                                                                              (2, 2), (4, 5), (6, 1), (9, 9)]]  # fmt: skip
output = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "tuned"
model = TrainableModule(cached_tiny_model("qwen2.5"), max_new_tokens=8)
model.prompt(ChatPrompter("Answer with a number.", enable_system=False))
tuned = model.finetune(pairs, output, epochs=3, lr=2e-3, batch_size=4, progress=False)
if int(os.environ.get("RANK", "0")) == 0:
    log = json.loads((output / "training_log.json").read_text(encoding="utf-8"))
    print(f"{log['world_size']} process(es), losses:", " ".join(f"{s['loss']:.5f}" for s in log["steps"]))
tuned.stop()

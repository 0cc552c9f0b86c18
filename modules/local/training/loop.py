"""Supervised fine-tuning: a small torch loop over the module's own training examples.

Why a plain loop and not transformers' ``Trainer`` (or trl's ``SFTTrainer``): the
examples already carry their loss masks (:mod:`.example`), so the trainers' data
handling has nothing left to do, and what remains is AdamW + gradient clipping at 1.0
(``Trainer``'s default) + a linear schedule. On the tiny model ``Trainer`` trains as
fast (docs/finetune.md has the figures), so speed decides nothing; the loop needs no
``accelerate`` and normalises the loss over the global batch's tokens, which keeps the
N-process loss curve equal to the 1-process one (a mean per process would not).

Beyond one process: launched by ``torchrun --nproc_per_node N`` (the environment
carries ``WORLD_SIZE``/``RANK``), the same call joins the process group (gloo
on CPU, nccl on GPU), wraps the model in ``DistributedDataParallel`` and splits
each global batch across the processes. The loss of a step is the sum over the
global batch's tokens divided by their count, as one process computes it, so
the loss curve of N processes matches the curve of one (to float rounding).
Rank 0 saves; every rank returns the trained module.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from modules.errors import MissingExtraError, ModuleConfigError
from modules.local.engines import SMALL_MODEL_PARAMETERS
from modules.local.training.batches import collate, global_batches
from modules.local.training.built import built_examples, check_ids
from modules.local.training.progress import progress_bar

__all__ = ["LOG_FILE", "TrainOptions", "output_folder", "train_folder"]

logger = logging.getLogger(__name__)

LOG_FILE = "training_log.json"
"""Written into ``output_dir``: the options and the loss of every step (``{"step", "epoch", "loss"}``)."""


@dataclass(frozen=True)
class TrainOptions:
    """How to train; every field is a keyword of ``finetune``. Defaults converge on small data (docs/finetune.md)."""

    epochs: float = 3
    """Passes over the data (a fraction stops part-way through the last one)."""
    lr: float = 1e-4
    """The peak learning rate (AdamW), decayed linearly to 0 unless ``lr_schedule="constant"``."""
    batch_size: int = 1
    """Examples per optimizer step, across all processes (the global batch). 1 by default: on small data
    more, smaller steps memorise best (measured on the tiny model: docs/finetune.md)."""
    lora: bool = False
    """Train LoRA adapters (peft) instead of every weight; they are merged into the saved weights."""
    lora_r: int = 8
    lora_alpha: int = 16
    lora_target_modules: Sequence[str] | str | None = "all-linear"
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    """Gradients are clipped to this global norm at every step, as transformers' Trainer does."""
    lr_schedule: str = "linear"
    seed: int = 0
    """Seeds the data order (the same on every process) and anything random in the model."""
    max_length: int | None = None
    """Cut examples to this many tokens (counted in the summary as truncated)."""
    train_on_history: bool = False
    threads: int | None = None
    """torch threads while training (restored afterwards); default: see :func:`_threads`."""
    progress: bool = True
    on_log: Callable[[dict[str, Any]], None] | None = None
    """Called on rank 0 with ``{"step", "epoch", "loss", "lr"}`` after every step."""

    def __post_init__(self) -> None:
        # Every option is checked here, before any work: a bad one must not surface as a bare
        # TypeError/OverflowError from torch, or only after the first step (on_log), or never (threads=-3).
        for name in ("epochs", "lr", "max_grad_norm"):
            value = getattr(self, name)
            if not _number(value) or not value > 0 or (name != "max_grad_norm" and not math.isfinite(value)):
                raise ModuleConfigError(f"finetune: {name} must be a positive number, got {value!r}")
        for name in ("batch_size", "lora_r", "lora_alpha"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModuleConfigError(f"finetune: {name} must be an int >= 1, got {value!r}")
        if self.lr_schedule not in ("linear", "constant"):
            raise ModuleConfigError(f"finetune: lr_schedule must be 'linear' or 'constant', got {self.lr_schedule!r}")
        decay = self.weight_decay
        if not _number(decay) or not math.isfinite(decay) or decay < 0:
            raise ModuleConfigError(f"finetune: weight_decay must be a number >= 0, got {decay!r}")
        for name, least in (("threads", 1), ("max_length", 2)):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
                raise ModuleConfigError(f"finetune: {name} must be None or an int >= {least}, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not -(2**32) < self.seed < 2**32:
            raise ModuleConfigError(f"finetune: seed must be an int between -2**32 and 2**32, got {self.seed!r}")
        for name in ("lora", "train_on_history", "progress"):
            if type(getattr(self, name)) is not bool:
                raise ModuleConfigError(f"finetune: {name} must be True or False, got {getattr(self, name)!r}")
        if self.on_log is not None and not callable(self.on_log):
            raise ModuleConfigError(f"finetune: on_log must be a function taking a dict, got {self.on_log!r}")
        targets = self.lora_target_modules
        if targets is not None and not isinstance(targets, str) and not (
            isinstance(targets, Sequence) and targets and all(isinstance(t, str) for t in targets)
        ):
            raise ModuleConfigError(
                f"finetune: lora_target_modules must be None, 'all-linear' or a list of module names, got {targets!r}"
            )

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> TrainOptions:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ModuleConfigError(f"finetune: unknown option {unknown[0]!r}; known: {', '.join(sorted(known))}")
        return cls(**options)


def train_folder(module: Any, source_path: str, data: Any, output_dir: str | Path, **options: Any) -> Path:
    """Train a copy of the model at *source_path* on *data* and save it to *output_dir*; return the folder.

    *data* is anything :func:`~modules.local.training.data.build_examples` reads (a JSONL path,
    a list of records, a ``datasets.Dataset``) or a list of examples already built.
    *options* are the fields of :class:`TrainOptions`.
    """
    opts = TrainOptions.of(options)
    out = output_folder(output_dir, source_path)
    try:
        import torch
        from transformers import AutoModelForCausalLM
    except ImportError as exc:
        raise MissingExtraError("finetune needs the 'local' extra: pip install 'prompter-kit[local,train]'") from exc
    from modules.local.training.data import build_examples

    world, rank = _join_process_group(torch)
    examples = built_examples(data, opts.max_length, opts.train_on_history) or build_examples(
        module, data, max_length=opts.max_length, train_on_history=opts.train_on_history,
        progress=opts.progress and rank == 0,
    )  # fmt: skip
    if not examples:
        raise ModuleConfigError("finetune: no training examples in data")
    if all(label == -100 for example in examples for label in example["labels"][1:]):  # the first is never a target
        cut = f"; max_length={opts.max_length} cut every answer off, raise it" if opts.max_length else ""
        raise ModuleConfigError(f"finetune: no token of data is learnt (every label is -100){cut}")
    torch.manual_seed(opts.seed)
    model = AutoModelForCausalLM.from_pretrained(source_path, local_files_only=True, dtype=torch.float32)
    check_ids(examples, int(model.get_input_embeddings().num_embeddings))
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(_threads(opts.threads, model, world))
    try:
        model, log, seconds = _train(torch, model, examples, opts, world, rank, _pad_id(module.tokenizer))
    finally:
        torch.set_num_threads(previous_threads)
    if rank == 0:
        _save(model, module.tokenizer, source_path, out)
        summary = {"steps": log, "seconds": seconds, "examples": len(examples), "world_size": world,
                   "epochs": opts.epochs, "lr": opts.lr, "batch_size": opts.batch_size, "lora": opts.lora}  # fmt: skip
        (out / LOG_FILE).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        logger.info(
            "finetune: %d steps in %.1f s, final loss %.4f, saved to %s", len(log), seconds, log[-1]["loss"], out
        )
    if world > 1:
        torch.distributed.barrier()
    return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def output_folder(output_dir: Any, source_path: str) -> Path:
    """*output_dir* as an absolute path that is safe to save into, checked before any work.

    It must hold no model files: saving over another model would mix its files with ours (a
    stale shard or adapter makes the folder load as something else); other files (the training
    data, notes) may sit beside the weights. The source model's folder is never written. A
    relative path is taken from the current folder, once, so the returned module still finds
    its weights after a ``chdir``.
    """
    if isinstance(output_dir, os.PathLike):
        output_dir = os.fspath(output_dir)
    if not isinstance(output_dir, str) or not output_dir.strip():
        raise ModuleConfigError(f"finetune: output_dir must be a folder path (a str or a Path), got {output_dir!r}")
    if output_dir.startswith("~"):
        raise ModuleConfigError(
            f"finetune: output_dir {output_dir!r} starts with '~', which is not expanded here; "
            "give the full path (os.path.expanduser)"
        )
    out = Path(output_dir).resolve()
    source = Path(source_path).resolve()
    if out == source or source in out.parents:
        raise ModuleConfigError(
            f"finetune: output_dir {str(out)!r} is inside the model being trained ({str(source)!r}), "
            "whose folder is never written; pick a folder outside it"
        )
    if out.exists() and not out.is_dir():
        raise ModuleConfigError(f"finetune: output_dir {str(out)!r} is a file; give a new or empty folder")
    held = sorted(p.name for p in out.iterdir() if _MODEL_FILE.fullmatch(p.name)) if out.is_dir() else []
    if held:
        raise ModuleConfigError(
            f"finetune: output_dir {str(out)!r} already holds a model ({', '.join(held[:3])}); refusing to "
            "save over it, where stale files would mix with ours (pick a new folder, or remove those files first)"
        )
    return out


_MODEL_FILE = re.compile(
    r"config\.json|generation_config\.json|adapter_config\.json|adapter_model\..*|.*\.safetensors(\.index\.json)?"
    r"|pytorch_model.*\.bin(\.index\.json)?|tokenizer(_config)?\.json|special_tokens_map\.json|chat_template\.jinja"
)
"""What a saved model or adapter folder holds (transformers' and peft's file names)."""


def _threads(threads: int | None, model: Any, world: int) -> int:
    """The torch threads to train with: as asked, else 1 for a small model, else the cores over the processes.

    A small model's matrices are too small to split: on the tiny test model one thread runs
    a step several times faster than two on a busy 2-core machine (docs/finetune.md).
    """
    if threads is not None:
        return threads
    if sum(p.numel() for p in model.parameters()) < SMALL_MODEL_PARAMETERS:
        return 1
    return max(1, (os.cpu_count() or 1) // world)


def _pad_id(tokenizer: Any) -> int:
    for tid in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if tid is not None:
            return int(tid)
    return 0  # padding is masked out of attention and loss: any id will do


def _train(
    torch: Any,
    model: Any,
    examples: Sequence[Mapping[str, list[int]]],
    opts: TrainOptions,
    world: int,
    rank: int,
    pad_id: int,
) -> tuple[Any, list[dict[str, Any]], float]:
    """The loop; returns the model to save (LoRA merged in), the per-step log and the seconds it took."""
    if opts.lora:
        model = _with_lora(model, opts.lora_r, opts.lora_alpha, opts.lora_target_modules)
    model.train()
    trained = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=opts.lr, weight_decay=opts.weight_decay)
    total = max(1, math.ceil(opts.epochs * math.ceil(len(examples) / opts.batch_size)))
    linear = opts.lr_schedule == "linear"
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / total if linear else 1.0)
    log: list[dict[str, Any]] = []
    bar = progress_bar(total, "finetune", "step", opts.progress and rank == 0)
    started = time.perf_counter()
    epoch = 0
    while len(log) < total:
        for batch in global_batches(len(examples), opts.batch_size, epoch, opts.seed):
            if len(log) >= total:
                break
            loss = _step(torch, trained, [examples[i] for i in batch], world, rank, pad_id)
            torch.nn.utils.clip_grad_norm_(params, opts.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            entry = {"step": len(log) + 1, "epoch": epoch + 1, "loss": loss, "lr": scheduler.get_last_lr()[0]}
            log.append(entry)
            if opts.on_log is not None and rank == 0:
                opts.on_log(entry)
            if bar is not None:
                bar.set_postfix(loss=f"{loss:.4f}")
                bar.update(1)
        epoch += 1
        logger.info("finetune: epoch %d done, loss %.4f", epoch, log[-1]["loss"])
    if bar is not None:
        bar.close()
    if opts.lora:
        model = model.merge_and_unload()  # the LoRA deltas folded into the base weights: a plain model
    model.eval()
    return model, log, time.perf_counter() - started


def _step(torch: Any, model: Any, batch: list[Mapping[str, list[int]]], world: int, rank: int, pad_id: int) -> float:
    """Forward and backward on this process's share of one global batch; return the global batch's loss."""
    mine = batch[rank::world]
    weight = 1.0
    if not mine:  # fewer examples than processes: take part in the gradient sync with a zero-weight one
        mine, weight = batch[:1], 0.0
    tensors = collate(mine, pad_id)
    logits = model(input_ids=tensors["input_ids"], attention_mask=tensors["attention_mask"]).logits
    targets = tensors["labels"][:, 1:]
    loss_sum = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]).float(), targets.reshape(-1), ignore_index=-100, reduction="sum"
    )
    counts = torch.tensor([float((targets != -100).sum()) * weight, float(loss_sum.detach()) * weight])
    if world > 1:
        torch.distributed.all_reduce(counts)
    tokens = max(float(counts[0]), 1.0)
    # DDP averages gradients over processes: scale so the average is d(global sum / global tokens).
    (loss_sum * weight * world / tokens).backward()
    return float(counts[1]) / tokens


def _join_process_group(torch: Any) -> tuple[int, int]:
    """(world size, rank): from torchrun's environment, joining the process group when it is not joined yet."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 1, 0
    dist = torch.distributed
    if not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_world_size(), dist.get_rank()


def _with_lora(model: Any, r: int, alpha: int, targets: Sequence[str] | str | None) -> Any:
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise MissingExtraError("lora=True needs peft: pip install 'prompter-kit[train]'") from exc
    config = LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=0.0,
        target_modules=targets if targets is None or isinstance(targets, str) else list(targets),
        task_type="CAUSAL_LM",
    )
    try:
        return get_peft_model(model, config)
    except ValueError as exc:  # peft's NoMatchingPeftModuleError (a ValueError): names that match no layer
        import torch

        linear = sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)})
        raise ModuleConfigError(
            f"finetune: lora_target_modules={targets!r} cannot be trained with LoRA on this model ({exc}); "
            f"its linear layers are {', '.join(linear)}, or pass 'all-linear'"
        ) from exc


def _save(model: Any, tokenizer: Any, source_path: str, out: Path) -> None:
    """A plain HF folder that loads back by path (LoRA weights merged in), with the source's tokenizer files."""
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    for name in ("chat_template.jinja", "generation_config.json"):  # kept byte for byte: the format binds to them
        if (Path(source_path) / name).is_file():
            shutil.copyfile(Path(source_path) / name, out / name)

"""Build a tiny, real Hugging Face chat model on the spot, without a network.

Tests, the demo and the docs need a model that transformers loads like any
other: a ``config.json``, safetensors weights, a ``tokenizer.json`` and a chat
template. Downloading one is not an option (offline machines, reproducible
tests), so :func:`build_tiny_model` makes one in a couple of seconds:

* a byte-level BPE tokenizer trained with ``tokenizers`` on the short text the
  project ships (``modules/local/data/corpus.txt``), with the special tokens of a real
  model family added as special tokens;
* that family's real chat template (one of the 40 in ``chat_templates/``);
* a small causal LM (Qwen2 for the Qwen families, Llama otherwise; hidden size
  64, two layers) with random weights drawn from a fixed seed.

The answers are gibberish, but they are *deterministic* gibberish: greedy
decoding of the same prompt gives the same tokens every time, which is exactly
what tests of batching, streaming and serving need. The same arguments give
the same bytes on disk::

    >>> import tempfile
    >>> from modules.local.tiny_model import build_tiny_model
    >>> path = build_tiny_model(tempfile.mkdtemp() + "/tiny", family="qwen2.5")
    >>> sorted(p.name for p in path.iterdir())[:3]
    ['chat_template.jinja', 'config.json', 'generation_config.json']

From the shell: ``prompter tiny-model PATH [--family NAME]``.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from modules.errors import ModuleConfigError

__all__ = [
    "DEFAULT_FAMILY",
    "FamilySpec",
    "UnknownFamilyError",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "cached_tiny_model",
    "chat_templates_dir",
    "family_spec",
    "list_families",
]

DEFAULT_FAMILY = "qwen2.5"
"""The family a tiny model gets when none is named (ChatML delimiters, a tool syntax)."""

MARKER = "prompter-tiny-model.json"
"""The file that marks a folder as a tiny model built here (rebuilding over it needs no ``force``)."""

_CORPUS = Path(__file__).with_name("data") / "corpus.txt"
_VOCAB_SIZE = 1024
_MAX_POSITIONS = 2048
_INIT_RANGE = 0.2
BUILD = 3
"""The tiny model's build: bumped whenever the same family and seed give other files, so that
:func:`cached_tiny_model` rebuilds a cache folder written by an earlier build (1: weights drawn
with a spread of 0.5, which saturated attention so that fine-tuning could not memorise small data;
2: Hermes 2 Pro and Command R had only their tool-use template, which fails without tools)."""


def chat_templates_dir() -> Path:
    """The folder holding ``index.json`` and the real ``<family>.jinja`` templates.

    The prompter package ships them in ``prompter/formats/chat_templates``; a
    development checkout may also find them in ``../shared/chat_templates``.
    ``PROMPTER_CHAT_TEMPLATES`` overrides both.
    """
    candidates = []
    if os.environ.get("PROMPTER_CHAT_TEMPLATES"):
        candidates.append(Path(os.environ["PROMPTER_CHAT_TEMPLATES"]))
    import prompter.formats

    shipped = Path(prompter.formats.__file__).resolve().parent / "chat_templates"
    root = Path(__file__).resolve().parents[2]
    candidates += [shipped, root.parent / "shared" / "chat_templates"]
    for folder in candidates:
        if (folder / "index.json").is_file():
            return folder
    raise FileNotFoundError(
        "no chat templates found (looked in " + ", ".join(str(c) for c in candidates) + "); "
        "set PROMPTER_CHAT_TEMPLATES to a folder with index.json and <family>.jinja files"
    )


@dataclass(frozen=True)
class FamilySpec:
    """What a tiny model borrows from a real family."""

    family: str
    """The family's name in ``index.json`` (``qwen2.5``, ``llama-3.1``, ...)."""
    chat_template: str
    """The family's jinja chat template, verbatim."""
    bos_token: str | None
    """The beginning-of-sequence token, or None where the family has none."""
    eos_token: str
    """The end-of-turn / end-of-sequence token generation stops at."""
    special_tokens: tuple[str, ...]
    """The family's delimiter tokens besides bos/eos; all become special tokens."""

    @property
    def control_tokens(self) -> tuple[str, ...]:
        """Every token string that must only ever come from markup, in a stable order."""
        seen: dict[str, None] = {}
        for tok in (self.bos_token, self.eos_token, *self.special_tokens):
            if tok:
                seen.setdefault(tok, None)
        return tuple(seen)


class UnknownFamilyError(ModuleConfigError, KeyError):
    """No chat-template family has this name; the message lists the known ones.

    A :class:`~modules.errors.ModuleConfigError` (the CLI prints it as one line)
    and, as before, a ``KeyError``.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@cache
def _index() -> dict[str, dict[str, Any]]:
    folder = chat_templates_dir()
    entries = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    return {e["family"]: e for e in entries}


def list_families() -> list[str]:
    """The names of every family a tiny model can be built for."""
    return sorted(_index())


def family_spec(family: str) -> FamilySpec:
    """The template and special tokens of *family*, named in any case (``Qwen2.5`` is ``qwen2.5``, as
    ``ModelFormat.get`` reads it); a KeyError names the known ones and the closest."""
    index = _index()
    key = family.strip().lower() if isinstance(family, str) else None
    if key not in index:
        close = difflib.get_close_matches(key, list(index), n=3, cutoff=0.6) if key is not None else []
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise UnknownFamilyError(f"unknown model family {family!r}; {hint}known families: {', '.join(sorted(index))}")
    entry = index[key]
    template = (chat_templates_dir() / entry["file"]).read_text(encoding="utf-8")
    return FamilySpec(
        family=key,
        chat_template=template,
        bos_token=entry.get("bos_token"),
        eos_token=entry["eos_token"],
        special_tokens=tuple(entry.get("special_tokens") or ()),
    )


def build_tiny_tokenizer(family: str = DEFAULT_FAMILY, vocab_size: int = _VOCAB_SIZE) -> Any:
    """A ``PreTrainedTokenizerFast`` for *family*: byte-level BPE, trained locally.

    Every control token of the family (bos, eos and the delimiters listed in
    ``index.json``) is an added *special* token, as it is in the real model, so
    a plain ``tokenizer(text)`` turns those strings into single control ids.
    The family's chat template is set on the tokenizer.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    spec = family_spec(family)
    family = spec.family  # the index's spelling, whatever case it was given in
    specials = list(spec.control_tokens)
    # Qwen tokenizers pad with <|endoftext|>; transformers' Qwen2Tokenizer adds it when missing,
    # which would give an id past the embedding matrix, so the tiny model has it from the start.
    pad = "<|endoftext|>" if family.startswith("qwen") else spec.eos_token
    if pad not in specials:
        specials.append(pad)
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    lines = _CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)
    backend.train_from_iterator(lines, trainer=trainer)
    extra = [t for t in specials if t not in (spec.bos_token, spec.eos_token, pad)]
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=spec.bos_token,
        eos_token=spec.eos_token,
        pad_token=pad,
        extra_special_tokens=extra,
        model_max_length=_MAX_POSITIONS,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = _named_templates(family) or spec.chat_template
    return tokenizer


def _named_templates(family: str) -> dict[str, str] | None:
    """``{"default": ..., "tool_use": ...}`` for a family whose real model ships two templates (Hermes 2
    Pro, Command R): transformers renders with ``tool_use`` only when tools are given. ``index.json``
    names the tool-use one; the default is the registry's."""
    from prompter.formats.model_format import ModelFormat
    from prompter.formats.registry import FAMILIES

    if "tool_file" not in FAMILIES.get(family, {}):
        return None
    fmt = ModelFormat.get(family)
    if not fmt.chat_template or not fmt.tool_chat_template:
        return None
    return {"default": fmt.chat_template, "tool_use": fmt.tool_chat_template}


def _model_config(family: str, tokenizer: Any, **sizes: Any) -> Any:
    """The tiny configuration for *family* (*sizes* override its widths and depths, for larger test models)."""
    from transformers import LlamaConfig, Qwen2Config

    common = dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=_MAX_POSITIONS,
        tie_word_embeddings=True,
        # Larger than the usual 0.02 so that random weights still make the next token depend
        # on the prompt (distinct prompts give distinct, gibberish, answers), and small enough
        # that attention does not saturate: at 0.5 fine-tuning could not memorise 20 pairs.
        initializer_range=_INIT_RANGE,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    common.update(sizes)
    if family.startswith("qwen"):
        return Qwen2Config(**common)
    return LlamaConfig(**common)


def build_tiny_model(
    path: str | os.PathLike[str], family: str = DEFAULT_FAMILY, seed: int = 0, *, force: bool = False
) -> Path:
    """Write a tiny, loadable chat model for *family* to *path* and return the path.

    The folder holds what ``AutoModelForCausalLM.from_pretrained`` and
    ``AutoTokenizer.from_pretrained`` expect (with ``local_files_only=True``).
    Same *family* and *seed*, same bytes. Takes a second or two on a laptop.

    *path* must be missing, empty, or a tiny model built here before (it holds
    ``prompter-tiny-model.json``); any other non-empty folder is refused with a
    :class:`~modules.errors.ModuleConfigError` unless ``force=True``, so a real
    model is never overwritten by mistake. An unknown *family* raises
    :class:`UnknownFamilyError` before anything is written.
    """
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    out = Path(path)
    family = family_spec(family).family  # an unknown family fails before the folder is made
    check_target(out, force)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModuleConfigError(f"cannot create the model folder {str(out)!r}: {exc.strerror or exc}") from exc
    tokenizer = build_tiny_tokenizer(family)
    config = _model_config(family, tokenizer)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        do_sample=False,
    )
    try:
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
        (out / MARKER).write_text(json.dumps({"family": family, "seed": seed, "build": BUILD}) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ModuleConfigError(f"cannot write the tiny model to {str(out)!r}: {exc.strerror or exc}") from exc
    return out


def check_target(out: Path, force: bool) -> None:
    """Refuse a file, or a non-empty folder that is not a tiny model of ours (unless *force*)."""
    if out.exists() and not out.is_dir():
        raise ModuleConfigError(f"{str(out)!r} is a file, not a folder: give a new or empty folder for the tiny model")
    if force or not out.is_dir() or (out / MARKER).is_file():
        return
    try:
        occupied = any(out.iterdir())
    except OSError as exc:
        raise ModuleConfigError(f"cannot read the folder {str(out)!r}: {exc.strerror or exc}") from exc
    if occupied:
        raise ModuleConfigError(
            f"{str(out)!r} is not empty and holds no tiny model built by prompter; "
            "refusing to overwrite it (pick another folder, or pass --force / force=True)"
        )


def cached_tiny_model(family: str = DEFAULT_FAMILY, seed: int = 0, cache_dir: str | None = None) -> Path:
    """Build the tiny model once into a cache folder and reuse it afterwards.

    The folder is ``<cache_dir or $PROMPTER_CACHE or the temp dir>/prompter-tiny/<family>-<seed>``;
    a finished build is marked by ``.complete`` (holding :data:`BUILD`), so an interrupted one, or
    one an earlier build of prompter wrote, is redone.
    """
    named = "cache_dir" if cache_dir else "PROMPTER_CACHE" if os.environ.get("PROMPTER_CACHE") else "the temp dir"
    base = Path(cache_dir or os.environ.get("PROMPTER_CACHE") or tempfile.gettempdir())
    cache = _ensure(base / "prompter-tiny", named)
    family = family_spec(family).family  # one folder per family, whatever case it was named in
    target = cache / f"{family}-{seed}"
    if _complete(target):
        return target
    import shutil

    try:
        staging = Path(tempfile.mkdtemp(prefix=f"{family}-", dir=cache))
    except OSError as exc:  # a cache folder we may not write to
        raise ModuleConfigError(
            f"cannot write to the tiny-model cache {str(cache)!r} ({named}): {exc.strerror or exc}; "
            "point PROMPTER_CACHE (or cache_dir=) at a folder you can write to"
        ) from None
    try:
        build_tiny_model(staging, family=family, seed=seed)
        (staging / ".complete").write_text(f"build {BUILD}\n", encoding="utf-8")
        try:
            staging.replace(target)
        except OSError:
            # Another process finished first (or a stale folder is in the way): use whichever is complete.
            if not _complete(target):
                shutil.rmtree(target, ignore_errors=True)
                staging.replace(target)
    finally:  # a failed build (an unknown family, an interrupt) or a lost race leaves no folder behind
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _complete(folder: Path) -> bool:
    """Whether *folder* holds a finished build of this :data:`BUILD`."""
    try:
        return (folder / ".complete").read_text(encoding="utf-8").strip() == f"build {BUILD}"
    except OSError:
        return False


def _ensure(folder: Path, named: str) -> Path:
    """*folder*, made if missing; a place no folder can be made is a typed error naming where it came from."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModuleConfigError(
            f"cannot make the tiny-model cache {str(folder)!r} ({named}): {exc.strerror or exc}; "
            "point PROMPTER_CACHE (or cache_dir=) at a folder you can write to"
        ) from None
    return folder

"""``prompter eval CONFIG``: run an OpenCompass/AISBench-style evaluation config.

CONFIG is a ``.json`` file, or a ``.py`` file written as OpenCompass configs are
(it is run as Python, like any config of yours, so only run files you trust; its
``from opencompass... import PromptTemplate`` lines give the names, see
:data:`UPSTREAM_PACKAGES`). It
defines ``dataset`` (or a one-item ``datasets``) and ``model`` (or ``models``), and
may set ``output``, ``workers``, ``compat`` and ``backend`` (``"ray"``, with ``ray_address``).
Paths in it are relative to its folder.
"""

from __future__ import annotations

import argparse
import builtins
import json
import os
import re
import runpy
import types
from pathlib import Path
from typing import Any

from modules.errors import ModuleConfigError

__all__ = ["UPSTREAM_PACKAGES", "add_parser", "colour_wanted", "load_config", "run", "run_view", "view"]


UPSTREAM_PACKAGES = ("opencompass", "ais_bench")
"""Packages a pasted config imports its ``type`` classes from; in a config each imported name is the
name itself (``from opencompass.openicl.icl_prompt_template import PromptTemplate`` gives
``"PromptTemplate"``, and so do ``M.PromptTemplate`` after ``import ... as M`` and the whole dotted
name after ``import opencompass``), which ``type=`` accepts. Neither package is needed or imported."""


class _OtherConfigFile(BaseException):
    """A config reads ``opencompass.configs...``: the statement (or dotted name) that does (a BaseException,
    so that a config's own ``except Exception`` around the import cannot hide it)."""


def _member(path: str) -> str:
    """``path`` (``opencompass.openicl.PromptTemplate``) as a config sees it: its last name."""
    if "configs" in path.split(".")[1:]:  # opencompass.configs.datasets...: blocks of another config file
        raise _OtherConfigFile(path)
    return _UpstreamName(path)


class _UpstreamName(str):
    """A name read off an upstream module: the name itself (``M.PromptTemplate`` is ``"PromptTemplate"``),
    whose own names stand for themselves in turn, for a submodule reached by attribute
    (``opencompass.openicl.icl_prompt_template.PromptTemplate`` after ``import opencompass``).
    :func:`_plain` turns what is left in the config into plain str."""

    def __new__(cls, path: str) -> _UpstreamName:
        made = super().__new__(cls, path.rpartition(".")[2])
        made.__dict__["_upstream_path"] = path
        return made

    def __getattr__(self, name: str) -> str:  # only names str lacks
        if name.startswith("__"):
            raise AttributeError(name)
        return _member(f"{self.__dict__.get('_upstream_path', str(self))}.{name}")


class _UpstreamNames(types.ModuleType):
    """An upstream module as a pasted config sees it: every name imported from it stands for itself,
    and a submodule the config imported (``import opencompass.openicl.icl_prompt_template as M``) is itself."""

    def __init__(self, name: str, imported: dict[str, _UpstreamNames]) -> None:
        super().__init__(name)
        self._imported = imported

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_imported":
            raise AttributeError(name)
        path = f"{self.__name__}.{name}"
        return self._imported.get(path) or _member(path)


def _plain(value: Any, seen: dict[int, Any]) -> Any:
    """``value`` with every :class:`_UpstreamName` in its dicts, lists and tuples a plain str."""
    if isinstance(value, _UpstreamName):
        return str.__str__(value)
    if type(value) not in (dict, list, tuple):
        return value
    if id(value) in seen:  # a block used twice stays one block
        return seen[id(value)]
    if type(value) is dict:
        out: dict[Any, Any] = {}
        seen[id(value)] = out
        out.update((_plain(k, seen), _plain(v, seen)) for k, v in value.items())
        return out
    if type(value) is list:
        items: list[Any] = []
        seen[id(value)] = items
        items.extend(_plain(v, seen) for v in value)
        return items
    seen[id(value)] = made = tuple(_plain(v, seen) for v in value)
    return made


def _run_py(file: Path) -> dict[str, Any]:
    imported: dict[str, _UpstreamNames] = {}

    def imports(name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level == 0 and name.partition(".")[0] in UPSTREAM_PACKAGES:
            if "*" in (fromlist or ()):  # the stand-ins have no list of names: a star would import none
                raise ModuleConfigError(
                    f"config {str(file)!r}: 'from {name} import *' imports no names here (the upstream package "
                    "is not installed or needed); import each name the config uses: from ... import PromptTemplate"
                )
            if "configs" in (*name.split("."), *(fromlist or ())):
                statement = f"from {name} import {', '.join(fromlist)}" if fromlist else f"import {name}"
                raise _OtherConfigFile(statement)
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # as Python does: the package, then each submodule in it
                path = ".".join(parts[:i])
                imported.setdefault(path, _UpstreamNames(path, imported))
            return imported[name] if fromlist else imported[parts[0]]
        return builtins.__import__(name, globals_, locals_, fromlist, level)

    names = {**vars(builtins), "__import__": imports}
    try:
        variables = runpy.run_path(str(file), init_globals={"__builtins__": names})
    except _OtherConfigFile as exc:
        raise ModuleConfigError(
            f"config {str(file)!r}: '{exc}' reads another config file, which is not followed (its names "
            "would be bare strings here); paste the blocks it defines into this file"
        ) from None
    except ImportError as exc:
        raise ModuleConfigError(
            f"config {str(file)!r}: {exc}; a config may import from {', '.join(UPSTREAM_PACKAGES)} "
            "(the names stand for themselves) and from what is installed; paste the blocks it imports "
            "from other config files into it"
        ) from None
    except SyntaxError as exc:  # IndentationError too: the file (or a module it imports) is no Python
        at = f":{exc.lineno}" if exc.lineno else ""
        where = f"{file}{at}" if exc.filename in (None, str(file)) else f"{file}: {exc.filename}{at}"
        raise ModuleConfigError(
            f"config {where}: {type(exc).__name__}: {exc.msg}; correct the Python there"
        ) from None
    except ModuleConfigError:
        raise
    except Exception as exc:  # the config's own code failed (a NameError, 1/0, ...): where and what, no traceback
        raise ModuleConfigError(
            f"config {file}{_line_of(exc, file)}: {type(exc).__name__}: {_one_line(exc)}; the config runs as "
            "Python: correct that line"
        ) from None
    config: dict[str, Any] = {}
    for key, value in variables.items():
        if key.startswith("__"):
            continue
        try:
            config[key] = _plain(value, {})
        except RecursionError:
            raise ModuleConfigError(
                f"config {str(file)!r}: {key!r} is nested too deep to read; flatten it"
            ) from None
    return config


def _line_of(exc: BaseException, file: Path) -> str:
    """``:N``, the line of *file* the traceback of *exc* last passed through (``""`` if none)."""
    line, tb = "", exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(file):
            line = f":{tb.tb_lineno}"
        tb = tb.tb_next
    return line


def _one_line(exc: BaseException) -> str:
    """The message of *exc* on one line (a CLI error is one line)."""
    return " ".join(str(exc).splitlines()) or "(no message)"


def add_parser(sub: Any, formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter) -> None:
    """Add the ``eval`` subcommand to ``prompter``'s subparsers (help laid out by *formatter_class*:
    ``prompter`` passes the one the other commands use, which shows each option's default once)."""
    cmd = sub.add_parser(
        "eval",
        help="run an evaluation config (Gen/PPL over a dataset) into predictions JSONL",
        formatter_class=formatter_class,
    )
    cmd.add_argument("config", help="a .py or .json config defining dataset and model")
    cmd.add_argument("--output", default=None, help="predictions JSONL (default: the config's, or ABBR.jsonl)")
    cmd.add_argument("--workers", type=int, default=None, help="worker processes (default: the config's, or 1)")
    cmd.add_argument("--compat", default=None, choices=["opencompass", "aisbench"], help="upstream's exact prompts")
    cmd.add_argument("--limit", type=int, default=None, help="only the first N samples")
    cmd.add_argument("--no-progress", action="store_true", help="no progress bar")
    cmd.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="answer on Ray ('ray' extra), --workers actors: a local Ray, or the cluster at ADDRESS (auto, ray://...)",
    )
    cmd.add_argument(
        "--view",
        type=int,
        default=None,
        metavar="N",
        help="print the final prompts of the first N samples; run nothing",
    )


def load_config(path: str | Path) -> dict[str, Any]:
    """The variables of a ``.py`` config, or the object of a ``.json`` one."""
    file = Path(path)
    if not file.is_file():
        raise ModuleConfigError(f"config {str(file)!r}: no such file")
    if file.suffix == ".json":
        try:
            data = json.loads(file.read_text(encoding="utf-8-sig"))  # a byte-order mark is no JSON error
        except UnicodeDecodeError as exc:
            raise ModuleConfigError(
                f"config {str(file)!r}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
            ) from None
        except json.JSONDecodeError as exc:
            raise ModuleConfigError(
                f"config {str(file)!r}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
            ) from None
        except RecursionError:
            raise ModuleConfigError(f"config {str(file)!r}: JSON nested too deep to read; flatten it") from None
        except ValueError as exc:  # an integer of more digits than Python converts, say
            raise ModuleConfigError(
                f"config {str(file)!r}: JSON that cannot be read ({exc}); write the value as a string"
            ) from None
        if not isinstance(data, dict):
            raise ModuleConfigError(f"config {str(file)!r}: expected a JSON object")
        return data
    if file.suffix == ".py":
        return _run_py(file)
    raise ModuleConfigError(f"config {str(file)!r}: expected a .py or .json file")


def run(args: argparse.Namespace) -> int:
    """Handle ``prompter eval``."""
    from modules.eval.runner import run_eval

    if args.view is not None:
        ignored = [f"--{name}" for name in ("limit", "output", "workers", "ray") if getattr(args, name) is not None]
        if ignored:
            them = "it" if len(ignored) == 1 else "them"
            raise ModuleConfigError(
                f"{', '.join(ignored)}: `prompter eval CONFIG --view N` only prints prompts (it runs nothing) and "
                f"would ignore {them}; leave {them} out (N is the number of samples shown), or drop --view to run"
            )
        return run_view(Path(args.config), args.view, args.compat)
    config = load_config(args.config)
    stats = run_eval(
        config,
        output=args.output,
        workers=args.workers,
        progress=not args.no_progress,
        compat=args.compat,
        limit=args.limit,
        base_dir=Path(args.config).resolve().parent,
        backend="ray" if args.ray is not None else None,
        ray_address=args.ray or None,
    )
    print(f"{stats.output}: {stats.total} samples, {stats.resumed} resumed, {stats.answered} answered")
    return 0


def run_view(path: Path, n: int | None, compat: Any = None) -> int:
    """``prompter view CONFIG`` and ``prompter eval CONFIG --view N``: the config file's final prompts."""
    return view(load_config(path), n, compat=compat, base_dir=path.resolve().parent)


def colour_wanted(stream: Any) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set to anything but ``""`` (no-color.org)."""
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def view(
    config: dict[str, Any], n: int | None, *, compat: Any = None, base_dir: Path = Path("."), stream: Any = None
) -> int:
    """Print the final prompt of each of the first ``n`` samples (all: None), headers coloured on a terminal."""
    import sys

    from modules.eval.pipeline import plan
    from modules.eval.runner import config_parts

    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
        raise ModuleConfigError(f"the number of samples to view: expected an int >= 0, got {n!r}")
    out = stream if stream is not None else sys.stdout
    colour = colour_wanted(out)
    terminal = bool(getattr(out, "isatty", lambda: False)())
    dataset, model = config_parts(config, first_model=True)
    the_plan = plan(
        dataset,
        model,
        compat=compat or config.get("compat"),
        base_dir=base_dir,
        limit=n,
    )
    for job in the_plan.jobs():
        header = f"--- sample {job['index']} ({job['kind']}) ---"
        out.write((f"\x1b[1;36m{header}\x1b[0m" if colour else header) + "\n")
        prompts = job["origin_prompt"] if job["kind"] == "ppl" else [job["origin_prompt"]]
        labels = job.get("labels") or [None] * len(prompts)
        for label, prompt in zip(labels, prompts, strict=True):
            if label is not None:
                tag = _shown(f"[{label}]", terminal, out, job["index"])
                out.write((f"\x1b[33m{tag}\x1b[0m" if colour else tag) + "\n")
            # an API model's prompt is its turns: one JSON object a line, exactly as they are sent
            shown = prompt if isinstance(prompt, str) else "\n".join(json.dumps(t, ensure_ascii=False) for t in prompt)
            out.write(_shown(shown, terminal, out, job["index"]) + "\n")
    return 0


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Characters a terminal acts on (escape sequences, carriage returns, bells) rather than shows; not tab, newline."""


def _shown(text: str, terminal: bool, out: Any, index: int) -> str:
    """*text* as written to *out*: on a terminal, a dataset's control characters are shown as ``\\xNN``, never
    acted on (a sample's ``\\x1b]...`` cannot retitle or clear the terminal); anywhere, a character *out* cannot
    encode (a lone surrogate from a ``"\\ud800"`` JSON escape) is an error naming the sample, not a traceback."""
    if terminal:
        text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    encoding = getattr(out, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError as exc:
        char = text[exc.start]
        what, remedy = (
            ("a lone surrogate, not Unicode text", "remove it from the dataset")
            if "\ud800" <= char <= "\udfff"
            else (f"not writable in {encoding}", "set PYTHONIOENCODING=utf-8, or use a UTF-8 terminal")
        )
        raise ModuleConfigError(
            f"sample {index}: character {exc.start} of its prompt (U+{ord(char):04X}) is {what}: {remedy}"
        ) from None
    return text

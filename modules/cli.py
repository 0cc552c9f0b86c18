"""The ``prompter`` command line.

::

    prompter --version
    prompter tiny-model PATH [--family qwen2.5] [--force]   build a tiny offline chat model
    prompter serve --model PATH [--port 8000]       OpenAI-compatible server on 127.0.0.1
    prompter chat --model PATH                      chat with a local model in the terminal
    prompter demo                                   the README's end-to-end demo
    prompter playground [--port 8765]               the prompt playground in the browser (no model)
    prompter render "INSTRUCTION" "INPUT" [--format openai] [--model-format qwen2.5] [--system ...]
    prompter view "INSTRUCTION" "INPUT" [--model-format qwen2.5]
    prompter view CONFIG [--limit N]                 an eval config's final prompts, sample by sample
    prompter eval CONFIG [--workers N | --ray [ADDRESS]]   run an eval config into predictions JSONL

``render`` prints what a ``ChatPrompter`` builds (the string for a model, or
an API body as JSON); ``view`` shows both side by side, control tokens and all.
Results go to stdout; progress on steps that take seconds goes to stderr, so
``prompter render ... > body.json`` stays clean. A mistake on the command line
(a bad port or one in use, a missing extra, a folder that is no model) is one line on
stderr and exit status 2; Ctrl-C is one line and exit status 130.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from modules.chat_repl import run_chat
from modules.errors import DOCS_URL, ModuleConfigError
from modules.eval import cli as eval_cli
from modules.local.engines import check_torch_threads
from modules.playground import cli as playground_cli
from modules.server.cli_options import add_engine_options, apply_torch_threads, engine_options, server_options
from prompter import __version__

__all__ = ["main", "progress", "require_extra"]

_EXTRAS = {"local": ("torch", "transformers", "tokenizers"), "server": ("fastapi", "uvicorn")}


class _Defaults(argparse.HelpFormatter):
    """Shows an option's default in its help, unless there is none to show (None, False) or the help
    already says it ("(default: ...)"). ``0`` is a default to show: it is compared by identity, not
    by ``==`` (``0 == False``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        nothing = action.default is None or action.default is False or action.default == argparse.SUPPRESS
        if action.option_strings and not nothing and "(default:" not in text:
            text += " (default: %(default)s)"
        return text


def _parser() -> argparse.ArgumentParser:
    defaults = _Defaults
    parser = argparse.ArgumentParser(
        prog="prompter",
        description="Exact, fast and safe prompts for local chat models and online LLM APIs.",
        epilog="`prompter COMMAND --help` lists a command's options. Start with `prompter demo`.",
    )
    parser.add_argument("--version", action="version", version=f"prompter {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tiny = sub.add_parser(
        "tiny-model", help="build a tiny local chat model (random weights, real tokenizer)", formatter_class=defaults
    )
    tiny.add_argument("path", help="the folder to write the model into")
    tiny.add_argument("--family", default="qwen2.5", help="chat-template family (its tokens and template)")
    tiny.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    tiny.add_argument("--force", action="store_true", help="overwrite a non-empty folder that is not a tiny model")

    serve = sub.add_parser("serve", help="serve a local model over an OpenAI-compatible API", formatter_class=defaults)
    serve.add_argument("--model", required=True, help="a Hugging Face model folder")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    serve.add_argument("--max-new-tokens", type=int, default=256, help="default answer length in tokens")
    add_engine_options(serve)

    chat = sub.add_parser("chat", help="chat with a local model (/help inside)", formatter_class=defaults)
    chat.add_argument("--model", required=True, help="a Hugging Face model folder")
    chat.add_argument("--system", default=None, help="system prompt (default: the model's own)")
    chat.add_argument("--max-new-tokens", type=int, default=128, help="answer length in tokens")

    sub.add_parser("demo", help="build the tiny model, serve it and call it through OnlineChatModule")
    playground_cli.add_parser(sub)

    for name in ("render", "view"):
        helps = {"render": "render a ChatPrompter's prompt", "view": "view a ChatPrompter's prompt or an eval config's"}
        cmd = sub.add_parser(name, help=helps[name], formatter_class=defaults)
        if name == "view":
            cmd.add_argument("instruction", help="the instruction template ({slot}s allowed), or an eval config file")
            cmd.add_argument("input", nargs="?", default=None, help="the input (leave out for an eval config)")
            cmd.add_argument("--limit", type=int, default=None, help="eval config: only the first N samples")
            cmd.add_argument("--compat", default=None, choices=["opencompass", "aisbench"], help="eval config: mode")
        else:
            cmd.add_argument("instruction", help="the instruction template ({slot}s allowed)")
            cmd.add_argument("input", help="the input: a str, or a JSON object of slot values")
        cmd.add_argument("--history", default=None, help='JSON: [["q", "a"], ...] or message dicts')
        cmd.add_argument("--model-format", default=None, help="a registered family, e.g. qwen2.5 (default: generic)")
        cmd.add_argument("--system", default=None, help="system prompt (default: the prompter's own)")
        cmd.add_argument("--tools", default=None, help='JSON list of tools: [{"type": "function", ...}]')
        cmd.add_argument(
            "--extra-keys", default=None, help="comma-separated extra keys read from a JSON input, e.g. context,date"
        )
        if name == "render":
            cmd.add_argument("--format", default=None, help="text, openai, anthropic, gemini, ... (default: text)")
    eval_cli.add_parser(sub, formatter_class=defaults)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit status."""
    try:
        parser = _parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:  # Ctrl-C in the first moments, before a command runs
        print("prompter: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    from modules.errors import ModuleError
    from prompter.errors import PromptError

    try:
        return int(_COMMANDS[args.command](args) or 0)
    except (PromptError, ModuleError) as error:  # a mistake in what was asked: say what, no traceback
        parser.exit(2, f"prompter {args.command}: error: {_one_line(error)}\n")
    except KeyboardInterrupt:  # Ctrl-C while a model loads or a config runs: stopped as asked, no traceback
        parser.exit(130, f"prompter {args.command}: interrupted (Ctrl-C)\n")
    except BrokenPipeError:  # `prompter view ... | head`: the reader has gone, which is no error of ours
        # stdout's last flush at exit would fail again: point it at nothing first
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def progress(message: str) -> None:
    """One line of progress on stderr (stdout carries only results)."""
    print(f"prompter: {message}", file=sys.stderr, flush=True)


def require_extra(extra: str) -> None:
    """Raise a :class:`ModuleConfigError` naming the extra to install when one of its packages is missing."""
    missing = [name for name in _EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        hint = f" (install torch first: {DOCS_URL}/install.md)" if extra == "local" else ""
        raise ModuleConfigError(
            f"this command needs the {extra!r} extra ({', '.join(missing)} not installed): "
            f"pip install 'prompter-kit[{extra}]'{hint}"
        )


def _tiny_model(args: argparse.Namespace) -> int:
    require_extra("local")
    from modules.local.tiny_model import build_tiny_model, check_target, family_spec

    family = family_spec(args.family).family  # a mistake stays one line, refused before any progress; any case
    if not -(2**63) <= args.seed < 2**64:  # torch.manual_seed's range; past it a bare ValueError, after the mkdir
        raise ModuleConfigError(
            f"--seed: expected an int from -2**63 to 2**64 - 1 (torch's seed range), got {args.seed}"
        )
    check_target(Path(args.path), args.force)
    try:  # a path no folder can be made at (under a file, a missing mount) is said before any progress line
        Path(args.path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModuleConfigError(
            f"cannot create the model folder {args.path!r} ({exc.strerror or exc}): give a new or empty folder "
            "in a place you can write to"
        ) from None
    t0 = time.perf_counter()
    progress(f"building a tiny {family} model in {args.path} (random weights; a few seconds) ...")
    _quiet()
    path = build_tiny_model(args.path, family=family, seed=args.seed, force=args.force)
    progress(f"built in {time.perf_counter() - t0:.1f}s")
    print(f"built a tiny {family} model in {path}")
    return 0


def load_model(path: str, max_new_tokens: int, **options: Any) -> Any:
    """A started TrainableModule, with progress on stderr (importing torch and loading take seconds)."""
    if max_new_tokens < 1:
        # refused here, before the load: a server started with it answers every request that leaves out
        # max_tokens with a 400 blaming the client for an option it never sent
        raise ModuleConfigError(f"--max-new-tokens: expected an int >= 1, got {max_new_tokens}")
    require_extra("local")
    folder = Path(path)
    from modules.local.trainable import missing_folder

    missing = missing_folder(path)
    if missing is not None:  # a path with no folder there: said before any progress line, as one line
        raise missing
    if folder.is_dir() and not (folder / "config.json").is_file():
        # said before any progress line, so the mistake stays the one line on stderr
        raise ModuleConfigError(f"{path!r} is not a model folder transformers can load: it has no config.json")
    t0 = time.perf_counter()
    progress(f"loading {path} (importing torch and transformers) ...")
    from modules.local.trainable import TrainableModule

    _quiet()
    module = TrainableModule(path, max_new_tokens=max_new_tokens, **options).start()
    progress(f"model loaded in {time.perf_counter() - t0:.1f}s")
    return module


def _serve(args: argparse.Namespace) -> int:
    playground_cli.check_address(args.host, args.port)  # a port in use is said now, not after the model loads
    require_extra("server")
    require_extra("local")  # before the thread set-up below, which may import torch
    check_torch_threads(getattr(args, "torch_threads", None), "--torch-threads")  # said by its flag's name
    options = engine_options(args)
    if args.engine == "transformers" and not options.get("engine_process"):
        # the model runs in this process: leave a core to the HTTP event loop (see modules.server.cli_options);
        # an engine process takes --torch-threads itself, and is spawned before this process imports torch
        apply_torch_threads(args)
    module = load_model(args.model, args.max_new_tokens, **options)
    try:
        t0 = time.perf_counter()
        progress(f"starting the server on {args.host}:{args.port} ...")
        module.start(serve=True, port=args.port, host=args.host, **server_options(args))
        progress(f"server up in {time.perf_counter() - t0:.1f}s")
        # This process is ours and what it loaded lives until it exits: keep those objects out of the
        # collector's full passes (each walked torch and transformers: 236 ms once, the p95 tail).
        gc.freeze()
        print(f"serving {module.name!r} at {module.url}  (Ctrl-C to stop)", flush=True)
        # Short naps, not one long sleep: Python runs signal handlers only in the main thread, between
        # bytecodes, and the kernel may hand SIGTERM to any thread; a long sleep would defer the handler.
        while True:
            time.sleep(0.25)
    except KeyboardInterrupt:
        pass
    finally:
        module.stop()
    return 0


def _chat(args: argparse.Namespace) -> int:
    from prompter import ChatPrompter

    prompter = ChatPrompter(system=args.system) if args.system else ChatPrompter()
    module = load_model(args.model, args.max_new_tokens)
    try:
        return run_chat(module.prompt(prompter))
    finally:
        module.stop()


def _demo(args: argparse.Namespace) -> int:
    require_extra("local")
    require_extra("server")
    from modules.demo import main as demo_main

    return demo_main()


def _json_arg(option: str, text: str | None, remedy: str = "") -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:  # a mistake on the command line, said as the others are (exit 2)
        raise ModuleConfigError(f"invalid JSON in {option}: {exc}{remedy}") from None


# INPUT is read as JSON when it starts with "{": a question that starts with "{" is said this way
_TEXT_INPUT = '; to send text that starts with "{", give it as a JSON object: {"input": "your text"}'


def _prompt_args(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from prompter import ChatPrompter

    value: Any = _json_arg("INPUT", args.input, _TEXT_INPUT) if args.input.lstrip().startswith("{") else args.input
    history = _json_arg("--history", args.history)
    tools = _json_arg("--tools", args.tools)
    extra_keys = [key.strip() for key in args.extra_keys.split(",") if key.strip()] if args.extra_keys else None
    options: dict[str, Any] = {"extra_keys": extra_keys, "tools": tools}
    if args.system is not None:
        options["system"] = args.system
    return ChatPrompter(args.instruction, **options), value, history


def _render(args: argparse.Namespace) -> int:
    prompter, value, history = _prompt_args(args)
    out = prompter.generate_prompt(value, history=history, format=args.format, model_format=args.model_format)
    _print(out if isinstance(out, str) else _json_text(out))
    return 0


_PROMPT_ONLY = ("history", "model_format", "system", "tools", "extra_keys")
_CONFIG_ONLY = ("limit", "compat")


def _view(args: argparse.Namespace) -> int:
    if args.input is None:  # `prompter view CONFIG`: an evaluation config's final prompts
        config = Path(args.instruction)
        if config.suffix not in (".py", ".json") or not config.is_file():
            raise ModuleConfigError(
                f"view: {args.instruction!r} is no evaluation config file (.py or .json); to view a "
                "ChatPrompter's prompt give the INSTRUCTION and the INPUT"
            )
        _refuse_options(args, _PROMPT_ONLY, "view INSTRUCTION INPUT", "view CONFIG")
        return eval_cli.run_view(config, args.limit, args.compat)
    _refuse_options(args, _CONFIG_ONLY, "view CONFIG", "view INSTRUCTION INPUT")
    prompter, value, history = _prompt_args(args)
    text = prompter.generate_prompt(value, history=history, model_format=args.model_format)
    body = prompter.generate_prompt(value, history=history, format="openai", model_format=args.model_format)
    _print(f"== the string a local model reads ==\n{text}\n== the OpenAI body ==\n{_json_text(body)}")
    return 0


def _refuse_options(args: argparse.Namespace, names: tuple[str, ...], reader: str, used: str) -> None:
    """A ``ModuleConfigError`` for options given that the form of ``view`` in use would silently ignore."""
    given = [f"--{name.replace('_', '-')}" for name in names if getattr(args, name) is not None]
    if given:
        raise ModuleConfigError(
            f"{', '.join(given)}: only `prompter {reader}` reads {'it' if len(given) == 1 else 'them'}, "
            f"not `prompter {used}`; leave {'it' if len(given) == 1 else 'them'} out"
        )


def _json_text(body: Any) -> str:
    """``body`` as indented JSON, its characters as they are where stdout can write them all; else (a lone
    surrogate from a ``"\\ud800"`` escape, a terminal that is not UTF-8) with ``\\u`` escapes: the same JSON."""
    text = json.dumps(body, indent=2, ensure_ascii=False)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return json.dumps(body, indent=2)
    return text


def _print(text: str) -> None:
    """Print a result whole, or say in one line which character stdout cannot write (no traceback, and no
    half-printed result: the text is encoded before anything is written)."""
    try:
        print(text)
    except UnicodeEncodeError as exc:
        char = exc.object[exc.start] if isinstance(exc.object, str) else "?"
        if "\ud800" <= char <= "\udfff":
            raise ModuleConfigError(
                f"character {exc.start} of the output is a lone surrogate (U+{ord(char):04X}), not Unicode text: "
                "remove it from the input"
            ) from None
        raise ModuleConfigError(
            f"stdout's encoding ({exc.encoding}) cannot write character {exc.start} of the output ({char!r}): "
            "set PYTHONIOENCODING=utf-8, or use a UTF-8 terminal"
        ) from None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _quiet() -> None:
    try:
        from transformers.utils import logging

        logging.disable_progress_bar()
        logging.set_verbosity_error()
    except ImportError:  # pragma: no cover - require_extra names the extra first
        pass


_COMMANDS = {
    "tiny-model": _tiny_model,
    "serve": _serve,
    "chat": _chat,
    "demo": _demo,
    "render": _render,
    "view": _view,
    "playground": playground_cli.run,
    "eval": eval_cli.run,
}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``prompter`` command line.

::

    prompter tiny-model PATH [--family qwen2.5] [--force]   build a tiny offline chat model
    prompter serve --model PATH [--port 8000]       OpenAI-compatible server on 127.0.0.1
    prompter chat --model PATH                      chat with a local model in the terminal
    prompter demo                                   the README's end-to-end demo
    prompter render "INSTRUCTION" "INPUT" [--format openai] [--model-format qwen2.5]
    prompter view "INSTRUCTION" "INPUT" [--model-format qwen2.5]

``render`` prints what a ``ChatPrompter`` builds (the string for a model, or
an API body as JSON); ``view`` shows both side by side, control tokens and all.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="prompter", description="Exact, fast and safe prompts.")
    sub = parser.add_subparsers(dest="command", required=True)

    tiny = sub.add_parser("tiny-model", help="build a tiny local chat model (random weights, real tokenizer)")
    tiny.add_argument("path")
    tiny.add_argument("--family", default="qwen2.5", help="chat-template family (default qwen2.5)")
    tiny.add_argument("--seed", type=int, default=0)
    tiny.add_argument("--force", action="store_true", help="overwrite a non-empty folder that is not a tiny model")

    serve = sub.add_parser("serve", help="serve a local model over an OpenAI-compatible API")
    serve.add_argument("--model", required=True, help="a Hugging Face model folder")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--max-new-tokens", type=int, default=256)

    chat = sub.add_parser("chat", help="chat with a local model")
    chat.add_argument("--model", required=True)
    chat.add_argument("--system", default=None)
    chat.add_argument("--max-new-tokens", type=int, default=128)

    sub.add_parser("demo", help="build the tiny model, serve it and call it through OnlineChatModule")

    for name in ("render", "view"):
        cmd = sub.add_parser(name, help=f"{name} a ChatPrompter's prompt")
        cmd.add_argument("instruction", help="the instruction template ({slot}s allowed)")
        cmd.add_argument("input", help="the input: a str, or a JSON object of slot values")
        cmd.add_argument("--history", default=None, help='JSON: [["q", "a"], ...] or message dicts')
        cmd.add_argument("--model-format", default=None, help="a registered family, e.g. qwen2.5")
        if name == "render":
            cmd.add_argument("--format", default=None, help="text (default), openai, anthropic, gemini, ...")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    from modules.errors import ModuleError
    from prompter.errors import PromptError

    try:
        return int(_COMMANDS[args.command](args) or 0)
    except (PromptError, ModuleError) as error:  # a mistake in what was asked: say what, no traceback
        parser.exit(2, f"prompter {args.command}: error: {error}\n")


def _tiny_model(args: argparse.Namespace) -> int:
    from modules.local.tiny_model import build_tiny_model

    _quiet()
    path = build_tiny_model(args.path, family=args.family, seed=args.seed, force=args.force)
    print(f"built a tiny {args.family} model in {path}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from modules.local.trainable import TrainableModule

    _quiet()
    module = TrainableModule(args.model, max_new_tokens=args.max_new_tokens)
    module.start(serve=True, port=args.port, host=args.host)
    print(f"serving {module.name!r} at {module.url}  (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        module.stop()
    return 0


def _chat(args: argparse.Namespace) -> int:
    from modules.local.trainable import TrainableModule
    from prompter import ChatPrompter

    _quiet()
    prompter = ChatPrompter(system=args.system) if args.system else ChatPrompter()
    module = TrainableModule(args.model, max_new_tokens=args.max_new_tokens).prompt(prompter).start()
    history: list[list[str]] = []
    try:
        while True:
            try:
                question = input("you> ")
            except EOFError:
                break
            if not question.strip():
                continue
            print("model> ", end="", flush=True)
            with module.stream(question, history=history) as stream:
                for piece in stream:
                    print(piece, end="", flush=True)
            print()
            history.append([question, stream.text])
    finally:
        module.stop()
    return 0


def _demo(args: argparse.Namespace) -> int:
    from modules.demo import main as demo_main

    return demo_main()


def _prompt_args(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from prompter import ChatPrompter

    try:
        value: Any = json.loads(args.input) if args.input.lstrip().startswith("{") else args.input
        history = json.loads(args.history) if args.history else None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"prompter: invalid JSON: {exc}") from None
    return ChatPrompter(args.instruction), value, history


def _render(args: argparse.Namespace) -> int:
    prompter, value, history = _prompt_args(args)
    out = prompter.generate_prompt(value, history=history, format=args.format, model_format=args.model_format)
    print(out if isinstance(out, str) else json.dumps(out, indent=2, ensure_ascii=False))
    return 0


def _view(args: argparse.Namespace) -> int:
    prompter, value, history = _prompt_args(args)
    text = prompter.generate_prompt(value, history=history, model_format=args.model_format)
    body = prompter.generate_prompt(value, history=history, format="openai", model_format=args.model_format)
    print("== the string a local model reads ==")
    print(text)
    print("== the OpenAI body ==")
    print(json.dumps(body, indent=2, ensure_ascii=False))
    return 0


def _quiet() -> None:
    try:
        from transformers.utils import logging

        logging.disable_progress_bar()
        logging.set_verbosity_error()
    except ImportError:  # pragma: no cover - the error surfaces where transformers is needed
        pass


_COMMANDS = {
    "tiny-model": _tiny_model,
    "serve": _serve,
    "chat": _chat,
    "demo": _demo,
    "render": _render,
    "view": _view,
}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

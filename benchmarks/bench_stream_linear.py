"""A long streamed answer costs time linear in its length: every source's stream state, timed.

    python benchmarks/bench_stream_linear.py          # 10,000 and 40,000 pieces of 100 characters

Each stream state (every dialect), the OpenAI tool-call argument deltas, Anthropic's thinking
deltas and ``ChatStream`` fold N pieces; the CPU time is printed against decoding the same
events' JSON alone (the floor), for N and 4N pieces. Linear code stays at a few times the floor
at both sizes; text rebuilt per piece (``state.text += piece`` on an attribute, which the
interpreter cannot append in place) grows with N: 120,000 events of 100 characters once took
145 s through ``m.stream(...)``, against 2 s for the same bytes parsed linearly.
``tests/online/test_stream_text_not_rebuilt_per_piece.py`` checks the same property by
counting copied characters, with no clock.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from modules.base import ChatStream, StreamDelta
from modules.online.anthropic import ANTHROPIC
from modules.online.gemini import GEMINI
from modules.online.ollama import OLLAMA
from modules.online.ollama_generate import OLLAMA_GENERATE
from modules.online.sse import ChatStreamState, ServerSentEvent

N = 40_000
PIECE = "x" * 100


def _openai(i: int) -> ServerSentEvent:
    return ServerSentEvent(json.dumps({"choices": [{"index": 0, "delta": {"content": PIECE}}]}))


def _openai_arguments(i: int) -> ServerSentEvent:
    call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": PIECE}} if i == 0 else {"index": 0, "function": {"arguments": PIECE}}
    return ServerSentEvent(json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}))


def _anthropic(i: int) -> ServerSentEvent:
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": PIECE}}
    return ServerSentEvent(json.dumps(delta), event="content_block_delta")


def _anthropic_thinking(i: int) -> ServerSentEvent:
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": PIECE}}
    return ServerSentEvent(json.dumps(delta), event="content_block_delta")


def _gemini(i: int) -> ServerSentEvent:
    return ServerSentEvent(json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": PIECE}]}}]}))


def _ollama(i: int) -> ServerSentEvent:
    return ServerSentEvent(json.dumps({"model": "m", "message": {"role": "assistant", "content": PIECE}, "done": False}))


def _generate(i: int) -> ServerSentEvent:
    return ServerSentEvent(json.dumps({"model": "m", "response": PIECE, "done": False}))


def _anthropic_state(block: dict) -> Callable[[], object]:
    def make() -> object:
        state = ANTHROPIC.stream_state(lambda v: v)
        state.on_event(ServerSentEvent(json.dumps({"type": "content_block_start", "index": 0, "content_block": block})))
        return state

    return make


CASES = {
    "openai text": (lambda: ChatStreamState(), _openai, lambda s: s.text),
    "openai tool-call arguments": (lambda: ChatStreamState(), _openai_arguments, lambda s: s.tool_calls()[0]["function"]["arguments"]),
    "anthropic text": (_anthropic_state({"type": "text", "text": ""}), _anthropic, lambda s: s.text),
    "anthropic thinking": (_anthropic_state({"type": "thinking", "thinking": "", "signature": ""}), _anthropic_thinking, lambda s: s.thinking_blocks[0]["thinking"]),
    "gemini text": (lambda: GEMINI.stream_state(lambda v: v), _gemini, lambda s: s.text),
    "ollama text": (lambda: OLLAMA.stream_state(lambda v: v), _ollama, lambda s: s.text),
    "ollama generate text": (lambda: OLLAMA_GENERATE.stream_state(lambda v: v), _generate, lambda s: s.text),
}  # fmt: skip


def _cpu(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return max(best, 1e-3)


def _ratio(case: str, n: int) -> float:
    make, event, result = CASES[case]
    events = [event(i) for i in range(n)]

    def bare() -> None:
        for e in events:
            json.loads(e.data)

    def fold() -> None:
        state = make()
        for e in events:
            state.on_event(e)
        assert len(result(state)) == n * len(PIECE)

    return _cpu(fold) / _cpu(bare)


def _chat_stream_ratio(n: int) -> float:
    deltas = [StreamDelta(text=PIECE) for _ in range(n)]

    def bare() -> None:
        for d in deltas:
            if d.text:
                len(d.text)

    def collect() -> None:
        stream = ChatStream(iter(deltas))
        for _ in stream:
            pass
        assert len(stream.text) == n * len(PIECE)

    return _cpu(collect) / _cpu(bare)


def main() -> None:
    small, large = N // 4, N
    print(f"{'stream state':<30} {f'{small} pieces':>14} {f'{large} pieces':>14}   (CPU time / decoding alone)")
    for case in sorted(CASES):
        print(f"{case:<30} {_ratio(case, small):13.1f}x {_ratio(case, large):13.1f}x")
    print(f"{'ChatStream':<30} {_chat_stream_ratio(small):13.1f}x {_chat_stream_ratio(large):13.1f}x")


if __name__ == "__main__":
    main()

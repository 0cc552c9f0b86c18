"""Server-sent-events decoding speed, as a ratio to a floor (``bytes.split`` plus UTF-8 decoding).

Two inputs, each fed to :class:`modules.online.sse.SSEDecoder` in 64 KiB chunks (what the
client reads at a time):

- ``long_line``: one ``data:`` line of ``--mb`` megabytes (a hostile or broken server);
- ``events``: the same number of bytes as ordinary small chat-completion events.

The floor does the least any decoder must: decode the bytes and split them into lines.
The report is seconds and the ratio decoder / floor; a linear decoder keeps the ratio
flat as ``--mb`` grows (main before the fix: a 64 MB line took 22.7 s).

    python benchmarks/bench_sse.py            # 64 MB
    python benchmarks/bench_sse.py --mb 4     # quicker
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHUNK = 65536


def chunks(blob: bytes) -> list[bytes]:
    return [blob[i : i + CHUNK] for i in range(0, len(blob), CHUNK)]


def inputs(mb: float) -> dict[str, bytes]:
    size = int(mb * 1_000_000)
    event = b'data: {"choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}\n\n'
    return {
        "long_line": b"data: " + b"x" * size + b"\n\n",
        "events": event * (size // len(event)),
    }


def best_of(repeat: int, fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run(mb: float, repeat: int) -> dict[str, dict[str, float]]:
    from modules.online.sse import SSEDecoder

    report = {}
    for name, blob in inputs(mb).items():
        pieces = chunks(blob)

        def decoder(pieces: list[bytes] = pieces) -> None:
            d = SSEDecoder()
            for piece in pieces:
                d.feed(piece)

        def floor(pieces: list[bytes] = pieces) -> None:
            b"".join(pieces).decode("utf-8").split("\n")

        t_dec, t_floor = best_of(repeat, decoder), best_of(repeat, floor)
        report[name] = {"decoder_s": round(t_dec, 4), "floor_s": round(t_floor, 4), "ratio": round(t_dec / t_floor, 1)}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=64.0, help="input size in megabytes (default 64)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    report = run(args.mb, args.repeat)
    if args.json:
        print(json.dumps({"mb": args.mb, **report}))
        return
    for name, row in report.items():
        print(
            f"{name:10s} {args.mb:g} MB: decoder {row['decoder_s']:.3f} s, floor {row['floor_s']:.3f} s, "
            f"ratio {row['ratio']}x"
        )


if __name__ == "__main__":
    main()

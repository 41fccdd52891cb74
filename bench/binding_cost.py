"""What the binding checks cost: Execute → the write at the lab, in this checkout and in a
baseline checkout (e.g. the commit before the checks), measured side by side in one run.

Run from this checkout: ``.venv/bin/python bench/binding_cost.py --baseline DIR [--rounds R]
[--runs N]``. DIR is another checkout with its own ``.venv`` (``git worktree add DIR <commit>``
then ``DIR/scripts/setup``). Each round runs `bench/execute_overhead.py --json` (this file's
sibling, so both sides measure the same way) once in each checkout, alternating which goes
first, so a noisy machine hits both alike. It prints the medians per side, the difference, and
as its last line one JSON object ``{"baseline_ms", "checked_ms", "added_ms", "ratio"}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
MEASURE = HERE / "bench" / "execute_overhead.py"


def measure(checkout: Path, runs: int) -> list[float]:
    """One ``execute_overhead.py --json`` in `checkout` (its venv, its code); the plain samples (s)."""
    python = checkout / ".venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), str(MEASURE), "--runs", str(runs), "--json", "--read-latency-ms", "0"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {done.stderr[-2000:]}")
    return list(json.loads(done.stdout.strip().splitlines()[-1])["plain"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    sides: dict[str, list[float]] = {"baseline": [], "checked": []}
    for round_ in range(args.rounds):
        order = [("baseline", args.baseline), ("checked", HERE)]
        for name, checkout in order if round_ % 2 == 0 else reversed(order):
            sides[name] += measure(checkout, args.runs)
            print(f"round {round_ + 1}: {name} done", file=sys.stderr)
    base = statistics.median(sides["baseline"]) * 1000
    checked = statistics.median(sides["checked"]) * 1000
    print(f"Execute -> write at the lab, median of {len(sides['checked'])} runs each, no injected latency")
    print(f"  baseline ({args.baseline})  {base:7.1f} ms")
    print(f"  with the binding checks          {checked:7.1f} ms")
    print(f"  added                            {checked - base:+7.1f} ms ({checked / base:.2f}x)")
    print(
        json.dumps(
            {
                "baseline_ms": round(base, 1),
                "checked_ms": round(checked, 1),
                "added_ms": round(checked - base, 1),
                "ratio": round(checked / base, 3),
            }
        )
    )


if __name__ == "__main__":
    main()

"""One table of where people wait (issue 14): every measure beside a reference measured in the
same run, and as the last line one JSON object of the headline numbers.

Run from a checkout: ``.venv/bin/python bench/compass.py [--quick]`` (not niced: it is a
benchmark). ``--quick`` takes fewer samples (about a minute and a half; every measure is still printed,
and the JSON line); the full run takes more. The checkout's bytecode is compiled first, as an
install leaves it. The machine is noisy, so each
measure is printed with its reference from this same run and the ratio of the two.

Measures (ours / reference):

- **Execute -> write**: a real executor process, the campus lab in this process; from sending
  Execute to the write's time in the lab's log. Reference: the same lab calls on that path
  (device list, then the tool list, recorder status and events together, then the write) made
  directly over an open MCP session. ``execute_overhead_ms`` is the difference (what the executor adds)
  with no injected latency; ``execute_ratio_50ms`` the ratio with 50 ms on every lab call.
  Beside them, opening an MCP session with the sandbox sign-in (every Execute opens one):
  the first call of a fresh session; reference: the same call again on it.
- **Click -> write**: Approve pressed in Chromium (Debian's, `tests.e2e.browser`) on the real
  page (approval_web and the executor as processes), from the click landing in the page to the
  write in the lab's log, 50 ms on every lab call; reference as above
  (``click_to_write_ratio_50ms``). Below it the same clicks timed from Playwright's
  ``page.click`` call (its scrolling and stability waits included).
- **The card**: ``GET /`` on the real page with one proposal pending (every fact read afresh
  through the executor's Inspect), 50 ms on every lab call; reference: the lab's own time for
  the reads a card needs (device list, then the tool list, recorder status and events
  together) over an open MCP session (``card_ratio_50ms``).
- **Snapshot, 2,000 devices**: `EpiphanReadClient.snapshot` of a generated fleet; reference:
  the raw MCP reads it makes (same calls, same parallelism), with no parsing or redaction.
- **Heartbeat, 2,000 devices**: one beat of the watch beside the raw MCP reads it makes, in
  time (``beat_ratio_2000``) and in memory growth (``beat_growth_ratio_2000``), by
  `bench/watch_beat.py`'s machinery (the lab and each measure in processes of their own).
- **Audit rows/s, 3 writers**: three processes appending audit rows at once, each row in its
  own ``BEGIN IMMEDIATE``; reference: one writer alone. Any "database is locked" is counted.
- **fleetwatch up**: the demo (lab, scripted model, three services) under supervisord, from
  the command to the approval page answering; reference: the executor alone started by hand
  until its socket answers (one cold service start).
- **CLI**: ``fleetwatch status`` and ``fleetwatch pending list`` against that running demo;
  reference: ``python -c pass`` (the interpreter's own start).
- **Idle RSS** of each service under ``up``; reference: an idle bare interpreter. Below the
  table, where each service's import memory goes (tracemalloc, top packages).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
"""The checkout: `bench` (the sections) and `tests` (the harnesses) are imported from it."""


async def main(quick: bool) -> None:
    from bench import (
        compass_beat,
        compass_card,
        compass_click,
        compass_execute,
        compass_snapshot,
        compass_stack,
        compass_store,
    )
    from bench.compass_common import LATENCY_S, table

    started = time.perf_counter()
    # As an install leaves it (pip compiles what it installs): this machine sets
    # PYTHONDONTWRITEBYTECODE, so a checkout's changed modules would be compiled again by every
    # process the measures start, which no installed Fleetwatch does.
    compileall.compile_dir(CHECKOUT / "services", quiet=2)
    compileall.compile_dir(CHECKOUT / "shared", quiet=2)
    # and the catalogue's compiled twins, as ./scripts/setup and deploy/install.sh leave them
    from shared.text.catalogue import compile_catalogues

    compile_catalogues()

    def done(section: str) -> None:
        print(f"{section} measured at {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="compass-") as scratch:
        root = Path(scratch)
        stack = await compass_stack.measure(root / "up", quick=quick)
        done("up, CLI, memory")
        rows = list(stack.rows)
        rows += await compass_execute.measure(root / "execute", runs=4 if quick else 20)
        done("Execute")
        click, driven = await compass_click.measure(
            root / "click", runs=2 if quick else 6, latency_s=LATENCY_S
        )
        rows += [click, driven]
        done("click")
        card = await compass_card.measure(root / "card", runs=4 if quick else 12, latency_s=LATENCY_S)
        rows.append(card)
        done("card")
        rows += await compass_snapshot.measure(runs=2 if quick else 8)
        done("snapshot")
        beat, growth = await compass_beat.measure(rounds=2 if quick else 5)
        rows += [beat, growth]
        done("heartbeat")
        store = await compass_store.measure(root / "store", seconds=2.0 if quick else 5.0)
        done("store")
        rows += store.rows
    print(table(rows))
    print()
    print(stack.memory_report)
    print(f"\n{'quick' if quick else 'full'} run: {time.perf_counter() - started:.0f} s")
    by = {row.measure: row for row in rows}
    plain = by["Execute -> write, lab 0 ms"]
    print(
        json.dumps(
            {
                "execute_overhead_ms": round(plain.ours - plain.reference, 1),
                "execute_ratio_50ms": round(by["Execute -> write, lab 50 ms/call"].ratio, 3),
                "up_seconds": round(stack.up_seconds, 2),
                "cli_seconds": round(stack.cli_seconds, 3),
                "rss_mb": {name: round(mb, 1) for name, mb in stack.rss_mb.items()},
                "snapshot_ratio_2000": round(by["snapshot, 2,000 devices"].ratio, 3),
                "audit_rows_per_s_3_writers": round(store.rows_per_s),
                "lock_errors": store.lock_errors,
                "click_to_write_ratio_50ms": round(click.ratio, 3),
                "card_ratio_50ms": round(card.ratio, 3),
                "beat_ratio_2000": round(beat.ratio, 3),
                "beat_growth_ratio_2000": round(growth.ratio, 3),
            }
        )
    )


if __name__ == "__main__":
    sys.path.insert(0, str(CHECKOUT))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples: about a minute and a half")
    asyncio.run(main(parser.parse_args().quick))

"""Reliability in figures (issue 15): the crash matrix, the fault matrix, fuzzing of the three
sockets and the two pages, and a soak, against real processes; tables, then one JSON line.

Run from a checkout, as a module (so ``tests`` is imported from the checkout too)::

    .venv/bin/python -m bench.reliability --soak 60          # the whole run, an hour's soak
    .venv/bin/python -m bench.reliability --soak 5 --frames 3000 --requests 1000   # shorter

Every part uses the harness of ``tests/reliability/`` (the CI runs a slice of each):

- crash matrix (`tests.reliability.crash`): each service (executor, approval_web, assistant)
  SIGKILLed at each step of the main job under supervisord, 27 cells;
- fault matrix (`tests.reliability.faults`): each Epiphan tool the executor and the assistant
  call × each lab fault, with its expected outcome;
- fuzzing (`tests.reliability.fuzz`): ``--frames`` frames split over the three sockets and
  ``--requests`` HTTP requests split over the two pages (default 100,000 and 10,000);
- soak (`tests.reliability.soak`): ``--soak MINUTES`` of the mixed traffic, paced.

The last line printed is one JSON object::

    {"crash_cells": N, "crash_double_writes": 0, "fault_cells": N, "fault_wrong_outcomes": 0,
     "frames": N, "http_requests": N, "crashes": 0, "state_changes": 0, "soak_minutes": M,
     "lock_errors": 0, "lost_audit_rows": 0, "rss_growth_mb": {...}, "fd_growth": {...}}

``crashes`` counts services that died under fuzzing and fuzz cases that broke the rule (no
answer, an undeclared code); ``state_changes`` counts state found changed after the fuzzing;
``crash_double_writes`` counts crash cells with more than one write, and any other broken
promise of a crash cell is printed in its table. The exit status is 0 when every figure that
must be 0 is 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import signal
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from tests.executor.harness import Harness
from tests.reliability.crash import STEPS, CellResult, crash_table, run_cell
from tests.reliability.faults import (
    ASSISTANT_READS,
    CALL_TIMEOUT,
    EXECUTOR_TOOLS,
    KINDS,
    FaultCell,
    assistant_cell,
    executor_cell,
    fault_table,
)
from tests.reliability.fleet import SERVICES, running_fleet
from tests.reliability.fuzz import Tally, capabilities_answer, fuzz_http, fuzz_socket
from tests.reliability.services import running_services
from tests.reliability.soak import SoakReport, soak, soak_table

PAGES = ("approval", "ask")


def say(text: str) -> None:
    print(text, flush=True)


async def crash_matrix(folder: Path) -> list[CellResult]:
    results = []
    async with running_fleet(folder / "crash") as fleet:
        for step in STEPS:
            for service in SERVICES:
                began = time.monotonic()
                result = await run_cell(fleet, service, step)
                say(
                    f"  crash {service:12} {step:12} {result.outcome} ({result.writes}w) {time.monotonic() - began:.1f} s"
                )
                results.append(result)
    return results


async def fault_matrix(folder: Path) -> list[FaultCell]:
    cells = []
    async with running_services(folder / "faults") as services:
        harness = await Harness.start(
            services.lab, folder / "faults-executor", "--call-timeout", str(CALL_TIMEOUT)
        )
        try:
            for tool in EXECUTOR_TOOLS:
                for kind in KINDS:
                    cells.append(await executor_cell(harness, services.lab, tool, kind))
        finally:
            await harness.close()
        for tool in ASSISTANT_READS:
            for kind in KINDS:
                cells.append(await assistant_cell(services.socket("assistant"), services.lab, tool, kind))
    return cells


def _fs_type(path: Path) -> str:
    """The file system `path` lives on (``/proc/mounts``' longest matching mount point)."""
    best, kind = "", "unknown"
    for line in Path("/proc/mounts").read_text().splitlines():
        _, point, fs, *_ = line.split()
        if str(path).startswith(point.rstrip("/") + "/") and len(point) > len(best):
            best, kind = point, fs
    return kind


MAX_PROBLEMS = 20
"""A fuzz job stops after this many broken rules (a dead service would break every one)."""


def fuzz_job(name: str, where: Path | int, count: int) -> Tally:
    """One fuzz job in a process of its own (drawing examples is CPU work; two cores draw twice
    as fast as one): `count` frames to socket `name` at `where`, or requests to the page on port
    `where`. A broken rule is recorded and the job goes on, up to `MAX_PROBLEMS`."""
    tally = Tally()
    target = count
    while tally.sent < target and len(tally.problems) < MAX_PROBLEMS:
        try:
            if isinstance(where, Path):
                fuzz_socket(name, where, target - tally.sent, tally)
            else:
                fuzz_http(where, target - tally.sent, tally)
        except AssertionError as exc:  # the case as drawn, and what it broke
            tally.fail(str(exc)[:500])
            if len(tally.problems) >= MAX_PROBLEMS:
                break
    return tally


async def fuzzing(folder: Path, frames: int, requests: int) -> dict[str, Any]:
    """Fuzz every socket and page, each in a process of its own; counts and every broken rule."""
    out: dict[str, Any] = {"frames": 0, "http_requests": 0, "crashes": 0, "state_changes": 0, "codes": {}}
    async with running_services(folder / "fuzz") as services:
        say(f"  store: {services.stack.settings.db} ({_fs_type(services.stack.settings.db)})")
        before = await services.state()
        per_socket, per_page = -(-frames // len(SERVICES)), -(-requests // len(PAGES))
        jobs: dict[str, tuple[Path | int, int]] = {s: (services.socket(s), per_socket) for s in SERVICES}
        jobs |= {p: (services.page_port(p), per_page) for p in PAGES}
        loop = asyncio.get_running_loop()
        began = time.monotonic()
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
            results = await asyncio.gather(
                *(
                    loop.run_in_executor(pool, fuzz_job, name, where, count)
                    for name, (where, count) in jobs.items()
                )
            )
        seconds = time.monotonic() - began
        tallies = dict(zip(jobs, results, strict=True))
        for name, tally in tallies.items():
            key = "http_requests" if name in PAGES else "frames"
            out[key] += tally.sent
            out["crashes"] += len(tally.problems)
            out["codes"][name] = dict(tally.codes.most_common())
            for problem in tally.problems:
                say(f"  fuzz {name}: {problem}")
        say(
            f"  {out['frames']} frames and {out['http_requests']} requests in {seconds:.0f} s"
            f" ({out['frames'] / seconds:.0f} frames/s, {out['http_requests'] / seconds:.0f} requests/s)"
        )
        out["crashes"] += sum(1 for p in services.processes.values() if p.process.returncode is not None)
        for service in SERVICES:
            if services.processes[service].process.returncode is None and not await asyncio.to_thread(
                capabilities_answer, services.socket(service)
            ):
                out["crashes"] += 1
        after = await services.state()
        out["state_changes"] = sum(1 for key in before if before[key] != after[key])
        if not await services.audit_ok():
            out["state_changes"] += 1
    return out


async def soaking(folder: Path, minutes: float) -> SoakReport:
    async with running_fleet(folder / "soak") as fleet:
        return await soak(fleet, seconds=minutes * 60)


async def main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="fleetwatch-reliability-") as tmp:
        folder = Path(tmp)
        summary: dict[str, Any] = {}
        crashes: list[CellResult] = []
        if not args.skip_crash:
            say("Crash matrix (each service SIGKILLed at each step, restarted by supervisord):")
            crashes = await crash_matrix(folder)
            say(crash_table(crashes))
        summary["crash_cells"] = len(crashes)
        summary["crash_double_writes"] = sum(1 for r in crashes if r.writes > 1)
        broken_cells = sum(1 for r in crashes if not r.ok)
        faults: list[FaultCell] = []
        if not args.skip_faults:
            say("\nFault matrix (each Epiphan call × each lab fault):")
            faults = await fault_matrix(folder)
            say(fault_table(faults))
        summary["fault_cells"] = len(faults)
        summary["fault_wrong_outcomes"] = sum(1 for c in faults if not c.right)
        say(
            f"\nFuzzing: {args.frames} frames over {len(SERVICES)} sockets, {args.requests} requests over 2 pages"
        )
        fuzzed = await fuzzing(folder, args.frames, args.requests)
        for name, codes in fuzzed.pop("codes").items():
            say(f"  {name}: {codes}")
        summary.update(fuzzed)
        say(f"\nSoak: {args.soak} minutes")
        report = await soaking(folder, args.soak) if args.soak > 0 else SoakReport()
        say(soak_table(report))
        say(f"  cycles {report.cycles}, outcomes {dict(report.outcomes.most_common())}")
        say(f"  audit rows {report.audit_rows}, chain ok {report.audit_ok}, restarts {report.restarts}")
        say(f"  watch heartbeats recorded {report.beats}, of which read the fleet {report.beats_read}")
        summary.update(
            soak_minutes=args.soak,
            lock_errors=report.lock_errors,
            lost_audit_rows=report.lost_audit_rows + (0 if report.audit_ok else 1),
            rss_growth_mb=report.rss_growth_mb(),
            fd_growth=report.fd_growth(),
        )
    must_be_zero = (
        "crash_double_writes",
        "fault_wrong_outcomes",
        "crashes",
        "state_changes",
        "lock_errors",
        "lost_audit_rows",
    )
    print(json.dumps(summary), flush=True)
    return 0 if all(summary[k] == 0 for k in must_be_zero) and broken_cells == 0 else 1


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--soak", type=float, default=60.0, metavar="MINUTES", help="soak length (default 60)"
    )
    parser.add_argument("--frames", type=int, default=100_000, help="fuzzed frames over the sockets")
    parser.add_argument("--requests", type=int, default=10_000, help="fuzzed HTTP requests over the pages")
    parser.add_argument("--skip-crash", action="store_true", help="leave out the crash matrix")
    parser.add_argument("--skip-faults", action="store_true", help="leave out the fault matrix")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    """`main`, cancelled on SIGTERM or SIGINT so every process it started is stopped (the
    harness's context managers stop them on the way out)."""
    task = asyncio.ensure_future(main(args))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        print("stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(asyncio.run(run(parse(sys.argv[1:]))))

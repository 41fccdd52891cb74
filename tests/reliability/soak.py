"""The soak: the main job's traffic mixed at a steady rate against one Fleetwatch under
supervisord (`tests.reliability.fleet`), and what it must leave behind.

One cycle, in order: a proposal through approval.sock, the card on the page, Approve (every
second cycle; the write runs in the lab) or Deny, a second proposal left for the queue (it is
approved, denied or expires later: the harness's policy keeps proposals 300 s, the design's
floor), two questions to the assistant (read-only), and the watch's heartbeat
(`services.assistant.watch.heartbeat`): besides the beats the assistant makes on its own timer
(every `tests.reliability.fleet.HEARTBEAT_SECONDS`), a beat asked for over assistant.sock
(``RunDigest``, what ``fleetwatch digest`` sends) and the watch's status (``GetWatchStatus``,
what ``fleetwatch status --check`` asks: alive when a beat read the fleet lately). Targets rotate over the sandbox rooms, and
each cycle starts with an operator lifting the denial pauses (audited), so the mix keeps
proposing; a refusal the limits give (``queue_full``, ``hourly_cap_reached``, ``target_busy``...)
is an outcome, tallied.

Measured: ``store_busy`` answers and "database is locked" lines in the services' logs (lock
errors, the watch store's included); the beats the watch recorded (``beats`` in its own store:
how many, how many read the fleet); lost audit rows (the highest seq seen during the run against the rows present at its
end, gaps, and the chain); RSS (MiB) and open file descriptors of each service at the start,
at the end, and the maximum, sampled every cycle.

Used by ``bench/reliability.py --soak MINUTES`` (paced: one cycle every `CYCLE_SECONDS`) and,
for a few unpaced cycles, by ``tests/reliability/test_soak.py``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientError

from shared.errors import Code
from shared.wire.approval import LiftDenialPauses
from shared.wire.assistant import GetWatchStatus, RunDigest
from shared.wire.client import CallError
from tests.reliability.fleet import SERVICES, Fleet

CYCLE_SECONDS = 20.0
"""One cycle every this many seconds when paced (3 proposals a minute, 1.5 of them counted
against the hourly cap at most)."""
TARGETS = ("29088800001-1", "29088800001-2", "29088800003-1", "29088800004-1")
"""Sandbox channels the proposals rotate over."""
QUESTIONS = ("Which rooms are recording?", "¿Qué salas están grabando?")
LOCKED = "database is locked"


@dataclass
class Usage:
    """One service's samples: (RSS MiB, open fds), the first taken before the soak's first
    cycle (cold), then one after each cycle."""

    samples: list[tuple[float, int]] = field(default_factory=list)

    @property
    def warm(self) -> list[tuple[float, int]]:
        """The samples from the end of the first cycle on: growth is measured from there, since
        the services load what their first operation of each kind needs lazily (issue 14: the
        MCP SDK with the first Epiphan read, the model SDK with the first question), which is
        a one-time step, not growth. With one sample only, that one."""
        return self.samples[1:] if len(self.samples) > 1 else self.samples

    def summary(self) -> dict[str, Any]:
        if not self.samples:
            return {}
        rss = [s[0] for s in self.warm]
        fds = [s[1] for s in self.warm]
        return {
            "rss_mb": {
                "cold": round(self.samples[0][0], 1),
                "start": round(rss[0], 1),
                "end": round(rss[-1], 1),
                "max": round(max(rss), 1),
            },
            "fds": {"start": fds[0], "end": fds[-1], "max": max(fds)},
        }


@dataclass
class SoakReport:
    """What a soak saw."""

    cycles: int = 0
    seconds: float = 0.0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    lock_errors: int = 0
    lost_audit_rows: int = 0
    audit_rows: int = 0
    audit_ok: bool = True
    usage: dict[str, Usage] = field(default_factory=lambda: {s: Usage() for s in SERVICES})
    restarts: int = 0
    restarted: list[str] = field(default_factory=list)
    """The services whose pid changed during the soak."""
    beats: int = 0
    """Beats the watch recorded during the soak (its timer's and those asked for)."""
    beats_read: int = 0
    """Of those, the beats that read the fleet."""

    def rss_growth_mb(self) -> dict[str, float]:
        """RSS at the end minus after the first cycle (`Usage.warm`), MiB."""
        return {s: round(u.warm[-1][0] - u.warm[0][0], 1) for s, u in self.usage.items() if u.samples}

    def fd_growth(self) -> dict[str, int]:
        """Open fds at the end minus after the first cycle."""
        return {s: u.warm[-1][1] - u.warm[0][1] for s, u in self.usage.items() if u.samples}


def _tally(report: SoakReport, what: str, exc: BaseException | None = None) -> None:
    if isinstance(exc, CallError):
        report.outcomes[f"{what}:{exc.code}"] += 1
        if exc.code == Code.STORE_BUSY:
            report.lock_errors += 1
    elif exc is not None:
        report.outcomes[f"{what}:{type(exc).__name__}"] += 1
    else:
        report.outcomes[what] += 1


async def _propose(fleet: Fleet, report: SoakReport, n: int, action: str) -> None:
    target = TARGETS[n % len(TARGETS)]
    try:
        await fleet.propose("batch_recording", {"action": action, "device_ids": [target]})
    except CallError as exc:
        _tally(report, "propose", exc)
        return
    _tally(report, "propose")


async def _decide(fleet: Fleet, report: SoakReport, approve: bool) -> None:
    """The card on screen (if any) is approved (when it can be) or denied, as a person would."""
    try:
        await fleet.wait_page()
        async with fleet.page() as page:
            forms = await page.forms()
            if approve and "/approve" in forms:
                status, _ = await page.approve(forms["/approve"])
                _tally(report, f"approve:{status}")
            elif "/deny" in forms:
                status, _ = await page.deny(forms["/deny"])
                _tally(report, f"deny:{status}")
            else:
                _tally(report, "no_card")
    except (ClientError, OSError, AssertionError) as exc:
        _tally(report, "page", exc)


async def _ask(fleet: Fleet, report: SoakReport, question: str) -> None:
    try:
        answer = await fleet.ask(question)
    except CallError as exc:
        _tally(report, "ask", exc)
        return
    _tally(report, f"ask:{answer.answered_by}")


async def _heartbeats(fleet: Fleet, report: SoakReport) -> None:
    """The watch's heartbeat: one beat now (``RunDigest``, not posted), then its status."""
    assistant = fleet.assistant()
    try:
        digest = await assistant.call(RunDigest(post=False, language="en"), timeout_seconds=60)
    except CallError as exc:
        _tally(report, "beat", exc)
    else:
        _tally(report, "beat:read" if digest.read else f"beat:{digest.code}")
    try:
        status = await assistant.call(GetWatchStatus())
    except CallError as exc:
        _tally(report, "watch_status", exc)
    else:
        _tally(report, "watch_status:alive" if status.alive else "watch_status:not_alive")


async def _lift(fleet: Fleet, report: SoakReport) -> None:
    """An operator lifts the denial pauses (audited), so the mix keeps proposing."""
    try:
        await fleet.approval().call(LiftDenialPauses())
    except CallError as exc:
        _tally(report, "lift", exc)
        return
    _tally(report, "lift")


async def _sample(fleet: Fleet, report: SoakReport) -> None:
    for service in SERVICES:
        usage = await fleet.usage(service)
        if usage is not None:
            report.usage[service].samples.append(usage)


async def cycle(fleet: Fleet, report: SoakReport, n: int) -> None:
    """One cycle of the mix (see the module docstring)."""
    await fleet.lab("POST", "reset")
    await _lift(fleet, report)
    await _propose(fleet, report, n, "start")
    await _decide(fleet, report, approve=n % 2 == 0)
    await _propose(fleet, report, n + 1, "start" if n % 3 else "stop")
    for question in QUESTIONS:
        await _ask(fleet, report, question)
    await _heartbeats(fleet, report)
    await _sample(fleet, report)
    report.cycles += 1


async def soak(fleet: Fleet, *, seconds: float | None = None, cycles: int | None = None) -> SoakReport:
    """Run the mix for `seconds` (paced, one cycle every `CYCLE_SECONDS`) or for `cycles`
    cycles back to back; then count what was lost."""
    report = SoakReport()
    loop = asyncio.get_running_loop()
    started = loop.time()
    pids = await fleet.pids()
    first_beat = await fleet.last_beat()
    await _sample(fleet, report)
    highest = 0
    n = 0
    while (cycles is not None and n < cycles) or (seconds is not None and loop.time() - started < seconds):
        tick = loop.time()
        await cycle(fleet, report, n)
        rows = await fleet.rows("SELECT max(seq) AS seq FROM audit")
        highest = max(highest, rows[0]["seq"] or 0)
        n += 1
        if seconds is not None:
            wait = CYCLE_SECONDS - (loop.time() - tick)
            if wait > 0:
                await asyncio.sleep(min(wait, max(seconds - (loop.time() - started), 0)))  # the soak's pace
    report.seconds = loop.time() - started
    present = await fleet.rows("SELECT seq FROM audit ORDER BY seq")
    seqs = [row["seq"] for row in present]
    report.audit_rows = len(seqs)
    report.lost_audit_rows = max(highest - len(seqs), 0) + sum(
        1 for a, b in itertools.pairwise(seqs) if b != a + 1
    )
    report.audit_ok, _ = await fleet.audit_ok()
    now_pids = await fleet.pids()
    report.restarted = sorted(s for s, p in now_pids.items() if p != pids[s])
    report.restarts = len(report.restarted)
    beats = await fleet.watch_rows(
        "SELECT count(*) AS n, coalesce(sum(ok), 0) AS read FROM beats WHERE seq > ?", (first_beat,)
    )
    report.beats, report.beats_read = beats[0]["n"], beats[0]["read"]
    for service in SERVICES:
        with contextlib.suppress(OSError):
            log = (fleet.settings.state_dir / "logs" / f"{service}.log").read_text(errors="replace")
            report.lock_errors += log.count(LOCKED)
    return report


def soak_table(report: SoakReport) -> str:
    """Per service: RSS before the first operation (cold), then RSS and fds after the first
    cycle (start), at the end and at most."""
    lines = [
        "| service | RSS cold | RSS start | RSS end | RSS max | fds start | fds end | fds max |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for service, usage in report.usage.items():
        s = usage.summary()
        if s:
            r, f = s["rss_mb"], s["fds"]
            lines.append(
                f"| {service} | {r['cold']} MiB | {r['start']} MiB | {r['end']} MiB | {r['max']} MiB | {f['start']} | {f['end']} | {f['max']} |"
            )
    return "\n".join(lines)

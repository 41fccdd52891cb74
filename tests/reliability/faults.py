"""The fault matrix: every Epiphan tool the executor and the assistant call, under every fault
the lab injects, and the outcome each cell must have.

Faults (`services.lab.faults`): ``latency`` beyond the caller's timeout, ``http_500``, the
in-band ``auth_401``, ``drop_response`` (the call runs, its answer never comes), ``schema_drift``
(Epiphan's own drift: nulls, lower-case keys), ``malformed_json`` (cut-off text) and
``close_connection``. Each is injected once (``count: 1``) for the caller's team only, except
the two a read on a warm session outlives (`READ_AGAIN`): a read that fails with
``epiphan_unreachable`` on a connection that answered before is sent once more on a new session
(issue 14, `shared.epiphan.signed_session`; reads only, never the write), so those are injected
twice (``count: 2``) and the repeat meets the fault too: the cell shows the outcome when Epiphan
keeps failing, whether the session was warm or not.

The executor (a real process, `tests.executor.harness.Harness`, its call timeout
`CALL_TIMEOUT` seconds) runs one approved ``batch_recording start``; its tools are the reads
before the write (`EXECUTOR_READS`), the write, and the verification read
(``get_system_status_for_devices``, made only after the write). Expected:

- a read before the write: ``refused`` with ``device_list_unreadable`` or
  ``state_read_failed``, no write (fail closed); ``schema_drift`` of the device list and the
  recorder status is read around by the tolerant parser (``ok``, one write), of the events it
  is not (``refused``: the event window cannot be checked, so nothing runs);
- the write: ``unknown`` (the outcome cannot be known; never retried), at most one write; a
  drifted write result too (it is not a map of target to error string);
- the verification read: ``ok`` (the write ran once) with a verification that is not
  ``verified`` (nothing observed), ``schema_drift`` too: since issue 16's shapes the drifted
  system status is not read around, so nothing is observed (never a wrong "verified").

The assistant (a real process with its read sign-in, no model key: the keyword answer reads the
fleet with `EpiphanReadClient.snapshot`) answers ``Ask``; its tools are `ASSISTANT_READS`.
The question is "What needs attention?", whose answer draws on every part of the read.
Expected: an answer always comes (never a crash, never a socket error), with no proposal and no
write; a failed device list (or the in-band 401 on any read: the sign-in itself) gives the
answer a clear read code (``epiphan_timeout``, ``epiphan_unreachable``, ``epiphan_bad_result``,
``epiphan_auth``); a failed per-device read (recorder, system, events: issue 16's partial
reads) leaves the answer standing and names that part in it ("events: could not be read: …");
``schema_drift`` of the device list and the recorder status is read around (no code, nothing
unread); of the system status and the events it is not, and that part is named unread.

Shared by ``tests/reliability/test_fault_matrix.py`` (a slice) and ``bench/reliability.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from services.lab.faults import Fault, FaultKind
from services.lab.server import LabHandle
from shared.errors import Code
from shared.wire.assistant import Ask, AssistantClient
from shared.wire.client import CallError
from tests.executor.harness import IDLE, Harness

KINDS = (
    "latency",
    "http_500",
    "auth_401",
    "drop_response",
    "schema_drift",
    "malformed_json",
    "close_connection",
)
CALL_TIMEOUT = 3.0
"""The executor's ``--call-timeout`` in the matrix (seconds)."""
ASSISTANT_READ_TIMEOUT = 30.0
"""The assistant's bound on one read (`services.assistant.reader.SessionReader`'s default)."""
LATE = {"executor": CALL_TIMEOUT + 2.0, "assistant": ASSISTANT_READ_TIMEOUT + 2.0}
"""The latency fault of each side: beyond its timeout."""
EXECUTOR_READS = (
    "get_devices_in_my_team",
    "get_recorder_status_for_devices",
    "get_current_or_next_cms_events_for_devices",
)
DRIFT_READ_AROUND = frozenset({"get_devices_in_my_team", "get_recorder_status_for_devices"})
"""Reads whose drifted result the tolerant parser reads around."""
READ_AGAIN = frozenset({"http_500", "close_connection"})
"""Faults after which a read on a warm session is sent once more (injected twice, module doc)."""
WRITE = "batch_recording"
VERIFY_READ = "get_system_status_for_devices"
EXECUTOR_TOOLS = (*EXECUTOR_READS, WRITE, VERIFY_READ)
ASSISTANT_READS = (
    "get_devices_in_my_team",
    "get_recorder_status_for_devices",
    "get_system_status_for_devices",
    "get_current_or_next_cms_events_for_devices",
)
START = {"action": "start", "device_ids": [f"{IDLE}-2"]}
READ_REFUSALS = frozenset({Code.DEVICE_LIST_UNREADABLE, Code.STATE_READ_FAILED})
UNREAD_WORDS = {
    "get_recorder_status_for_devices": "recording status: could not be read",
    "get_system_status_for_devices": "CPU, temperature and uptime: could not be read",
    "get_current_or_next_cms_events_for_devices": "events: could not be read",
}
"""How the English answer names each per-device read's part when it could not be read
(`shared.text.wording.unread_text`)."""
QUESTION = "What needs attention?"
READ_CODES = frozenset(
    {Code.EPIPHAN_TIMEOUT, Code.EPIPHAN_UNREACHABLE, Code.EPIPHAN_BAD_RESULT, Code.EPIPHAN_AUTH}
)


@dataclass(frozen=True)
class FaultCell:
    """One cell: who calls, the tool, the fault, what was observed, and whether it is right."""

    side: str
    tool: str
    kind: str
    observed: str
    writes: int
    right: bool


def expected_executor(
    tool: str, kind: str, outcome: str, code: str | None, verification: str | None, writes: int
) -> bool:
    """Whether an executor cell's outcome is the one the module docstring promises."""
    drift = kind == "schema_drift"
    if tool in EXECUTOR_READS:
        if drift and tool in DRIFT_READ_AROUND:
            return outcome == "ok" and writes == 1
        return outcome == "refused" and code in READ_REFUSALS and writes == 0
    if tool == WRITE:
        return outcome == "unknown" and writes <= 1
    return outcome == "ok" and verification != "verified" and writes == 1


def expectation(side: str, tool: str, kind: str) -> str:
    """What `expected_executor` (or, for the assistant, `assistant_cell`) holds a cell to, in
    the table's words."""
    if side == "assistant":
        if kind == "schema_drift" and tool in DRIFT_READ_AROUND:
            return "answer"
        if tool in UNREAD_WORDS and kind != "auth_401":
            return "answer/unread part"
        return "answer/read code"
    if tool in EXECUTOR_READS:
        if kind == "schema_drift" and tool in DRIFT_READ_AROUND:
            return "ok (1w)"
        return "refused (0w)"
    if tool == WRITE:
        return "unknown (≤1w)"
    return "ok/not verified (1w)"


async def executor_cell(harness: Harness, lab: LabHandle, tool: str, kind: str) -> FaultCell:
    """Propose and approve a start of recording, inject the fault, Execute; the cell."""
    lab.reset()
    _, approval_id = await harness.proposed_and_approved("batch_recording", START)
    lab.lab.set_fault(_fault(tool, kind, "executor"))
    report = await harness.execute(approval_id)
    lab.clear_faults()
    lab.lab.release()
    writes = len(lab.writes())
    verification = report.verification
    code = str(report.refusal_code) if report.refusal_code else None
    observed = "/".join(v for v in (report.outcome, code, verification) if v)
    right = expected_executor(tool, kind, report.outcome, code, verification, writes)
    return FaultCell("executor", tool, kind, observed, writes, right)


async def assistant_cell(socket_path: Path, lab: LabHandle, tool: str, kind: str) -> FaultCell:
    """Ask the assistant (keyword answer) with the fault on one of its reads; the cell."""
    lab.reset()
    before = len(lab.writes())
    lab.lab.set_fault(_fault(tool, kind, "assistant"))
    try:
        answer = await AssistantClient(socket_path).call(
            Ask(question=QUESTION, language="en"), timeout_seconds=60
        )
    except CallError as exc:
        lab.clear_faults()
        return FaultCell("assistant", tool, kind, f"socket error {exc.code}", 0, False)
    lab.clear_faults()
    lab.lab.release()
    code = answer.code
    unread = tool in UNREAD_WORDS and UNREAD_WORDS[tool] in answer.text
    observed = f"answer/{code}" if code else "answer/unread part" if unread else "answer"
    expected = expectation("assistant", tool, kind)
    if expected == "answer":
        right = code is None and not unread
    elif expected == "answer/unread part":
        right = code is None and unread
    else:
        right = code in READ_CODES
    right = right and not answer.proposals and len(lab.writes()) == before
    return FaultCell("assistant", tool, kind, observed, 0, right)


def _fault(tool: str, kind: str, side: str) -> Fault:
    """The cell's fault: once (twice for `READ_AGAIN`), for `side`'s team's calls of `tool`
    (latency: `LATE`)."""
    seconds = LATE[side] if kind == "latency" else None
    team = "sandbox" if side == "executor" else "normal"
    count = 2 if kind in READ_AGAIN else 1
    return Fault(tool=tool, kind=FaultKind(kind), seconds=seconds, count=count, team=team)


def fault_table(cells: list[FaultCell]) -> str:
    """Side and tool × fault -> expected → observed outcome (writes); a wrong cell is marked."""
    rows: dict[tuple[str, str], dict[str, FaultCell]] = {}
    for cell in cells:
        rows.setdefault((cell.side, cell.tool), {})[cell.kind] = cell
    lines = ["| side | tool | " + " | ".join(KINDS) + " |", "|---|---|" + "---|" * len(KINDS)]
    for (side, tool), by_kind in rows.items():
        parts = []
        for kind in KINDS:
            c = by_kind.get(kind)
            if c is None:
                parts.append("—")
            else:
                text = c.observed + (f" ({c.writes}w)" if side == "executor" else "")
                text = f"{expectation(side, tool, kind)} → {text}"
                parts.append(text if c.right else f"**WRONG: {text}**")
        lines.append(f"| {side} | {tool} | " + " | ".join(parts) + " |")
    return "\n".join(lines)

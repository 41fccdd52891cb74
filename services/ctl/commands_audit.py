"""``fleetwatch audit export`` and ``fleetwatch audit decisions``: the audit outside the store,
and how each person decided (issue 33; the issue's name ``audit approvers`` would break the hard
rule that no command names approval, held by ``tests/test_hard_rules.py``). Both read through approval.sock (`AuditExport`,
`GetApproverReport`); neither writes anything.

- ``audit export [--since T] [--format jsonl]``: every row (at or after `T`, UTC), oldest
  first, one JSON object a line: its content, its chain position (``seq``, ``prev_hash``,
  ``hash``) and its MAC (``writer``, ``mac``), as `shared.store.audit_export` describes; a line
  is ASCII (every other character a ``\\uXXXX`` escape), so it is inert on a terminal.
- ``audit decisions [--days N]``: per person, proposals acted on, approved, denied, the median
  seconds from a card shown to its Approve, and approvals sooner than the policy's
  ``min_read_seconds``, flagged "decided faster than the card can be read".
"""

from __future__ import annotations

import argparse
import datetime as dt
import json

import msgspec

from services.ctl import CtlError, admin_words
from services.ctl.output import print_json
from shared.config import load_settings
from shared.errors import Code
from shared.text.catalogue import C_, N_, Nn_, Words
from shared.text.display import account_name, visible
from shared.wire.approval import (
    MAX_AUDIT_EXPORT,
    ApprovalClient,
    ApproverLine,
    ApproverReport,
    AuditExport,
    GetApproverReport,
)

TIMEOUT_SECONDS = 30.0
"""Timeout of one page of the export (a page is at most `MAX_AUDIT_EXPORT` rows)."""


def _client() -> ApprovalClient:
    return ApprovalClient(load_settings().approval_socket, timeout_seconds=TIMEOUT_SECONDS)


def since_text(raw: str | None) -> str | None:
    """`raw` (ISO 8601: a date, or a time with a zone; no zone means UTC) as database-clock
    text, ``YYYY-MM-DDTHH:MM:SS.SSSZ``; None for None.

    Raises:
        CtlError: ``invalid_message`` when `raw` is no time."""
    if raw is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as exc:
        raise CtlError(
            Code.INVALID_MESSAGE,
            Words.of(
                N_("--since %(given)s is not a time: write a date or a time, e.g. %(examples)s"),
                given=repr(visible(raw, 60)),
                examples="2026-03-02, 2026-03-02T09:30, 2026-03-02T09:30-05:00",
            ),
        ) from exc
    moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


async def audit_export(args: argparse.Namespace) -> int:
    """``fleetwatch audit export [--since T] [--format jsonl]``: one JSON line per row."""
    client, since, after = _client(), since_text(args.since), 0
    while True:
        page = await client.call(AuditExport(since=since, after_seq=after, limit=MAX_AUDIT_EXPORT))
        for row in page.rows:
            print(json.dumps(msgspec.to_builtins(row), sort_keys=True, ensure_ascii=True))
        if not page.more or not page.rows:
            return 0
        after = page.rows[-1].seq


def render_approvers(view: admin_words.View, report: ApproverReport) -> str:
    """The report as a table, then one flagged line per person with fast approvals."""
    head = view.counted(
        report.days,
        Nn_(
            "How each person decided in the last day (fast: under %(s)s s after the card was shown):",
            "How each person decided in the last %(n)s days (fast: under %(s)s s after the card was shown):",
        ),
        s=report.threshold_seconds,
    )
    if not report.people:
        return "\n".join([head, view.text(N_("  Nobody decided anything."))])
    header = [
        view.text(N_("person")),
        view.text(N_("seen")),
        view.say(Words.in_context("decisions column", C_("decisions column", "approved"))),
        view.say(Words.in_context("decisions column", C_("decisions column", "denied"))),
        view.text(N_("median s")),
        view.text(N_("fast")),
    ]
    rows = [_cells(line) for line in report.people]
    lines = [head, *admin_words.table(header, rows)]
    for line in report.people:
        if line.fast:
            lines.append(
                view.counted(
                    line.fast,
                    Nn_(
                        "%(who)s: %(n)s approval decided faster than the card can be read",
                        "%(who)s: %(n)s approvals decided faster than the card can be read",
                    ),
                    who=account_name(line.uid),
                )
            )
    return "\n".join(lines)


def _cells(line: ApproverLine) -> list[str]:
    median = "—" if line.median_seconds is None else str(line.median_seconds)
    name = f"{account_name(line.uid)} ({line.uid})"
    return [name, str(line.seen), str(line.approved), str(line.denied), median, str(line.fast)]


async def audit_decisions(args: argparse.Namespace) -> int:
    """``fleetwatch audit decisions [--days N]``."""
    report = await _client().call(GetApproverReport(days=args.days))
    if args.json:
        print_json(report)
    else:
        print(render_approvers(admin_words.view_of(args), report))
    return 0

"""Helpers for the approval page's tests: a store with proposals, an executor client that
records what reaches it (passed to the app through its constructor), the page under aiohttp's
test server, and a reader of the page's forms."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import hashlib
import html.parser
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiosqlite
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer

from services.approval_web.page.app import build_page_app, store_connections
from services.approval_web.page.i18n import make_say, make_when
from services.approval_web.page.words import Words
from services.executor.executions import claim_approval, finish_execution, record_verification
from shared.binding import TargetState, fingerprint_hash, make_bound_record, record_bytes
from shared.errors import Code
from shared.policy.loader import Policy, ToolPolicy, load_policies
from shared.store import approvals
from shared.store.db import migrate, open_store
from shared.text.catalogue import load_translations
from shared.web.page_secret import PageSecret
from shared.wire.client import CallError
from shared.wire.executor import Execute, ExecutionReport, Inspect, Inspection, TargetFacts
from tests.audit_keys import fresh_keyring

REPO = Path(__file__).resolve().parents[3]
DEVICE = "29088800001"
OTHER_DEVICE = "29088800003"


@functools.cache
def policies() -> tuple[Policy, ToolPolicy]:
    """The repository's policy files (loaded once per test run: they are read-only data)."""
    return load_policies(REPO / "policy")


KEYRING = fresh_keyring()
"""The audit keys of these tests' stores: the page (approval_web) and the stand-in executor."""


@contextlib.asynccontextmanager
async def connection(db: Path) -> AsyncIterator[aiosqlite.Connection]:
    conn = await open_store(db, keyring=KEYRING)
    try:
        yield conn
    finally:
        await conn.close()


async def new_store(db: Path) -> Path:
    async with connection(db) as conn:
        await migrate(conn)
    return db


async def add_proposal(
    db: Path,
    *,
    tool: str = "batch_recording",
    arguments: dict[str, Any] | None = None,
    reason: str = "The class starts in 10 minutes and the room is not recording.",
    ttl_seconds: int = 900,
    names: dict[str, str] | None = None,
) -> str:
    """Store a pending proposal (sealed with a throwaway key: the page never checks seals);
    its ID."""
    arguments = arguments if arguments is not None else {"action": "start", "device_ids": [f"{DEVICE}-1"]}
    _, tool_policy = policies()
    targets = tool_policy.propose[tool].target_device_ids(arguments)
    fingerprint = {t: TargetState(online=True, recording=False, next_event_start=None) for t in targets}
    record = make_bound_record(
        proposal_id=approvals.new_proposal_id(),
        tool=tool,
        arguments=arguments,
        targets=targets,
        fingerprint=fingerprint,
        schema_version=tool_policy.propose[tool].schema_version,
        reason=reason,
    )
    async with connection(db) as conn:
        row = await approvals.insert_proposal(
            conn,
            record=record,
            record_bytes=record_bytes(record),
            seal="0" * 64,
            fingerprint_hash=fingerprint_hash(fingerprint),
            proposed_by="assistant",
            turn_id=None,
            ttl_seconds=ttl_seconds,
            target_names=names,
        )
    return row.id


def facts_for(proposal_id: str, targets: tuple[str, ...], **overrides: Any) -> Inspection:
    """An Inspection where every target is found, online, not recording, channel 1 "Program"."""
    facts = tuple(
        TargetFacts(
            device_id=t,
            found=True,
            name=f"Room {t[-3:]}",
            model="Pearl-2",
            online=True,
            recording=False,
            channel_id="1",
            channel_name="Program",
        )
        for t in targets
    )
    bound = {f"device {t} name": f"Room {t[-3:]}" for t in targets}
    bound.update({f"device {t} channel 1 name": "Program" for t in targets})
    fields: dict[str, Any] = {
        "proposal_id": proposal_id,
        "complete": True,
        "targets": facts,
        "read_at": "2026-03-02T10:00:00.000Z",
        "facts": bound,
        "facts_hash": hashlib.sha256(json.dumps(bound, sort_keys=True).encode()).hexdigest(),
    }
    fields.update(overrides)
    return Inspection(**fields)


class RecordingExecutor:
    """A `PageExecutor` that records every call. Inspect answers `inspection_for(proposal)`
    (default: everything found); Execute answers `report` (default: ok, verified), recording it
    in the store as the executor does (the claim, the outcome, the verification: what the
    outcome page reads), or raises `execute_error` (after claiming when `claim_first`)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.inspected: list[str] = []
        self.executed: list[str] = []
        """The approval IDs Execute was sent for, in order."""
        self.sent: list[Execute] = []
        """Every Execute message, as the page sent it."""
        self.inspection_for: Callable[[str, tuple[str, ...]], Inspection] = facts_for
        self.inspect_error: Exception | None = None
        """Raised by Inspect before anything else (a `CallError`, or anything else for an
        unexpected failure)."""
        self.report: Callable[[str], ExecutionReport] | None = None
        self.execute_error: CallError | None = None
        self.claim_first = False
        """Claim the approval in the store (as the executor does) before answering."""

    async def call(self, request: Inspect | Execute) -> Inspection | ExecutionReport:
        if isinstance(request, Inspect):
            return await self.inspect(request.proposal_id)
        return await self.execute(request)

    async def inspect(self, proposal_id: str) -> Inspection:
        self.inspected.append(proposal_id)
        if self.inspect_error is not None:
            raise self.inspect_error
        async with connection(self.db) as conn:
            row = await approvals.get_proposal(conn, proposal_id)
        assert row is not None
        return self.inspection_for(proposal_id, row.targets)

    async def _claim(self, request: Execute) -> str:
        async with connection(self.db) as conn:
            row = await approvals.get_proposal(conn, request.proposal_id)
            rule = policies()[1].propose.get(row.tool) if row is not None else None
            claim = await claim_approval(
                conn,
                request.approval_id,
                proposal_id=request.proposal_id,
                card_hash=request.card_hash,
                facts_hash=request.facts_hash,
                approvers=rule.approvers if rule is not None else 1,
            )
        assert claim.ok and claim.execution_id, claim
        return claim.execution_id

    async def execute(self, request: Execute) -> ExecutionReport:
        approval_id = request.approval_id
        self.executed.append(approval_id)
        self.sent.append(request)
        if self.execute_error is not None:
            if self.claim_first:
                await self._claim(request)
            raise self.execute_error
        report = (
            self.report(approval_id)
            if self.report is not None
            else ExecutionReport(
                execution_id="x-1",
                proposal_id=request.proposal_id,
                outcome="ok",
                verification="verified",
                verified_at="2026-03-02T10:00:05.000Z",
            )
        )
        execution_id = await self._claim(request)
        async with connection(self.db) as conn:
            await finish_execution(
                conn,
                execution_id,
                outcome=report.outcome,
                refusal_code=report.refusal_code,
                message=report.message,
                detail=report.detail,
            )
            if report.verification is not None:
                await record_verification(
                    conn,
                    execution_id,
                    verification=report.verification,
                    detail="",
                    observed_at=report.verified_at,
                )
        return report


class Clock:
    """Monotonic seconds a test moves by hand (the slow-down's clock)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Forms(html.parser.HTMLParser):
    """The forms of a page: action -> {field: value}; and the element order of buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: dict[str, dict[str, str]] = {}
        self.buttons: list[dict[str, str | None]] = []
        self._action: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self._action = a.get("action") or ""
            self.forms[self._action] = {}
        elif tag == "input" and self._action is not None and a.get("name"):
            self.forms[self._action][a["name"] or ""] = a.get("value") or ""
        elif tag == "button":
            self.buttons.append({**a, "form": self._action})

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._action = None


def forms_of(text: str) -> Forms:
    parser = Forms()
    parser.feed(text)
    return parser


@dataclasses.dataclass
class Harness:
    """The page under aiohttp's test server, its store, executor client, secret and clock."""

    client: TestClient
    db: Path
    executor: RecordingExecutor
    secret: PageSecret
    clock: Clock

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.client.port}"

    def same_origin(self) -> dict[str, str]:
        return {"Origin": self.origin, "Sec-Fetch-Site": "same-origin"}

    async def post(
        self, path: str, data: dict[str, str], headers: dict[str, str] | None = None
    ) -> ClientResponse:
        return await self.client.post(
            path, data=data, headers=self.same_origin() if headers is None else headers, allow_redirects=False
        )

    async def decide(
        self, path: str, data: dict[str, str], headers: dict[str, str] | None = None
    ) -> tuple[str, str]:
        """POST an Approve or a confirm, follow its 303 to the outcome page (a GET); that
        page's URL path and text."""
        response = await self.post(path, data, headers)
        assert response.status == 303, await response.text()
        location = response.headers["Location"]
        assert location.startswith("/outcome/"), location
        async with self.client.get(location) as outcome:
            text = await outcome.text()
            assert outcome.status == 200, text
        return location, text

    async def login(self) -> None:
        response = await self.post("/login", {"secret": self.secret.shown()})
        assert response.status == 303, await response.text()

    async def card(self, **headers: str) -> tuple[str, Forms]:
        return await self.card_at("/", **headers)

    async def card_at(self, path: str, **headers: str) -> tuple[str, Forms]:
        response = await self.client.get(path, headers=headers)
        text = await response.text()
        assert response.status == 200, text
        return text, forms_of(text)

    async def audit_rows(self) -> list[dict[str, Any]]:
        async with connection(self.db) as conn, conn.execute("SELECT * FROM audit ORDER BY seq") as cursor:
            return [{**dict(r), "detail": json.loads(r["detail_json"])} for r in await cursor.fetchall()]

    async def approvals_rows(self) -> list[dict[str, Any]]:
        async with (
            connection(self.db) as conn,
            conn.execute("SELECT * FROM approvals ORDER BY rowid") as cursor,
        ):
            return [dict(r) for r in await cursor.fetchall()]

    async def status_of(self, proposal_id: str) -> str:
        async with connection(self.db) as conn:
            row = await approvals.get_proposal(conn, proposal_id)
        assert row is not None
        return row.status


@contextlib.asynccontextmanager
async def page(
    tmp_path: Path,
    *,
    policy: Policy | None = None,
    operator_uids: frozenset[int] | None = None,
    home: str | None = None,
) -> AsyncIterator[Harness]:
    """The page app on a test server (127.0.0.1, a free port) over a fresh store (`home`: the
    ``FLEETWATCH_HOME`` its printed commands keep)."""
    db = await new_store(tmp_path / "state" / "fleetwatch.db")
    default_policy, tool_policy = policies()
    executor = RecordingExecutor(db)
    secret, clock = PageSecret.new(), Clock()
    app = build_page_app(
        policy=policy or default_policy,
        tool_policy=tool_policy,
        connect=store_connections(db, KEYRING),
        executor=executor,
        secret=secret,
        clock=clock,
        operator_uids=operator_uids,
        home=home,
    )
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield Harness(client=client, db=db, executor=executor, secret=secret, clock=clock)


def executor_error(code: Code, message: str, operation: str = "execute") -> CallError:
    """What `ExecutorClient` raises when executor.sock answers `code` (or is down)."""
    return CallError(code, message, service="the executor", operation=operation)


def executor_down() -> CallError:
    return executor_error(Code.SERVICE_UNAVAILABLE, "not running", "inspect")


NOW = datetime.datetime(2026, 3, 2, 10, 0, tzinfo=datetime.UTC)
"""The time the pure tests read words at (the facts above were read then)."""


def text_of(words: Words, language: str = "en", *, zone: datetime.tzinfo = datetime.UTC, now=NOW) -> str:
    """`words` as the page shows them in `language`, as plain text (times in `zone` from `now`)."""
    when = make_when(zone=zone, now=now, language=language)  # type: ignore[arg-type]
    return make_say(translations()[language], when)(words).unescape()


@functools.cache
def translations() -> dict[str, Any]:
    return load_translations()

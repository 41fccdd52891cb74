"""`Assistant.ask`: one operator question in, one `Answer` out.

The model path (`loop.ModelLoop` over `pipeline.ToolRunner`) when there is a model; the keyword
path (`keyword.keyword_answer`) when there is none, or when the model fails (API error,
refusal, timeout): that answer is read-only and has no path to a proposal. A question that
ends early (model failure, spent budget, any crash) expires every proposal it made
(``ExpireTurn`` with its turn ID).

Whatever the model says, the answer carries one code-built line per proposal made in this
question (or already waiting, when the intake answered with an identical one), in words, with
its **recorded** state read back through ``GetProposalState``; and one code-built line per
change the model asked for that was not queued, saying why in words, with its code beside it
for scripts (``Answer.refusals``). Which path answered is ``model``, ``demo_model`` (the
configured endpoint is the lab's Messages-API stand-in; the loop does not know or care) or
``keyword``.

The keyword path's reads are counted in the audit like the model's tool calls (the snapshot
tells each read tool it calls).

The audit keeps counts only (question length, tool counts, codes, proposal IDs, model calls,
tokens, outcome) and who asked (`AskedBy`: a uid, an ask page session): never the question, a
prompt, a result or a name. The assistant holds no
store: its ``ask`` row is a `RecordAsk` sent through the sink (approval.sock), whose fields
have no room for text. Logs name codes and counts, never fleet text.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any, Final, Literal, Protocol

from services.assistant import ModelUnavailable
from services.assistant.budget import Budget, Spent
from services.assistant.keyword import keyword_answer
from services.assistant.language import choose, note, note_lines, proposal_line
from services.assistant.loop import LoopResult, ModelLoop, TextSink
from services.assistant.pipeline import NotesSource, Reader, ToolRunner, TurnRecord
from services.assistant.prompt import first_message
from services.assistant.proposals import ProposalSink, write_record
from services.assistant.tools import offered_names, tool_definitions, tools_for
from shared.epiphan.attention import thresholds_from_policy
from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.model_data import WithheldValues
from shared.errors import Code, FleetwatchError
from shared.policy.loader import Policy, ToolPolicy
from shared.text.catalogue import N_, translate
from shared.text.change_words import change_in, not_proposed, why
from shared.text.languages import language_of
from shared.text.questions import Action, Topic, topic_of, understand
from shared.wire.approval import (
    MAX_RECORDED_PROPOSALS,
    AskTokens,
    ExpireTurn,
    GetProposalState,
    ProposalState,
    RecordAsk,
)
from shared.wire.assistant import Answer, AnsweredBy, ModelInfo, ProposalLine, RefusalLine

log = logging.getLogger(__name__)


ASKED_CHANGES: Final[dict[Action, tuple[str, str | None]]] = {
    Action.START_RECORDING: ("batch_recording", "start"),
    Action.STOP_RECORDING: ("batch_recording", "stop"),
    Action.START_STREAM: ("start_stream_endpoint", None),
    Action.STOP_STREAM: ("stop_stream_endpoint", None),
    Action.REBOOT: ("batch_reboot", None),
    Action.FIRMWARE_UPDATE: ("batch_firmware_update", None),
}
"""The change a question asks for (`shared.text.questions.Action`) as the tool and ``action``
that would propose it (for its code-built "Not proposed" line)."""


class SnapshotReader(Reader, Protocol):
    """The guarded read client: tool calls and a whole-team snapshot."""

    async def snapshot(self, *, on_read: Callable[[str], None] | None = None) -> FleetSnapshot: ...


@dataclass(frozen=True)
class AskedBy:
    """Who asked, for the ``ask`` audit row: the asking process's uid (assistant.sock: from
    ``SO_PEERCRED``; the ask page: the uid the kernel lists for the browser's connection; None:
    unknown) and the ask page session the question came through (None: not the page); from
    Slack, the asker's member ID and whether it was a direct message or a channel."""

    uid: int | None = None
    page_session: str | None = None
    slack_user: str | None = None
    slack_channel: Literal["dm", "channel"] | None = None


@dataclass(frozen=True)
class _Ending:
    text: str
    answered_by: AnsweredBy
    outcome: str
    code: str | None = None
    expire: bool = False


class Assistant:
    """Answers questions. Every collaborator comes through the constructor.

    Args:
        reader: the guarded read client holding the read sign-in.
        sink: where proposals and the ``ask`` record go (`proposals.approval_sink` in
            production).
        policy, tool_policy: the loaded policies.
        model_client: an ``anthropic.AsyncAnthropic``, or None (no key: keyword answers only).
        model: the model name.
        fence_configured: ``FLEETWATCH_WRITE_DEVICE_IDS`` or ``FLEETWATCH_WRITE_TEAM_ID`` is set;
            without it ``propose_change`` is not offered.
        read_only: a surface that never proposes (the asks from Slack): ``propose_change`` is
            never offered, and a change asked for gets no "Not proposed" line (the surface says
            itself that it never proposes, and why).
        allowlist: ``FLEETWATCH_WRITE_DEVICE_IDS``.
        model_info: which model answers (`ModelInfo`): its ``kind`` names the answers
            (``model`` or ``demo_model``); None: ``model`` when there is a client, else keyword.
        notes: operators' room notes (the watch store), or None: offered to the model as
            ``get_room_notes`` and carried under every answer that names a room with one
            (`Answer.notes`, code-built lines), as data.
        now: UTC time (the lab's clock in tests); clock: monotonic seconds; zone: the operator's
            time zone (`FLEETWATCH_TIMEZONE`) for the times a keyword answer names.
    """

    def __init__(
        self,
        *,
        reader: SnapshotReader,
        sink: ProposalSink,
        policy: Policy,
        tool_policy: ToolPolicy,
        model_client: Any | None,
        model: str = "claude-sonnet-4-6",
        fence_configured: bool,
        allowlist: tuple[str, ...] = (),
        model_info: ModelInfo | None = None,
        budget: Budget | None = None,
        call_timeout_seconds: float = 60.0,
        notes: NotesSource | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        clock: Callable[[], float] = time.monotonic,
        zone: tzinfo = UTC,
        read_only: bool = False,
    ) -> None:
        self._reader = reader
        self._sink = sink
        self._policy = policy
        self._tool_policy = tool_policy
        self._allowlist = allowlist
        self._now = now
        self._clock = clock
        self._zone = zone
        self._withheld = WithheldValues()
        self._notes = notes
        # why nothing may be proposed here (the policy, then the fence), or None
        if not policy.may_propose:
            self._proposals_off: Code | None = Code.OBSERVE_MODE
        elif not fence_configured:
            self._proposals_off = Code.FENCE_NOT_CONFIGURED
        else:
            self._proposals_off = None
        self._read_only = read_only
        self.may_propose = self._proposals_off is None and not read_only
        self.model_info = model_info or (
            ModelInfo(kind="keyword") if model_client is None else ModelInfo(kind="model", model=model)
        )
        self._model_kind: AnsweredBy = "keyword" if model_client is None else self.model_info.kind
        self.tools = tool_definitions(
            tool_policy.model_read_tools,
            may_propose=self.may_propose,
            room_notes=notes is not None,
            proposable=sorted(tool_policy.propose),
        )
        self.budget = budget or Budget()
        self._loop = (
            None
            if model_client is None
            else ModelLoop(
                model_client,
                model=model,
                tools=self.tools,
                budget=self.budget,
                call_timeout_seconds=call_timeout_seconds,
                clock=clock,
            )
        )

    async def ask(
        self,
        question: str,
        language: str | None = None,
        *,
        on_text: TextSink | None = None,
        asked_by: AskedBy | None = None,
    ) -> Answer:
        """Answer one question (see the module docstring), recording `asked_by` in its audit
        row. Never raises for a model or read failure: those become the keyword answer or a
        plain sentence with a code."""
        lang = choose(question, language)
        turn_id = f"t_{uuid.uuid4().hex}"
        spent = Spent(started=self._clock())
        tools = self.tools
        if self._policy.model_tools == "per_question":
            tools = tools_for(self.tools, topic_of(question))
        runner = ToolRunner(
            reader=self._reader,
            sink=self._sink,
            tool_policy=self._tool_policy,
            offered=offered_names(tools),
            turn_id=turn_id,
            budget=self.budget,
            spent=spent,
            allowlist=self._allowlist,
            clock=self._clock,
            withheld=self._withheld,
            notes=self._notes,
        )
        try:
            ending = await self._answer(question, lang, runner, spent, on_text, tools)
        except BaseException:
            if runner.record.proposals:
                await self._expire_after_failure(turn_id)
            raise
        expired = await self._expire(turn_id) if ending.expire and runner.record.proposals else 0
        text = ending.text + (f"\n\n{note('turn_expired', lang)}" if expired else "")
        record = runner.record
        if record.kb_uncovered:
            text += f"\n\n{note('kb_not_covered', lang)}"
        lines = [await self._line(pid, tool, lang, record.names) for pid, tool in record.proposals]
        lines += [await self._line(pid, "", lang, record.names, existing=True) for pid in record.existing]
        await self._audit(question, lang, ending, record, spent, expired, turn_id, asked_by or AskedBy())
        refusals = self._refusals(record, lang) or self._not_asked(question, record, ending.answered_by, lang)
        said = "\n".join([text, *(line.text for line in lines), *(line.text for line in refusals)])
        return Answer(
            text=text,
            language=lang,
            answered_by=ending.answered_by,
            proposals=tuple(lines),
            code=ending.code,
            refusals=refusals,
            notes=note_lines(await self._room_notes(), said, lang),
        )

    async def _room_notes(self) -> list[tuple[str, str, str]]:
        """The operators' notes ``(device ID, room name, note)``; none when the watch keeps none
        or they cannot be read (logged: the answer goes on without them)."""
        if self._notes is None:
            return []
        try:
            return [(n.device_id, n.room, n.text) for n in await self._notes.notes()]
        except FleetwatchError as exc:
            log.warning("room notes could not be read (%s); answering without them", exc.code)
            return []

    async def fleet(self) -> FleetSnapshot:
        """The fleet read now through the read sign-in (for an operator's ``fleetwatch fleet``;
        nothing reaches the model).

        Raises:
            FleetwatchError: the read's code (``no_sign_in``, ``epiphan_auth``...).
        """
        return await self._reader.snapshot()

    def _refusals(self, record: TurnRecord, lang: str) -> tuple[RefusalLine, ...]:
        """One line per change asked for and not queued, in words (no code in the text)."""
        limits = self._policy.limits
        out = []
        for refused in record.refused.values():
            names = [record.names.get(t, "") for t in refused.targets]
            what = change_in(refused.tool, refused.action, names, refused.targets, lang)
            text = not_proposed(
                what, refused.code, lang, max_pending=limits.max_pending, per_hour=limits.per_hour
            )
            out.append(RefusalLine(code=refused.code, text=text))
        return tuple(out)

    def _not_asked(
        self, question: str, record: TurnRecord, answered_by: str, lang: str
    ) -> tuple[RefusalLine, ...]:
        """A change asked for that this turn neither proposed, found waiting nor refused: the
        same code-built "Not proposed" line a refused proposal gets, on every path (the model
        that chose not to ask, the keyword answer that cannot), with the most telling code:
        ``observe_mode`` (the policy only watches) or ``fence_not_configured`` (no fence set:
        nothing may be proposed here), ``model_unavailable`` (the keyword
        answer proposes nothing), ``room_not_found``, ``target_not_in_sandbox`` (the room is
        not among those ``list_writable_devices`` listed, or off ``FLEETWATCH_WRITE_DEVICE_IDS``),
        else ``change_not_asked``. Nothing for any other question."""
        if record.proposals or record.existing or record.refused or self._read_only:
            return ()
        intent = understand(question, record.names.values())
        if intent.topic is not Topic.CHANGE:
            return ()
        ids = [i for i, n in record.names.items() if intent.room is not None and n == intent.room]
        writable = record.writable if record.writable is not None else (frozenset(self._allowlist) or None)
        if self._proposals_off is not None:
            code = self._proposals_off
        elif answered_by == "keyword":
            code = Code.MODEL_UNAVAILABLE
        elif intent.unknown_room:
            code = Code.ROOM_NOT_FOUND
        elif ids and writable is not None and writable.isdisjoint(ids):
            code = Code.TARGET_NOT_IN_SANDBOX
        else:
            code = Code.CHANGE_NOT_ASKED
        tool, action = ASKED_CHANGES.get(intent.action or Action.UNCLEAR, ("", None))
        names = [intent.room] if intent.room is not None else []
        what = change_in(tool, action, names, ids[:1] if ids else [], lang)
        return (RefusalLine(code=code, text=not_proposed(what, code, lang)),)

    async def _answer(
        self,
        question: str,
        lang: str,
        runner: ToolRunner,
        spent: Spent,
        on_text: TextSink | None,
        tools: tuple[dict[str, Any], ...],
    ) -> _Ending:
        if self._loop is None:
            text, code = await self._keyword(question, lang, runner.record)
            return _Ending(text, "keyword", "keyword_no_model", code)
        first = first_message(question, lang, self._now(), self._policy.lead_minutes, self._withheld)
        try:
            result = await self._loop.run(runner, first, spent, on_text=on_text, tools=tools)
        except ModelUnavailable as exc:
            log.warning("model unavailable (%s); giving the keyword answer", exc.reason)
            text, code = await self._keyword(question, lang, runner.record)
            full = f"{note('model_unavailable', lang)}\n\n{text}"
            return _Ending(
                full, "keyword", f"fallback_{exc.reason}", code or Code.MODEL_UNAVAILABLE, expire=True
            )
        return await self._ending(question, lang, result, runner.record)

    async def _ending(self, question: str, lang: str, result: LoopResult, record: TurnRecord) -> _Ending:
        kind = self._model_kind
        if result.stop == "budget_exceeded":
            log.warning("question over its %s budget", result.limit)
            learned = result.text
            if not learned:
                learned, _ = await self._keyword(question, lang, record)
            text = f"{note('budget_exceeded', lang, limit=str(result.limit))}\n\n{learned}"
            return _Ending(text, kind, "budget_exceeded", Code.BUDGET_EXCEEDED, expire=True)
        if result.stop == "bad_tool_call":
            text = f"{result.text}\n\n{note('bad_tool_call', lang)}".strip()
            return _Ending(text, kind, f"bad_tool_call_{result.limit}", Code.MODEL_BAD_TOOL_CALL, expire=True)
        if result.stop == "ask_operator" and record.question is not None:
            asked = note("asks_operator", lang, question=record.question)
            return _Ending(f"{result.text}\n\n{asked}".strip(), kind, "ask_operator")
        return _Ending(result.text or note("no_answer", lang), kind, result.stop)

    async def _keyword(self, question: str, lang: str, record: TurnRecord) -> tuple[str, str | None]:
        def counted(tool: str) -> None:
            record.tools[tool] += 1

        try:
            snapshot = await self._reader.snapshot(on_read=counted)
        except FleetwatchError as exc:
            log.warning("keyword answer could not read the fleet (%s)", exc.code)
            words = translate(language_of(lang), N_("I could not read the fleet"))
            return f"{words}: {why(exc.code, lang)}.", str(exc.code)
        # The answer's times are in the operator's zone (`FLEETWATCH_TIMEZONE`): "now" carries it.
        # Room notes are not part of its text: every answer carries them apart (`note_lines`).
        now = self._now().astimezone(self._zone)
        record.names.update({d.id: d.name for d in snapshot.devices})  # for its code-built lines
        proposable = sorted(self._tool_policy.propose) if self.may_propose else []
        answer = keyword_answer(
            question, lang, snapshot, now, thresholds_from_policy(self._policy), proposable
        )
        return answer, None

    async def _expire_after_failure(self, turn_id: str) -> None:
        """The turn failed partway (an exception, or its task cancelled): expire its proposals
        anyway, shielded from the cancellation. A failure to do so is logged, with its
        traceback, and never hides the turn's own failure, which the caller re-raises."""
        try:
            await asyncio.shield(self._expire(turn_id))
        except Exception:  # cleanup under a failing turn: logged, the turn's own error goes on
            log.exception("could not expire the proposals of failed turn %s", turn_id)

    async def _expire(self, turn_id: str) -> int:
        try:
            return (await self._sink.call(ExpireTurn(turn_id=turn_id))).count
        except FleetwatchError as exc:
            log.error("could not expire the turn's proposals (%s)", exc.code)
            return 0

    async def _line(
        self, proposal_id: str, tool: str, lang: str, names: dict[str, str], *, existing: bool = False
    ) -> ProposalLine:
        try:
            state: ProposalState | None = await self._sink.call(GetProposalState(proposal_id=proposal_id))
        except FleetwatchError as exc:
            log.warning("the state of %s could not be read for its line (%s)", proposal_id, exc.code)
            state = None
        return proposal_line(proposal_id, state, lang, tool=tool, names=names, existing=existing)

    async def _audit(
        self,
        question: str,
        lang: str,
        ending: _Ending,
        record: TurnRecord,
        spent: Spent,
        expired: int,
        turn_id: str,
        asked_by: AskedBy,
    ) -> None:
        asked = RecordAsk(
            turn_id=turn_id,
            question_chars=len(question),
            language=lang,
            answered_by=ending.answered_by,
            outcome=ending.outcome,
            code=None if ending.code is None else str(ending.code),
            model_calls=spent.model_calls,
            tokens=AskTokens(
                input=spent.input_tokens,
                output=spent.output_tokens,
                cache_creation=spent.cache_creation_tokens,
                cache_read=spent.cache_read_tokens,
            ),
            tools=dict(sorted(record.tools.items())),
            codes={str(code): count for code, count in sorted(record.codes.items())},
            proposal_ids=tuple(pid for pid, _ in record.proposals)[:MAX_RECORDED_PROPOSALS],
            expired=expired,
            elapsed_ms=int((self._clock() - spent.started) * 1000),
            asker_uid=asked_by.uid,
            page_session=asked_by.page_session,
            slack_user=asked_by.slack_user,
            slack_channel=asked_by.slack_channel,
        )
        log.info(
            "answered by %s (%s): %d model calls, %d tool calls, %d proposals",
            ending.answered_by,
            ending.outcome,
            spent.model_calls,
            sum(record.tools.values()),
            len(record.proposals),
        )
        await write_record(self._sink, asked)

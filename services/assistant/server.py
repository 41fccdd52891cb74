"""assistant.sock and the production wiring of `Assistant`.

`build_assistant` puts the production parts together from the settings: the read slot's
guarded client (`shared.epiphan.signed_session.SignedReader`: refreshed before use when the slot
says its token ended, and once after Epiphan refuses it in-band), approval.sock as the proposal sink (and where the audit
rows go: the assistant opens no store), and the model client when a key is set (none: keyword
answers only). `assistant_side` serves assistant.sock for an ``async with`` block; ``__main__``
runs it (and the ask page with ``--page``) beside the watch (`services.assistant.watch`), whose
requests (status, history, digest, notes) it hands to the watch.

assistant.sock audits its refusals like the other sockets, through approval.sock
(`AssistantAudit`, `RecordRefusal`): a peer whose uid and groups are not allowed
(``peer_not_allowed``, operation ``connect``: only operators, by uid or group, may ask), a
request refused before the handler (malformed, over its cap), and a blank question. Each
question's ``ask`` row names the asking process's uid (`AskedBy`). The same `AssistantAudit`
records the ask page's sessions and refusals.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

from services.assistant import AssistantError
from services.assistant.manifest import capabilities
from services.assistant.pipeline import NotesSource
from services.assistant.proposals import ProposalSink, approval_sink, write_record
from services.assistant.service import AskedBy, Assistant
from services.assistant.watch import answers
from services.assistant.watch.heartbeat import Watch
from shared.config import Settings
from shared.epiphan.fleet import FleetSnapshot
from shared.epiphan.signed_session import SignedReader
from shared.errors import Code
from shared.policy.loader import Policy, ToolPolicy
from shared.web.model_host import ANTHROPIC_API, Resolver, require_local, system_resolver
from shared.wire.approval import RecordPageSession, RecordRefusal
from shared.wire.assistant import (
    OPERATIONS,
    WATCH_OPERATIONS,
    Answer,
    Ask,
    DigestReport,
    FleetView,
    GetFleet,
    GetHistory,
    GetModel,
    GetWatchStatus,
    History,
    LiftSilence,
    ListNotes,
    ListSilences,
    ModelInfo,
    NoteOutcome,
    Notes,
    RunDigest,
    SetNote,
    SetSilence,
    SilenceOutcome,
    Silences,
    WatchStatus,
)
from shared.wire.formats import MAX_QUESTION_CHARS
from shared.wire.protocol import Capabilities, GetCapabilities, Message, message_tag
from shared.wire.server import Handler, OperationHandler, PeerCred, RefusedRequest, dispatch, serve_unix

if TYPE_CHECKING:
    import anthropic

log = logging.getLogger(__name__)

MODEL_RETRIES: Final = 1
"""Retries the SDK may make of one model call (a 529 or a dropped connection)."""


class Asker(Protocol):
    """What the socket and the ask page need: `Assistant.ask`, `Assistant.fleet` and which model
    answers."""

    model_info: ModelInfo

    async def ask(
        self, question: str, language: str | None = None, *, asked_by: AskedBy | None = None
    ) -> Answer: ...

    async def fleet(self) -> FleetSnapshot: ...


LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})


def refuse_unless_local(settings: Settings, resolve: Resolver = system_resolver) -> None:
    """With ``FLEETWATCH_MODEL_LOCAL_ONLY`` on and a model key set, refuse a model URL whose
    host is not on this machine or a private network (`shared.web.model_host`: a name is
    resolved, and every address it gives must be local). Called once at start.

    Raises:
        FleetwatchError: ``model_not_local``.
    """
    if settings.model_local_only and settings.anthropic_api_key is not None:
        require_local(settings.anthropic_base_url, resolve)


def model_info(settings: Settings) -> ModelInfo:
    """Which model the settings make the assistant answer with: ``keyword`` (no key: nothing is
    sent anywhere), ``demo_model`` (the base URL is the lab's Messages-API stand-in, on this
    machine at ``FLEETWATCH_MODEL_STANDIN_PORT``, as ``fleetwatch up`` sets it in demo mode) or
    ``model`` (anything else, named by its scheme, host and port; never the key)."""
    if settings.anthropic_api_key is None:
        return ModelInfo(kind="keyword")
    parts = urlsplit(settings.anthropic_base_url or ANTHROPIC_API)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    shown = f"[{host}]" if ":" in host else host
    endpoint = f"{parts.scheme}://{shown}:{port}"
    demo = host in LOOPBACK_HOSTS and port == settings.model_standin_port
    return ModelInfo(kind="demo_model" if demo else "model", model=settings.model, endpoint=endpoint)


class ModelClient:
    """The model client the settings describe, made at the first model call: the Anthropic SDK
    (and its HTTP and pydantic stacks) is imported then, not while the assistant waits for a
    question (issue 14: idle memory). ``messages`` and ``close`` are the SDK client's."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._client: anthropic.AsyncAnthropic | None = None

    def _made(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            import anthropic

            key = self._settings.anthropic_api_key
            assert key is not None  # `model_client` makes none without a key
            self._client = anthropic.AsyncAnthropic(
                api_key=key.reveal(),
                base_url=self._settings.anthropic_base_url,
                max_retries=MODEL_RETRIES,
                timeout=self._settings.model_timeout_seconds,
            )
        return self._client

    @property
    def messages(self) -> Any:
        """The SDK client's ``messages`` (the client is made now if it was not yet)."""
        return self._made().messages

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


def model_client(settings: Settings) -> ModelClient | None:
    """The model client the settings describe, or None when no key is set (model off)."""
    if settings.anthropic_api_key is None:
        return None
    return ModelClient(settings)


def build_reader(settings: Settings, tool_policy: ToolPolicy) -> SignedReader:
    """The read slot's guarded client (the assistant's and the watch's; close it at the end)."""
    return SignedReader(
        settings.read_token_file, settings.epiphan_mcp_url, tool_policy.model_read_tools, pins=tool_policy
    )


def build_assistant(
    settings: Settings,
    policy: Policy,
    tool_policy: ToolPolicy,
    *,
    client: Any | None = None,
    reader: SignedReader | None = None,
    notes: NotesSource | None = None,
    read_only: bool = False,
) -> tuple[Assistant, SignedReader]:
    """The production `Assistant` (and its reader, to close at the end). `client` overrides
    the model client the settings describe (None: from the settings); `reader` is the read
    client to use (None: a new one, `build_reader`); `notes` the watch's room notes;
    `read_only`: never offered ``propose_change`` whatever the fence (the one asks from Slack
    get)."""
    reader = reader or build_reader(settings, tool_policy)
    assistant = Assistant(
        reader=reader,
        sink=approval_sink(settings.approval_socket),
        policy=policy,
        tool_policy=tool_policy,
        model_client=client if client is not None else model_client(settings),
        model=settings.model,
        fence_configured=settings.fence_configured,
        read_only=read_only,
        allowlist=settings.write_device_ids,
        model_info=model_info(settings),
        call_timeout_seconds=settings.model_timeout_seconds,
        notes=notes,
        zone=settings.timezone,
    )
    return assistant, reader


class AssistantAudit:
    """The assistant's audit rows other than ``ask``, written by approval_web through `sink`:
    assistant.sock's refusals (`RecordRefusal`: what the peer sent is never recorded, only the
    operation (``connect``, a tag this socket serves, or ``unknown``), the code, the field, the
    frame's size, and the peer's uid, gid and pid from the kernel), and the ask page's refusals
    and sessions (`page_refused`, `session_started`)."""

    def __init__(self, sink: ProposalSink) -> None:
        self._sink = sink

    async def refused(
        self,
        peer: PeerCred,
        operation: str,
        code: Code,
        *,
        field: str | None = None,
        frame_bytes: int | None = None,
    ) -> None:
        log.warning("refused %s from uid %d (%s)", operation, peer.uid, code)
        await write_record(
            self._sink,
            RecordRefusal(
                operation=operation,
                code=str(code),
                uid=peer.uid,
                gid=peer.gid,
                pid=peer.pid,
                field=field,
                frame_bytes=frame_bytes,
            ),
        )

    async def page_refused(
        self,
        operation: str,
        code: Code,
        uid: int | None,
        *,
        signed_in_uid: int | None = None,
        unrecorded_before: int | None = None,
    ) -> None:
        """A refusal on the ask page (the uid the kernel lists for the browser, when known; for
        ``session_not_yours`` the uid that signed in; the refusals of this uid left without a
        row since its last one)."""
        log.warning("ask page refused %s from uid %s (%s)", operation, uid, code)
        await write_record(
            self._sink,
            RecordRefusal(
                operation=operation,
                code=str(code),
                uid=-1 if uid is None else uid,
                gid=-1,
                pid=-1,
                surface="ask_page",
                signed_in_uid=None
                if code is not Code.SESSION_NOT_YOURS
                else (-1 if signed_in_uid is None else signed_in_uid),
                unrecorded_before=unrecorded_before,
            ),
        )

    async def session_started(self, page_session: str, uid: int | None) -> None:
        """An ask page session began (the secret was right)."""
        await write_record(
            self._sink, RecordPageSession(page_session=page_session, uid=-1 if uid is None else uid)
        )

    async def on_refused_peer(self, peer: PeerCred) -> None:
        """A peer whose uid and groups are not allowed (`serve_unix`'s hook)."""
        await self.refused(peer, "connect", Code.PEER_NOT_ALLOWED)

    async def on_refused_request(self, peer: PeerCred, refused: RefusedRequest) -> None:
        """A request refused before the handler (`serve_unix`'s hook)."""
        await self.refused(
            peer, refused.operation, refused.code, field=refused.field, frame_bytes=refused.frame_bytes
        )


def handler(assistant: Asker, audit: AssistantAudit | None = None, watch: Watch | None = None) -> Handler:
    """The assistant.sock request handler; a refused question is recorded through `audit`;
    the watch's requests go to `watch` (None: refused with ``watch_not_ready``). (Length and
    language are the message's own caps: decoding refuses them.)"""

    async def ask(request: Ask, peer: PeerCred) -> Answer:
        if not request.question.strip():
            if audit is not None:
                await audit.refused(peer, message_tag(Ask), Code.INVALID_MESSAGE, field="$.question")
            raise AssistantError(Code.INVALID_MESSAGE, f"a question is 1 to {MAX_QUESTION_CHARS} characters")
        return await assistant.ask(request.question, request.language, asked_by=AskedBy(uid=peer.uid))

    async def fleet(request: GetFleet, peer: PeerCred) -> FleetView:
        return FleetView(snapshot=await assistant.fleet())

    async def model(request: GetModel, peer: PeerCred) -> ModelInfo:
        return assistant.model_info

    async def manifest(request: GetCapabilities, peer: PeerCred) -> Capabilities:
        return capabilities()

    own = {Ask: ask, GetFleet: fleet, GetModel: model, GetCapabilities: manifest}
    return dispatch(OPERATIONS, {**own, **watch_handlers(watch)})


def watch_handlers(watch: Watch | None) -> dict[type[Message], OperationHandler]:
    """The watch's operations (`shared.wire.assistant.WATCH_OPERATIONS`), each answered by the
    watch (`services.assistant.watch.answers`); with no watch, each refused (``watch_not_ready``)."""
    if watch is None:

        async def not_ready(request: Message, peer: PeerCred) -> Message:
            raise AssistantError(Code.WATCH_NOT_READY, "the watch is not running in this process")

        return {row.request: not_ready for row in WATCH_OPERATIONS}

    async def status(request: GetWatchStatus, peer: PeerCred) -> WatchStatus:
        return await answers.status(watch)

    async def history(request: GetHistory, peer: PeerCred) -> History:
        return await answers.history(watch, request.days, request.language)

    async def digest(request: RunDigest, peer: PeerCred) -> DigestReport:
        return await answers.digest_now(watch, post=request.post, language=request.language)

    async def note(request: SetNote, peer: PeerCred) -> NoteOutcome:
        return await answers.set_note(watch, request.room, request.text, clear=request.clear, uid=peer.uid)

    async def notes(request: ListNotes, peer: PeerCred) -> Notes:
        return await answers.list_notes(watch, request.room, request.search)

    async def silence(request: SetSilence, peer: PeerCred) -> SilenceOutcome:
        return await answers.set_silence(
            watch,
            request.target,
            request.reason,
            minutes=request.minutes,
            until=request.until,
            include_classes=request.include_classes,
            uid=peer.uid,
        )

    async def silences(request: ListSilences, peer: PeerCred) -> Silences:
        return await answers.list_silences(watch)

    async def unsilence(request: LiftSilence, peer: PeerCred) -> SilenceOutcome:
        return await answers.lift_silence(watch, request.target, uid=peer.uid)

    return {
        GetWatchStatus: status,
        GetHistory: history,
        RunDigest: digest,
        SetNote: note,
        ListNotes: notes,
        SetSilence: silence,
        ListSilences: silences,
        LiftSilence: unsilence,
    }


@contextlib.asynccontextmanager
async def assistant_side(
    settings: Settings, assistant: Asker, *, sink: ProposalSink | None = None, watch: Watch | None = None
) -> AsyncIterator[None]:
    """Serve assistant.sock (``settings.assistant_socket``) for the ``async with`` block; its
    refusals are recorded through `sink` (default: approval.sock); the watch's requests go to
    `watch`.

    Raises:
        ProtocolError: ``socket_in_use`` (another assistant is running).
    """
    audit = AssistantAudit(sink or approval_sink(settings.approval_socket))
    server = await serve_unix(
        settings.assistant_socket,
        handler(assistant, audit, watch),
        codec=OPERATIONS.codec,
        allowed_uids=settings.assistant_uids,
        allowed_gids=settings.assistant_gids,
        on_refused_peer=audit.on_refused_peer,
        on_refused_request=audit.on_refused_request,
        max_frame_bytes=OPERATIONS.frame_bytes,
    )
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            settings.assistant_socket.unlink()

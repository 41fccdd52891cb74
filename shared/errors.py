"""Stable error codes and the root exception of Fleetwatch.

Every error that crosses a socket, reaches the model, or is printed by the CLI carries one of
the snake_case codes declared here, and only here. Code branches on codes; messages are for
people. `docs/error-codes.md` and each socket's `capabilities` manifest are checked against
this table by tests, in both directions.

Exception tree, drawn here only (each package raises its own root or a class below it, and
translates foreign exceptions at one boundary with ``raise ... from``)::

    FleetwatchError                               root; ``.code`` (a Code) and ``.message``
    ├── shared.config.ConfigError                 a setting is missing or malformed
    ├── shared.canonical.CanonicalError           arguments cannot be put in canonical form
    ├── shared.policy.source.PolicyError          a policy file is invalid (names file and line)
    ├── shared.policy.schema.ArgumentsError       proposed arguments break the reviewed schema
    ├── shared.sqlite.StoreError                  a store refused (a migration from the future, busy)
    ├── shared.store.audit_seal.AuditKeyError     an audit key file is unsafe or malformed, or a row
    │                                             could not be signed
    ├── shared.private_files.UnsafePath           a path crosses a symlink or a folder a less
    │                                             trusted user controls
    ├── shared.wire.protocol.ProtocolError        a frame or message is malformed; a socket is in use
    ├── shared.wire.client.CallError              a call across a socket got no reply: the peer's
    │                                             code, service_unavailable or service_no_answer
    ├── shared.web.local_http.LocalHttpError      a local HTTP page could not listen
    ├── shared.epiphan.read_client.EpiphanError   the Epiphan server (or the guard) refused a call
    ├── shared.epiphan.mcp_session.McpCallError   no tool result came back (unreachable, timeout)
    ├── shared.epiphan.fleet.FleetShapeError      a read result has no known shape
    ├── shared.epiphan.capture.CaptureError       a capture folder is refused or cannot be read
    ├── shared.epiphan.slots.SlotError            a token slot is missing or unsafe, or locked
    ├── shared.epiphan.signin_oauth.SignInError   a sign-in failed, is dead, or breaks the fence
    ├── services.executor.ExecutorError           an executor operation refused or failed
    ├── services.approval_web.ApprovalWebError    approval_web refused or could not start
    │   ├── services.approval_web.intake.IntakeRefused     a refused request on approval.sock
    │   ├── services.approval_web.limits.LimitReached      a limit refuses a new proposal
    │   └── services.approval_web.page.errors.PageError    the approval page could not start
    ├── services.assistant.AssistantError         the assistant refused or could not answer
    │   ├── services.assistant.ModelUnavailable   the model could not be used (keyword answer)
    │   └── services.assistant.watch.destinations.PostError
    │                                             a watch post did not go out (logged, counted)
    ├── services.ctl.CtlError                     a ``fleetwatch`` command could not do its job
    │   └── services.ctl.supervise.SuperviseError supervisord could not be started or driven
    └── services.lab.LabError                     the lab was given something it cannot run
        └── services.lab.scenario.ScenarioError   a scenario file is missing or invalid

`shared.policy.model.ToolPolicy.rule_for` raises `FleetwatchError` itself (``not_proposable``,
``schema_not_reviewed``): a refusal of a tool name, not of a file. Inside the lab,
``services.lab.calls.ToolFailure`` is not part of this tree: it is a simulated Epiphan tool
error, turned into the tool's error result before anything leaves the lab.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Self


def error_line(said_by: str, message: str, code: str) -> str:
    """The one shape of an error line a person reads on a terminal or in a log:
    ``<said_by>: <message> [<code>]`` (``fleetwatch: el servicio no responde [service_unavailable]``).
    The message, in the reader's language, comes first; the stable code stays last, in brackets,
    for scripts (the last bracketed word of the line)."""
    return f"{said_by}: {message} [{code}]"


class Code(enum.StrEnum):
    """Every stable error code. The value is the wire form."""

    # --- wire and socket ---------------------------------------------------------------
    BAD_FRAME = "bad_frame"
    FRAME_TOO_LARGE = "frame_too_large"
    UNKNOWN_MESSAGE = "unknown_message"
    INVALID_MESSAGE = "invalid_message"
    PEER_NOT_ALLOWED = "peer_not_allowed"
    SERVICE_UNAVAILABLE = "service_unavailable"
    INTERNAL_ERROR = "internal_error"
    SERVICE_NO_ANSWER = "service_no_answer"
    SOCKET_IN_USE = "socket_in_use"
    OPERATION_NOT_ALLOWED = "operation_not_allowed"
    # --- configuration and policy ------------------------------------------------------
    CONFIG_INVALID = "config_invalid"
    UNSAFE_PATH = "unsafe_path"
    POLICY_INVALID = "policy_invalid"
    # --- store -------------------------------------------------------------------------
    STORE_SCHEMA_TOO_NEW = "store_schema_too_new"
    AUDIT_CHAIN_BROKEN = "audit_chain_broken"
    STORE_BUSY = "store_busy"
    STORE_FULL = "store_full"
    STORE_READ_ONLY = "store_read_only"
    # --- canonical form ----------------------------------------------------------------
    NOT_CANONICALIZABLE = "not_canonicalizable"
    HIDDEN_CHARACTER = "hidden_character"
    # --- Epiphan client and guard -----------------------------------------------------
    TOOL_NOT_ALLOWED = "tool_not_allowed"
    UNKNOWN_TOOL = "unknown_tool"
    EPIPHAN_AUTH = "epiphan_auth"
    EPIPHAN_TOOL_ERROR = "epiphan_tool_error"
    EPIPHAN_UNREACHABLE = "epiphan_unreachable"
    EPIPHAN_TIMEOUT = "epiphan_timeout"
    EPIPHAN_BAD_RESULT = "epiphan_bad_result"
    PLAN_REQUIRED = "plan_required"
    NO_SIGN_IN = "no_sign_in"
    # --- sign-in (OAuth, slots, refresh) -----------------------------------------------
    SIGN_IN_FAILED = "sign_in_failed"
    SIGN_IN_DEAD = "sign_in_dead"
    REFRESH_FAILED = "refresh_failed"
    SIGN_IN_BUSY = "sign_in_busy"
    SANDBOX_EMPTY = "sandbox_empty"
    SANDBOX_OVERLAPS = "sandbox_overlaps"
    # --- proposals (intake and policy) -------------------------------------------------
    NOT_PROPOSABLE = "not_proposable"
    SCHEMA_NOT_REVIEWED = "schema_not_reviewed"
    INVALID_ARGUMENTS = "invalid_arguments"
    TOO_MANY_TARGETS = "too_many_targets"
    OBSERVE_MODE = "observe_mode"
    FENCE_NOT_CONFIGURED = "fence_not_configured"
    QUEUE_FULL = "queue_full"
    HOURLY_CAP_REACHED = "hourly_cap_reached"
    DENIAL_PAUSE = "denial_pause"
    PROPOSAL_NOT_FOUND = "proposal_not_found"
    PROPOSAL_NOT_PENDING = "proposal_not_pending"
    TARGET_BUSY = "target_busy"
    TARGET_UNVERIFIED = "target_unverified"
    NOTHING_TO_ACKNOWLEDGE = "nothing_to_acknowledge"
    NO_SUCH_PAUSE = "no_such_pause"
    AMBIGUOUS_ROOM = "ambiguous_room"
    # --- executor checks ----------------------------------------------------------------
    SEAL_INVALID = "seal_invalid"
    APPROVAL_NOT_FOUND = "approval_not_found"
    APPROVAL_NOT_CONSUMED = "approval_not_consumed"
    APPROVAL_EXPIRED = "approval_expired"
    APPROVAL_ALREADY_USED = "approval_already_used"
    APPROVAL_MISMATCH = "approval_mismatch"
    CARD_FACTS_CHANGED = "card_facts_changed"
    APPROVALS_INSUFFICIENT = "approvals_insufficient"
    APPROVER_NOT_DISTINCT = "approver_not_distinct"
    APPROVALS_CARD_CHANGED = "approvals_card_changed"
    APPROVAL_WEB_RESTARTED = "approval_web_restarted"
    EXECUTOR_RESTARTED = "executor_restarted"
    SCHEMA_VERSION_CHANGED = "schema_version_changed"
    KILL_SWITCH_ON = "kill_switch_on"
    KILL_SWITCH_NOT_CONFIRMED = "kill_switch_not_confirmed"
    DEVICE_LIST_UNREADABLE = "device_list_unreadable"
    TEAM_MISMATCH = "team_mismatch"
    TARGET_NOT_IN_SANDBOX = "target_not_in_sandbox"
    TARGET_NOT_ALLOWLISTED = "target_not_allowlisted"
    CHANNEL_NOT_FOUND = "channel_not_found"
    MODEL_NOT_CAPABLE = "model_not_capable"
    TARGET_OFFLINE = "target_offline"
    STREAM_NOT_FOUND = "stream_not_found"
    STREAM_IN_USE = "stream_in_use"
    STREAM_NOT_STREAMING = "stream_not_streaming"
    EVENT_NOT_CURRENT = "event_not_current"
    STATE_READ_FAILED = "state_read_failed"
    FINGERPRINT_CHANGED = "fingerprint_changed"
    TOOL_CHANGED = "tool_changed"
    TARGET_RECORDING = "target_recording"
    TARGET_IN_EVENT_WINDOW = "target_in_event_window"
    # --- assistant ----------------------------------------------------------------------
    FSM_BLOCKED = "fsm_blocked"
    BUDGET_EXCEEDED = "budget_exceeded"
    DUPLICATE_PROPOSAL = "duplicate_proposal"
    MODEL_UNAVAILABLE = "model_unavailable"
    MODEL_BAD_TOOL_CALL = "model_bad_tool_call"
    MODEL_NOT_LOCAL = "model_not_local"
    CHANGE_NOT_ASKED = "change_not_asked"
    # --- the watch ----------------------------------------------------------------------
    WATCH_NOT_READY = "watch_not_ready"
    ROOM_AMBIGUOUS = "room_ambiguous"
    ROOM_NOT_FOUND = "room_not_found"
    POST_FAILED = "post_failed"
    POST_TIMEOUT = "post_timeout"
    POST_DROPPED = "post_dropped"
    SILENCE_NOT_FOUND = "silence_not_found"
    # --- asks from Slack ----------------------------------------------------------------
    SLACK_NOT_ALLOWED = "slack_not_allowed"
    SLACK_WRONG_TEAM = "slack_wrong_team"
    SLACK_CHANNEL_NOT_SERVED = "slack_channel_not_served"
    SLACK_RATE_LIMITED = "slack_rate_limited"
    SLACK_QUESTION_TOO_LONG = "slack_question_too_long"
    # --- capture and replay -------------------------------------------------------------
    CAPTURE_REFUSED = "capture_refused"
    CAPTURE_INVALID = "capture_invalid"
    # --- page ---------------------------------------------------------------------------
    SECRET_REQUIRED = "secret_required"
    SECRET_WRONG = "secret_wrong"
    SLOW_DOWN = "slow_down"
    CSRF_FAILED = "csrf_failed"
    CROSS_SITE = "cross_site"
    BAD_HOST = "bad_host"
    BODY_TOO_LARGE = "body_too_large"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    PAGE_NOT_FOUND = "page_not_found"
    SESSION_NOT_YOURS = "session_not_yours"


MEANINGS: Mapping[Code, str] = MappingProxyType(
    {
        Code.BAD_FRAME: "A socket frame could not be decoded.",
        Code.FRAME_TOO_LARGE: "A socket frame was larger than the cap.",
        Code.UNKNOWN_MESSAGE: "A socket message had a tag this socket does not serve.",
        Code.INVALID_MESSAGE: "A socket message had the right tag but wrong or missing fields.",
        Code.PEER_NOT_ALLOWED: "The connecting process's user is not on this socket's allowlist.",
        Code.SERVICE_UNAVAILABLE: "A service this operation needs is not running or not reachable.",
        Code.INTERNAL_ERROR: "An unexpected error; the service logged it with a traceback.",
        Code.SERVICE_NO_ANSWER: "The request was sent but no answer came (timeout or connection lost); its outcome is unknown.",
        Code.SOCKET_IN_USE: "Another process is already serving this socket path.",
        Code.OPERATION_NOT_ALLOWED: "The connecting user's role may not use this operation (the assistant may only submit proposals, read their state and expire its turn).",
        Code.CONFIG_INVALID: "A setting is missing or malformed.",
        Code.UNSAFE_PATH: (
            "A path root or a service would act on is a symlink, not what it should be, or in a folder "
            "another user controls; refused, nothing was changed."
        ),
        Code.POLICY_INVALID: "A policy file is invalid; the message names the file and line.",
        Code.STORE_SCHEMA_TOO_NEW: "The store was written by a newer Fleetwatch; refusing to downgrade it.",
        Code.AUDIT_CHAIN_BROKEN: "The audit log's hash chain does not verify; the message names the first bad row.",
        Code.STORE_BUSY: "The store stayed locked by another process past the busy timeout; nothing was written.",
        Code.STORE_FULL: "The store's disk is full; nothing was written. Free space and try again.",
        Code.STORE_READ_ONLY: "The store cannot be written (a read-only disk or file); nothing was written.",
        Code.NOT_CANONICALIZABLE: "Arguments hold a value with no canonical form (float, NaN, duplicate key...).",
        Code.HIDDEN_CHARACTER: "Arguments hold a hidden, control or bidirectional character.",
        Code.TOOL_NOT_ALLOWED: "The tool is not on the read list; the guard refused it before sending.",
        Code.UNKNOWN_TOOL: "No such tool.",
        Code.EPIPHAN_AUTH: "Epiphan reported a missing, expired or invalid sign-in.",
        Code.EPIPHAN_TOOL_ERROR: "Epiphan answered the call with an error result.",
        Code.EPIPHAN_UNREACHABLE: "The Epiphan server could not be reached.",
        Code.EPIPHAN_TIMEOUT: "The Epiphan server did not answer in time.",
        Code.EPIPHAN_BAD_RESULT: "Epiphan's answer could not be read as the expected shape.",
        Code.PLAN_REQUIRED: (
            "Epiphan refused the write: the team's plan does not allow changes (writes need Epiphan "
            "Edge Premium); nothing ran. Reads keep working."
        ),
        Code.NO_SIGN_IN: "There is no sign-in in the slot this operation needs.",
        Code.SIGN_IN_FAILED: "The OAuth sign-in did not complete (discovery, registration, authorization or token exchange); nothing was stored.",
        Code.SIGN_IN_DEAD: "The server refused the refresh (HTTP 400/401): the sign-in is dead; sign in again.",
        Code.REFRESH_FAILED: "The refresh could not be done now (server error or unreachable); the sign-in is kept and tried again later.",
        Code.SIGN_IN_BUSY: "Another process held the sign-in's lock past the bound; nothing was changed.",
        Code.SANDBOX_EMPTY: "The sandbox sign-in sees no devices; it was refused and forgotten.",
        Code.SANDBOX_OVERLAPS: "The sandbox sign-in sees devices the normal sign-in sees; it was refused and forgotten.",
        Code.NOT_PROPOSABLE: "The tool may never be proposed: a read tool, a name Epiphan does not have, or a write tool the policy marks never proposable (it would carry a stream key).",
        Code.SCHEMA_NOT_REVIEWED: "The write tool is not in the policy's propose section: its argument schema has not been reviewed.",
        Code.INVALID_ARGUMENTS: "The arguments do not match the tool's reviewed schema.",
        Code.TOO_MANY_TARGETS: "More targets than the policy allows for this tool.",
        Code.OBSERVE_MODE: "Autonomy is 'observe': nothing may be proposed.",
        Code.FENCE_NOT_CONFIGURED: "Neither FLEETWATCH_WRITE_DEVICE_IDS nor FLEETWATCH_WRITE_TEAM_ID is set.",
        Code.QUEUE_FULL: "The pending queue is full.",
        Code.HOURLY_CAP_REACHED: "The cap on proposals per hour is reached.",
        Code.DENIAL_PAUSE: (
            "This tool was denied repeatedly for this target; such proposals are paused for a while "
            "(the policy's denial pause)."
        ),
        Code.PROPOSAL_NOT_FOUND: "No proposal with that ID.",
        Code.PROPOSAL_NOT_PENDING: "The proposal is no longer pending.",
        Code.TARGET_BUSY: (
            "Another change for this target is waiting for a person, approved and not run yet, or running."
        ),
        Code.TARGET_UNVERIFIED: (
            "The last change to this target ended unknown or was not verified; a fresh read must verify "
            "it, or an operator acknowledge it, before another change is proposed."
        ),
        Code.NOTHING_TO_ACKNOWLEDGE: "That change was verified, or never ran: there is nothing to acknowledge.",
        Code.NO_SUCH_PAUSE: "No denial pause running now matches that tool and room.",
        Code.AMBIGUOUS_ROOM: "More than one paused room has that name; name it by its device ID.",
        Code.SEAL_INVALID: "The bound record's seal does not verify (tampered, or sealed by an earlier executor).",
        Code.APPROVAL_NOT_FOUND: "No approval with that ID.",
        Code.APPROVAL_NOT_CONSUMED: "The approval was never consumed: nobody pressed Approve on that card.",
        Code.APPROVAL_EXPIRED: (
            "The approval's window closed before it was consumed, or before the executor claimed it"
            " (database clock); nothing ran."
        ),
        Code.APPROVAL_ALREADY_USED: "The approval was already consumed or claimed.",
        Code.APPROVAL_MISMATCH: (
            "The approval, the sealed proposal and what the page sent do not agree (changed in the store); nothing ran."
        ),
        Code.CARD_FACTS_CHANGED: (
            "A fact the card showed (a name, a stream destination, an event) changed before the write; nothing ran."
        ),
        Code.APPROVALS_INSUFFICIENT: (
            "This change needs two people: the executor did not find two approvals of distinct accounts,"
            " both within their window and bound to the same card; nothing ran."
        ),
        Code.APPROVER_NOT_DISTINCT: (
            "This change needs a second person: the first approval came from the same account (or an account"
            " the page cannot name); nothing was recorded."
        ),
        Code.APPROVALS_CARD_CHANGED: (
            "The card changed between the first and the second approval: both people must approve it again;"
            " nothing ran."
        ),
        Code.APPROVAL_WEB_RESTARTED: "The approval page's service stopped before the executor took the approval; nothing ran.",
        Code.EXECUTOR_RESTARTED: "The executor stopped before it took the approval; nothing ran.",
        Code.SCHEMA_VERSION_CHANGED: "The tool's schema version changed since the proposal.",
        Code.KILL_SWITCH_NOT_CONFIRMED: "The executor did not confirm a kill switch change (not running, or the request is not the newest); writes stay paused until it does.",
        Code.KILL_SWITCH_ON: "Writes are paused (the kill switch is on).",
        Code.DEVICE_LIST_UNREADABLE: "The sandbox team's device list could not be read; failing closed.",
        Code.TEAM_MISMATCH: "The sandbox sign-in's team ID differs from FLEETWATCH_WRITE_TEAM_ID.",
        Code.TARGET_NOT_IN_SANDBOX: "A target is not on the sandbox team's device list.",
        Code.TARGET_NOT_ALLOWLISTED: "A target is not on FLEETWATCH_WRITE_DEVICE_IDS.",
        Code.CHANNEL_NOT_FOUND: "The channel is not on the target device.",
        Code.MODEL_NOT_CAPABLE: (
            "The target's device model cannot do this change (an EC20 camera cannot record, stream or "
            "hold events); refused before the card."
        ),
        Code.TARGET_OFFLINE: "The target is offline; a reboot or firmware update cannot reach it.",
        Code.STREAM_NOT_FOUND: "The stream endpoint is not on the sandbox team's list.",
        Code.STREAM_IN_USE: "The stream destination is in use by another device (its LockByDevice); a start would fail.",
        Code.STREAM_NOT_STREAMING: "The stream destination is not streaming (CurrentlyStreaming is false): nothing to stop.",
        Code.EVENT_NOT_CURRENT: "The event is not the device's current or next event.",
        Code.STATE_READ_FAILED: "A target's state could not be read; failing closed.",
        Code.FINGERPRINT_CHANGED: "A target's state changed since the proposal (online, recording, next event).",
        Code.TOOL_CHANGED: "Epiphan's definition of the tool (its input schema or description) differs from the one reviewed in the policy; it is neither proposed, run nor called until a person reviews it.",
        Code.TARGET_RECORDING: "A disruptive change would hit a room that is recording.",
        Code.TARGET_IN_EVENT_WINDOW: "A disruptive change would hit a room during or near its event.",
        Code.FSM_BLOCKED: "The assistant's session state machine blocked this call.",
        Code.BUDGET_EXCEEDED: "The question's budget (model calls, tokens or time) is spent.",
        Code.DUPLICATE_PROPOSAL: "An identical proposal is already recorded; its state is returned.",
        Code.MODEL_UNAVAILABLE: "The model could not be used; the keyword answer was given instead.",
        Code.MODEL_BAD_TOOL_CALL: "The model's tool call was malformed (an id, its input or a call written as text); nothing of that answer ran.",
        Code.MODEL_NOT_LOCAL: "FLEETWATCH_MODEL_LOCAL_ONLY is on and the model's URL is not on this machine or a private network.",
        Code.CHANGE_NOT_ASKED: "A change was asked for and the model did not ask for it (no proposal call); nothing was proposed.",
        Code.WATCH_NOT_READY: "The watch has not read the fleet yet; try again after its first heartbeat.",
        Code.ROOM_AMBIGUOUS: "More than one room matches that name; nothing was saved (name one of the candidates).",
        Code.ROOM_NOT_FOUND: "No room of the fleet, as the watch last read it, matches that name.",
        Code.POST_FAILED: "Slack or Teams refused or failed a post; it was logged and counted, and not retried.",
        Code.POST_TIMEOUT: "Slack or Teams did not answer a post in time; it was logged and counted, and not retried.",
        Code.POST_DROPPED: "Too many posts were waiting to be sent; this one was dropped (logged and counted).",
        Code.SILENCE_NOT_FOUND: "No silence that still holds matches that room, group or silence number; nothing was lifted.",
        Code.SLACK_NOT_ALLOWED: (
            "A Slack member not on the ask allowlist (FLEETWATCH_SLACK_ALLOWED_USERS, or the user group, whose "
            "lookup failed closed) asked; they got one polite line and nothing was read."
        ),
        Code.SLACK_WRONG_TEAM: "A Slack ask came from another workspace than FLEETWATCH_SLACK_TEAM_ID; it was not answered.",
        Code.SLACK_CHANNEL_NOT_SERVED: (
            "A Slack ask came from a channel that is neither a direct message nor one of "
            "FLEETWATCH_SLACK_ASK_CHANNELS; nothing was read."
        ),
        Code.SLACK_RATE_LIMITED: "A Slack member asked more often than the per-member limit allows; nothing was read.",
        Code.SLACK_QUESTION_TOO_LONG: "A question asked from Slack was longer than the cap; nothing was read.",
        Code.CAPTURE_REFUSED: (
            "The capture folder is not empty, cannot be made private, or is inside a git checkout "
            "(--in-checkout allows that); nothing was read or written."
        ),
        Code.CAPTURE_INVALID: "A capture folder has no readable manifest, or a file it names is missing or unreadable.",
        Code.SECRET_REQUIRED: "The page secret has not been entered in this browser session.",
        Code.SECRET_WRONG: "The page secret was wrong.",
        Code.SLOW_DOWN: "Too many wrong secrets from this local user (uid); wait before trying again.",
        Code.CSRF_FAILED: "The form token is missing, wrong, or bound to another proposal or session.",
        Code.CROSS_SITE: "The request did not come from the page itself.",
        Code.BAD_HOST: "The Host header is not the page's own (DNS rebinding guard).",
        Code.BODY_TOO_LARGE: "The request body is larger than the cap.",
        Code.METHOD_NOT_ALLOWED: "The page changes nothing on GET; an action needs a POST from its own form.",
        Code.PAGE_NOT_FOUND: "The page has no such address; nothing changed.",
        Code.SESSION_NOT_YOURS: (
            "A page session was used by another local user (uid) than the one that signed in; "
            "nothing changed and the session was ended."
        ),
    }
)


def N_(message: str) -> str:
    """Mark `message` for the one catalogue (``shared/text``, which the rooms below it may not
    import), unchanged: a command says it in the operator's language (`FleetwatchError.template`)."""
    return message


class FleetwatchError(Exception):
    """Root of every Fleetwatch exception.

    Attributes:
        code: the stable code (a `Code`); branch on this, never on the message.
        message: one line for a person, never holding a secret.
        template: the message as a catalogue message ID (English, ``%(key)s`` parameters,
            marked `N_`) when it was made with `said`, else None (the message is all there is).
        params: the template's parameters (text; one that is itself a catalogue message is
            said in the reader's language too).
    """

    template: str | None = None
    params: Mapping[str, str] = MappingProxyType({})

    def __init__(self, code: Code, message: str | None = None) -> None:
        self.code = Code(code)
        self.message = message or MEANINGS[self.code]
        super().__init__(f"{self.code}: {self.message}")

    @classmethod
    def said(cls, code: Code, template: str, /, **params: object) -> Self:
        """The error with `template` (marked `N_`) as its message, `params` put in; the
        template and the parameters are kept for a command to say in another language."""
        texts = {k: str(v) for k, v in params.items()}
        error = cls(code, template % texts if texts else template)
        error.template, error.params = template, texts
        return error


def error_codes_markdown() -> str:
    """The page ``docs/error-codes.md``, generated from `Code` and `MEANINGS` (a test holds the
    file to this output; regenerate with ``python -m shared.errors > docs/error-codes.md``)."""
    lines = [
        "# Error codes",
        "",
        "Every error that crosses a socket, reaches the model or is printed by `fleetwatch` carries",
        "one of these stable codes. Code branches on the code; the message is for people.",
        "This page is generated from `shared/errors.py` (`python -m shared.errors`).",
        "",
        "| code | meaning |",
        "|---|---|",
    ]
    lines += [f"| `{code.value}` | {MEANINGS[code]} |" for code in Code]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(error_codes_markdown(), end="")

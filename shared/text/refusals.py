"""Why something was refused or could not be done, in plain words, for every code the approval
page or the ``fleetwatch`` command meets when a change is refused (the executor's checks, the
approval state, the transport), as catalogue messages (`shared.text.catalogue`). Pure.

`refusal_words(code)` gives the `Words`; an unknown code is shown as itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.text.catalogue import N_, Words

REFUSALS: Mapping[str, str] = {
    "approval_not_found": N_("this approval does not exist, or belongs to another browser session."),
    "approval_expired": N_(
        "the card's window closed before the change could start: Approve was pressed too late, or the"
        " executor took the approval too late. Nothing ran; decide again on a fresh card."
    ),
    "approval_already_used": N_("this card was already approved once. A card runs at most once."),
    "approval_not_consumed": N_("this card was never approved."),
    "approval_mismatch": N_(
        "the approval in the store does not match the card that was approved; it was changed in the store."
    ),
    "card_facts_changed": N_(
        "something the card showed changed before the write (a name, the stream destination or the event). "
        "Look at the fresh card and decide again."
    ),
    "approvals_insufficient": N_(
        "this change needs two people, and the executor did not find two approvals of different"
        " accounts for the same card within their window. Nothing ran."
    ),
    "approver_not_distinct": N_(
        "this change needs a second person: the first approval came from this same account. Another"
        " operator, signed in as themselves, must approve it."
    ),
    "approvals_card_changed": N_(
        "the card changed between the first and the second approval. Both people must approve the fresh"
        " card again."
    ),
    "approval_web_restarted": N_(
        "the approval page's service stopped before the executor took the approval."
    ),
    "executor_restarted": N_("the executor stopped before it took the approval."),
    "proposal_not_found": N_("no proposal has that ID (mistyped, or no longer kept)."),
    "proposal_not_pending": N_("the proposal is no longer waiting (it was approved, denied or expired)."),
    "seal_invalid": N_("the proposal's seal does not verify (it changed, or the executor restarted)."),
    "schema_version_changed": N_("the tool's reviewed arguments changed since the proposal."),
    "kill_switch_on": N_("writes are paused (the kill switch is on)."),
    "device_list_unreadable": N_("the sandbox team's device list could not be read."),
    "team_mismatch": N_("the sandbox sign-in belongs to another team than the one configured."),
    "target_not_in_sandbox": N_("a device is not on the sandbox team's list."),
    "target_not_allowlisted": N_("a device is not on the list of devices Fleetwatch may change."),
    "channel_not_found": N_("the channel is not on the device."),
    "model_not_capable": N_(
        "this kind of device cannot do that change (an EC20 camera cannot record, stream or hold events)."
    ),
    "target_offline": N_("the room is offline, so a reboot or firmware update cannot reach it."),
    "stream_not_found": N_("the stream destination is not on the sandbox team's list."),
    "stream_in_use": N_("the stream destination is in use by another room, so a start would fail."),
    "stream_not_streaming": N_("the stream destination is not streaming, so there is nothing to stop."),
    "event_not_current": N_("the event is not the device's current or next event."),
    "state_read_failed": N_("a device's state could not be read."),
    "fingerprint_changed": N_("the room changed since the proposal (online, recording or next event)."),
    "tool_changed": N_(
        "the tool changed at Epiphan since a person reviewed it; it is not proposed or run until it is reviewed again."
    ),
    "target_recording": N_("the room is recording, and this change would disrupt it."),
    "target_in_event_window": N_(
        "the room's event is on now or starts soon, and this change would disrupt it."
    ),
    "fence_not_configured": N_("no devices are allowed to be changed (the fence is not configured)."),
    "no_sign_in": N_("there is no sandbox sign-in."),
    "not_proposable": N_("the policy does not allow this tool to be proposed."),
    "schema_not_reviewed": N_("this tool's arguments have not been reviewed."),
    "invalid_arguments": N_("the arguments do not fit the tool's reviewed schema."),
    "epiphan_auth": N_("Epiphan refused the sign-in."),
    "epiphan_unreachable": N_("Epiphan could not be reached."),
    "epiphan_timeout": N_("Epiphan did not answer in time."),
    "epiphan_bad_result": N_("Epiphan's answer could not be read."),
    "epiphan_tool_error": N_("Epiphan answered with an error."),
    "plan_required": N_(
        "Epiphan refused the change because this team's plan does not allow changes (they need "
        "Epiphan Edge Premium); reading the rooms keeps working."
    ),
    "service_unavailable": N_("the executor could not be reached."),
    "service_no_answer": N_("the executor did not answer."),
    "store_busy": N_("the store was busy; nothing was written."),
    "internal_error": N_("an unexpected error; it was logged."),
    "secret_required": N_("enter the page secret first."),
    "secret_wrong": N_("that is not the page secret."),
    "slow_down": N_("too many wrong secrets; wait before trying again."),
    "csrf_failed": N_("the form does not belong to this card and browser session. Reload the page."),
    "cross_site": N_("the request did not come from this page."),
    "bad_host": N_("the page was addressed by a name it does not answer to."),
    "body_too_large": N_("the request was too large."),
    "method_not_allowed": N_("this address only accepts the page's own form."),
    "page_not_found": N_("the page has no such address."),
    "session_not_yours": N_(
        "this browser session was signed in by another user of this computer; it has been ended. Enter the page secret again."
    ),
    "store_full": N_("the disk of the record store is full; ask an administrator to free space."),
    "store_read_only": N_("the record store cannot be written; ask an administrator."),
    "unsafe_path": N_(
        "a path is a symlink, or is in a folder another user controls; it was refused and nothing was changed."
    ),
}


def refusal_words(code: str) -> Words:
    """Why, in plain words, for a stable error code; an unknown code is shown as itself."""
    msgid = REFUSALS.get(code)
    return Words.of(msgid) if msgid else Words.of(N_("error code %(code)s"), code=code)

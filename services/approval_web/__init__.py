"""approval_web: where a person decides. Its own process (``python -m services.approval_web``).

It holds no Epiphan token at all. It serves ``approval.sock`` (proposals from the assistant's
user, admin commands from operators; see `services.approval_web.intake` for the roles) and,
beside it, the approval page on 127.0.0.1 and [::1] (`services.approval_web.page`). It talks to the
executor over ``executor.sock`` (Prepare, Inspect, Execute, Health, ListWritable: relayed for
the assistant, which learns the writable devices without any sandbox token; Recheck: a fresh
read that settles a change that ended unknown or unverified) and shares the store.

Layers of the socket side (each may import the ones above it and `shared.*`; executor.sock's
contract, operations and codes, is `shared.wire.executor`)::

    intake.py    pure: roles, and the propose-policy checks of a submission, in order
    limits.py  one_change.py
                 pure decisions over counts read by SQL functions: queue, hourly cap, denial
                 pause; an operator's lift of a pause | one change per room at a time: an
                 identical pending proposal, another change in the way, a last change still to
                 settle (unknown or not verified); an operator's acknowledgement
    admin.py  patterns.py
                 pure builders of the admin replies from store rows; the audit tail read |
                 the approvers' report: per person, decisions and time to decide, from the audit
    desk.py      what every job works with: the store connection and its lock, the settings
                 and policies, the executor's client (`Desk.relay`: a refusal keeps its code)
    proposals.py  operators.py  relays.py  records.py
                 the jobs, one handler per operation of `shared.wire.approval.OPERATIONS`:
                 the intake (SubmitProposal: checks, one change per room, limits, Prepare,
                 insert; a proposal's state, a turn's expiry, the history) | the admin
                 operations (lifting a denial pause, acknowledging a change among them) | the
                 relays to the executor (ListWritable, InspectProposal) | the assistant's
                 audit rows
    service.py   the socket handler: the role check, the jobs' dispatch; one refusal = one
                 code + one audit row
    server.py  page/  readout.py
                 `socket_side`: store, migrate, expire all pending at start, serve, expiry task
                 | the approval page (beside server.py: it may import one_change.py and those
                 above) | the read-only operations answered from the store while the services
                 are stopped (``python -m services.approval_web.readout``, for ``fleetwatch``)
    __main__.py  start the socket side and the page

Both the socket side and the page ask the executor through one client,
`shared.wire.executor.ExecutorClient`.

Errors: `ApprovalWebError` and its subclasses (`intake.IntakeRefused`, `limits.LimitReached`,
`page.errors.PageError`); the tree is drawn in `shared.errors`.
"""

from __future__ import annotations

from shared.errors import FleetwatchError


class ApprovalWebError(FleetwatchError):
    """approval_web refused a request or could not start; ``code`` says why."""

"""The watch: the read side's always-on half, inside the assistant process (DESIGN §12).

A heartbeat reads the fleet every ``FLEETWATCH_HEARTBEAT_SECONDS`` through the assistant's
guarded read client (the read sign-in only; never the sandbox slot; no model call), judges it
with the attention rules, diffs it against its own store, and posts to the console, Slack or
Teams only when something changed; a readiness post before each event; a notice when a
proposal waits for a person (the page's address, no approval power); a nightly sweep; room
notes; a wall screen; operators' silences; missed recordings. Operators reach it through
assistant.sock (``fleetwatch status --check``, ``history``, ``digest``, ``note``, ``notes``,
``silence``, ``silences``, ``unsilence``).

Its state lives in **the watch store**, the assistant's own SQLite file
(``FLEETWATCH_WATCH_DB``), never in the approval store, which the assistant's user cannot
write: what it learns of proposals it reads from approval.sock.

Layers (each may import only the ones above it; an import contract in ``pyproject.toml`` holds
this, and that nothing here imports the rest of the assistant)::

    words.py         the watch's phrases, English and Spanish (data)
    times.py         UTC text for the store; times in the team's zone for people
    silences.py      an operator's silence of a room or group: what it hides, until when (pure)
    post.py          a post, and its form for the console, Slack (escaped) and Teams (a card)
    diff.py          what changed between the store and a read (pure)
    readiness.py     Ready / Ready, with notes / Not ready, and why (pure)
    sweep.py         when the nightly sweep is due, and its report (pure)
    notes.py         cleaning a note, finding the room a name means (pure)
    captures.py      events seen on, and those that ended unrecorded: missed recordings (pure)
    schema.py        the watch store's schema (its own migrations)
    store.py         the watch store (SQL)
    compose.py       the posts in words: digest, readiness, notice, sweep, failed read
    destinations.py  console, Slack (the Slack SDK), Teams (a webhook); the outbox
    proposals.py     proposals and the sandbox rooms' names, from approval.sock
    heartbeat.py     `Watch`: the beat and the heartbeat loop
    notices.py       `Notices`: one notice per proposal that waits for a person
    answers.py       what operators ask on assistant.sock: status, history, digest, notes
    wall.py          the wall screen's view
    runner.py        the production wiring inside the assistant (`watch_side`)

Errors: the watch raises `services.assistant.AssistantError` (with a code) and lets
`shared.sqlite.StoreError` and `shared.wire.client.CallError` through; `destinations.PostError`
never leaves the outbox: a failed post is logged and counted (the tree is drawn in
`shared.errors`).
"""

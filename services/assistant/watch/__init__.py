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

    words.py  times.py  post.py  diff.py  schema.py  silences.py
                     the watch's phrases, English and Spanish (data) | UTC text for the store;
                     times in the team's zone for people | a post, and its form for the
                     console, Slack (escaped) and Teams (a card) | what changed between the
                     store and a read (pure) | the watch store's schema (its own migrations) |
                     an operator's silence of a room or group: what it hides, until when (pure)
    readiness.py  sweep.py  notes.py  store.py  captures.py
                     Ready / Ready, with notes / Not ready, and why (pure) | when the nightly
                     sweep is due, and its report (pure) | cleaning a note, finding the room a
                     name means (pure) | the watch store (SQL) | events seen on, and those that
                     ended unrecorded: missed recordings (pure)
    compose.py       the posts in words: digest, readiness, notice, sweep, failed read
    destinations.py  proposals.py
                     console, Slack (the Slack SDK), Teams (a webhook); the outbox | proposals
                     and the sandbox rooms' names, from approval.sock
    heartbeat.py  notices.py
                     `Watch`: the beat and the heartbeat loop | `Notices`: one notice per
                     proposal that waits for a person
    answers.py  wall.py
                     what operators ask on assistant.sock: status, history, digest, notes,
                     silences | the wall screen's view
    runner.py        the production wiring inside the assistant (`watch_side`)

Errors: the watch raises `services.assistant.AssistantError` (with a code) and lets
`shared.sqlite.StoreError` and `shared.wire.client.CallError` through; `destinations.PostError`
never leaves the outbox: a failed post is logged and counted (the tree is drawn in
`shared.errors`).
"""

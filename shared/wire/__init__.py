"""The sockets: framing, the server loop, the client, and one contract per socket.

Layers (each imports only those below it)::

    approval.py     approval.sock's contract: messages, operations and codes, `ApprovalClient`
    executor.py  assistant.py
                    executor.sock's and assistant.sock's contracts (`ExecutorClient`,
                    `AssistantClient`); approval.py relays executor.sock's ListWritable
    client.py  server.py
                    one request and its reply or `CallError` | the peer check, the answer loop
                    and the dispatch of a table's requests to their handlers
    protocol.py     frames, `Message`, `Request`, `ErrorReply`, `Codec`, the manifest types, the
                    operation table (`OperationTable`, `Row`)
    formats.py      the formats and caps of fields (IDs, codes, free text, `AnsweredBy`)

A contract module holds its socket's messages (tagged msgspec Structs; each request names its
reply, ``Request[Reply]``), its operation table (`OPERATIONS`: one row per request with the
codes it may answer and who may call it; the union, the codec and the manifest, `Capabilities`,
are made from it) and its client, whose one ``call(request)`` is typed by the request: every
call across a socket goes through that client. May import `shared.errors`,
`shared.text.languages` (the languages a question and an answer may be in) and
`shared.epiphan.fleet` (the snapshot `GetFleet` answers with).
"""

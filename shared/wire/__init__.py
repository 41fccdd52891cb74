"""The sockets: framing, the server loop, the client, and one contract per socket.

Layers (each imports only those below it)::

    approval.py     approval.sock's contract: messages, operations and codes, `ApprovalClient`
    executor.py  assistant.py
                    executor.sock's and assistant.sock's contracts (`ExecutorClient`,
                    `AssistantClient`); approval.py relays executor.sock's ListWritable
    client.py  server.py
                    one request and its reply or `CallError` | the peer check and answer loop
    protocol.py     frames, `Message`, `ErrorReply`, `Codec`, the manifest types
    formats.py      the formats and caps of fields (IDs, codes, free text, `AnsweredBy`)

A contract module holds its socket's messages (tagged msgspec Structs), its operations with the
codes each may answer (the manifest, `Capabilities`, is made from them) and its typed client:
every call across a socket goes through that client. May import `shared.errors`,
`shared.text.languages` (the languages a question and an answer may be in) and
`shared.epiphan.fleet` (the snapshot `GetFleet` answers with).
"""

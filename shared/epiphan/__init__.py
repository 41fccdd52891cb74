"""Epiphan Edge: reading a fleet, signing in, and what of it may reach the model.

Layers (each imports only those below it)::

    signed_session.py  reading through one slot's sign-in, refreshed when its token ended, a
                       read Epiphan refuses in-band repeated once after a refresh (never a write)
    signin.py          sign-in flows (OAuth with PKCE, paste, static token), refresh, the fence
                       check between the two teams
    read_client.py  attention.py
                       the guarded read client (the only way Fleetwatch reads a fleet; every
                       per-device read in calls of at most 100 IDs) | what needs attention
    capture_redact.py  read_batches.py
                       a capture's stable placeholders and their independent check | what a
                       batched per-device read gives back (values, failed calls, what is unread)
    model_data.py  fleet.py  mcp_session.py  signin_callback.py  signin_oauth.py  slots.py
                       what is sent to the model and what never is | one parser per read tool
                       into one snapshot | the MCP session (the only sender of ``tools/call``)
                       | the loopback callback | OAuth discovery and tokens | the token slots
    redact.py  fleet_shapes.py  capture.py  sdk_import.py
                       redaction of secrets in every result | each read tool's known result
                       shapes, by name | a capture folder's manifest and files | the MCP SDK's
                       client modules without its server side

May import `shared.config`, `shared.errors`, `shared.ids`, `shared.policy` and
`shared.private_files`.
"""

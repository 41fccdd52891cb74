"""Epiphan Edge: reading a fleet, signing in, and what of it may reach the model.

Layers (each imports only those below it)::

    warm_session.py    one warm MCP session per sign-in, the slot read again before each use
    signin.py          sign-in flows (OAuth with PKCE, paste, static token), refresh, the fence
                       check between the two teams
    read_client.py  attention.py  model_data.py
                       the guarded read client (the only way Fleetwatch reads a fleet) | what
                       needs attention | what is sent to the model and what never is
    fleet.py  mcp_session.py  signin_callback.py  signin_oauth.py  slots.py
                       tolerant parsers into one snapshot | the MCP session (the only sender of
                       ``tools/call``) | the loopback callback | OAuth discovery and tokens | the
                       token slots on disk
    redact.py          redaction of secrets in every result

May import `shared.config`, `shared.errors` and `shared.policy`.
"""

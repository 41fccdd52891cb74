"""Local HTTP pages (the approval page, the ask page, the model stand-in).

    guards.py      Host and origin checks, signed form tokens and session IDs (pure)
    local_http.py  serving an aiohttp app on loopback for an ``async with`` block

May import `shared.errors` only.
"""

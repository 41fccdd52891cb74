"""Local HTTP pages (the approval page, the ask page, the model stand-in).

    guards.py      Host and origin checks, signed form tokens and session IDs (pure)
    local_http.py  serving an aiohttp app on loopback for an ``async with`` block
    page_style.py  the one stylesheet of the local pages (``static/page.css``, package data),
                   so the approval page and the ask page look like one product

May import `shared.errors` only.
"""

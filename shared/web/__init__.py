"""Local HTTP pages (the approval page, the ask page, the model stand-in).

    guards.py        Host and origin checks, signed form tokens and session IDs (pure)
    local_http.py    serving an aiohttp app on loopback for an ``async with`` block
    forms.py         a posted form's text fields; a body that is no readable form has none
    page_style.py    the one stylesheet of the local pages (``static/page.css``, package data),
                     so the approval page and the ask page look like one product
    page_secret.py   a page's own secret: made at start, shown once or written to a file its
                     group may read, never in a URL
    throttle.py      the slow-down for wrong secrets, per address and for all (pure)
    loopback_peer.py the uid the kernel lists for a loopback TCP connection (``/proc/net/tcp``):
                     who knocked, recorded, never trusted

May import `shared.errors` and `shared.private_files` only.
"""

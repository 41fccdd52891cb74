"""Local HTTP pages (the approval page, the ask page, the model stand-in).

    guards.py        Host and origin checks, signed form tokens and session IDs (pure); the
                     two pages' loopback names, apart so no cookie of one reaches the other
    local_http.py    serving an aiohttp app on loopback for an ``async with`` block: a page
                     on both 127.0.0.1 and [::1] at its port, or not at all
    page_session.py  whose page session it is: bound to the uid that signed in, ended when
                     another uid uses it
    forms.py         a posted form's text fields; a body that is no readable form has none
    page_style.py    the one stylesheet of the local pages (``static/page.css``, package data),
                     so the approval page and the ask page look like one product
    page_secret.py   a page's own secret: made at start, shown once or written to a file its
                     group may read, never in a URL
    throttle.py      the slow-down for wrong secrets, per uid, and its cap on refusal rows (pure)
    loopback_peer.py the uid the kernel lists for a loopback TCP connection (``/proc/net/tcp``):
                     who knocked, and who holds a port a page could not bind
    model_host.py    whether the model's URL names this machine or a private network (pure
                     but for the resolver passed in)

Layers (an import contract holds them): ``page_session | local_http`` over ``loopback_peer``;
the others import nothing of this package.

May import `shared.errors` and `shared.private_files` only.
"""

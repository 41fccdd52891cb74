"""Local HTTP pages (the approval page, the ask page, the model stand-in).

Layers (each imports only those below it; an import contract holds them)::

    port_holder.py   who holds a local port `fleetwatch up` will listen on: the uid, and where
                     /proc shows it the process and another Fleetwatch's home (facts, no words)
    page_session.py  local_http.py
                     whose page session it is: bound to the uid that signed in, ended when
                     another uid uses it | serving an aiohttp app on loopback for an ``async
                     with`` block: a page on both 127.0.0.1 and [::1] at its port, or not at all
    loopback_peer.py  guards.py  forms.py  page_style.py  page_secret.py  throttle.py  model_host.py
                     the uid the kernel lists for a loopback TCP connection
                     (``/proc/net/tcp``): who knocked, and who holds a port a page could not
                     bind | Host and origin checks, signed form tokens and session IDs (pure);
                     the two pages' loopback names, apart so no cookie of one reaches the
                     other | a posted form's text fields; a body that is no readable form has
                     none | the one stylesheet of the local pages (``static/page.css``,
                     package data), so the approval page and the ask page look like one
                     product | a page's own secret: made at start, shown once or written to a
                     file its group may read, never in a URL | the slow-down for wrong
                     secrets, per uid, and its cap on refusal rows (pure) | whether the
                     model's URL names this machine or a private network (pure but for the
                     resolver passed in)

May import `shared.errors` and `shared.private_files` only.
"""

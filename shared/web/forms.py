"""Reading a page's posted form: every body a browser, a script or a fuzzer can send gives the
form's text fields or none, never an exception the page did not plan for.

`read_form(request)` -> ``{name: text}``. A body that is no readable form (a multipart body
without its boundary or with a broken one, a charset Python does not know, bytes its charset
cannot decode) has no fields: the page then refuses it as it refuses a form without its token
or its secret, with that one code. Only a body over the app's ``client_max_size`` raises
(``web.HTTPRequestEntityTooLarge``), so the page can answer ``body_too_large``.
"""

from __future__ import annotations

from aiohttp import web


async def read_form(request: web.Request) -> dict[str, str]:
    """The posted form's text fields (file parts are left out); ``{}`` for a body that is no
    readable form.

    Raises:
        web.HTTPRequestEntityTooLarge: the body is over the app's ``client_max_size``.
    """
    try:
        data = await request.post()
    except web.HTTPRequestEntityTooLarge:
        raise
    except (ValueError, LookupError):  # no or a broken boundary, an unknown or wrong charset
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)}

"""``fleetwatch login [--sandbox] [--paste] [--token-file F]`` and ``fleetwatch logout [--sandbox]``.

``login`` runs the MCP OAuth sign-in against ``FLEETWATCH_EPIPHAN_MCP_URL``: it prints the
address of the sign-in page (and opens a browser when there is a display), the person picks
the team there, and the browser comes back to a listener on 127.0.0.1. ``--paste`` is for a
headless box: open the address anywhere, then paste the address the browser was sent back to
(it fails to load; that is expected). ``--token-file`` stores a static bearer token instead.

``--sandbox`` signs in the executor's sandbox team. It is refused, and the new sign-in
forgotten, when the sandbox sees no devices or any device the normal sign-in sees. On a
server, run these as root: each slot is written for the service that owns its folder.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import sys
import time
from gettext import gettext as _
from pathlib import Path
from typing import TYPE_CHECKING

from services.ctl import add_language_option
from shared.config import home_given, load_settings
from shared.errors import Code
from shared.text.catalogue import N_, Moment, Words, placeholder, say_text, translations
from shared.text.command_line import printed_command
from shared.text.display import visible
from shared.text.languages import Language, language_of

if TYPE_CHECKING:
    from shared.epiphan.signin import ShowUrl


def add_commands(sub: argparse._SubParsersAction, epilog: str) -> None:
    """Add ``login`` and ``logout`` to the command tree."""
    login = sub.add_parser(
        "login",
        help=_("sign in to Epiphan Edge (the read sign-in; --sandbox: the executor's sandbox sign-in)"),
        description=_(
            "login runs the MCP OAuth sign-in against FLEETWATCH_EPIPHAN_MCP_URL: it prints the address of "
            "the sign-in page (and opens a browser when there is a display), the person picks the team there, "
            "and the browser comes back to a listener on 127.0.0.1. --paste is for a machine without a "
            "browser: open the address anywhere, then paste the address the browser was sent back to (it "
            "fails to load; that is expected). --token-file stores a static bearer token instead."
        ),
        epilog=epilog,
    )
    login.add_argument(
        "--sandbox", action="store_true", help=_("sign in the sandbox team (the only team changes run on)")
    )
    login.add_argument(
        "--paste", action="store_true", help=_("headless: paste the address the browser is sent back to")
    )
    login.add_argument(
        "--token-file",
        type=Path,
        metavar=placeholder("FILE"),
        help=_("store a static bearer token from FILE (mode 600; no refresh)"),
    )
    login.add_argument("--no-browser", action="store_true", help=_("only print the sign-in address"))
    add_language_option(login)
    login.set_defaults(run=login_command)
    logout_parser = sub.add_parser(
        "logout",
        help=_("revoke a sign-in at the server (when it offers revocation) and delete it"),
        epilog=epilog,
    )
    logout_parser.add_argument(
        "--sandbox", action="store_true", help=_("the sandbox sign-in instead of the read one")
    )
    add_language_option(logout_parser)
    logout_parser.set_defaults(run=logout_command)


def _say(text: str) -> None:
    print(text, flush=True)


def _language(args: argparse.Namespace) -> Language:
    chosen = getattr(args, "language", None) or load_settings().language
    return language_of(chosen)


def _words(language: Language, msgid: str, **params: object) -> str:
    return say_text(
        Words.of(msgid, **params), language, zone=load_settings().timezone, now=dt.datetime.now(dt.UTC)
    )


async def _paste(language: Language) -> str:
    from shared.epiphan.signin import SignInError

    _say(
        _words(
            language, N_("Paste the address your browser shows after you picked the team, then press Enter:")
        )
    )
    line = await asyncio.to_thread(sys.stdin.readline)
    if not line.strip():
        raise SignInError.said(Code.SIGN_IN_FAILED, N_("no address was pasted"))
    return line


def _opener(args: argparse.Namespace, team: str, language: Language) -> ShowUrl:
    async def show(url: str) -> None:
        _say(
            _words(
                language,
                N_("Open this address in a browser, sign in to Epiphan and pick the %(team)s team:"),
                team=team,
            )
            + f"\n\n  {url}\n"
        )
        has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
        if not (args.paste or args.no_browser) and has_display:
            import webbrowser

            await asyncio.to_thread(webbrowser.open, url)
        if not args.paste:
            _say(_words(language, N_("Waiting for the browser to come back…")))

    return show


async def login_command(args: argparse.Namespace) -> int:
    from shared.epiphan.signin import oauth_sign_in, static_sign_in, store_sign_in
    from shared.epiphan.signin_oauth import http_client
    from shared.policy.loader import load_policies

    settings = load_settings()
    language = _language(args)
    _policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
    which = _words(language, N_("sandbox sign-in") if args.sandbox else N_("read sign-in"))
    async with http_client() as http:
        if args.token_file is not None:
            sign_in = static_sign_in(args.token_file, settings.epiphan_mcp_url)
        else:
            team = _words(language, N_("sandbox") if args.sandbox else N_("normal (not the sandbox)"))
            sign_in = await oauth_sign_in(
                settings.epiphan_mcp_url,
                show_url=_opener(args, team, language),
                http=http,
                paste=(lambda: _paste(language)) if args.paste else None,
            )
        report = await store_sign_in(
            settings,
            sign_in,
            sandbox=args.sandbox,
            read_tools=tool_policy.read_tools,
            http=http,
            pins=tool_policy,
        )
    ends = (
        _words(
            language,
            N_("; the access token ends %(at)s"),
            at=Moment(time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(report.expires_at))),
        )
        if report.expires_at
        else ""
    )
    _say(
        _words(
            language,
            N_("Signed in (%(which)s, %(kind)s): team %(team)s, %(n)s devices%(ends)s. Stored in %(slot)s."),
            which=which,
            kind=translations()[language].pgettext("sign-in kind", report.kind),  # doctor's words
            team=report.team_id or _words(language, N_("unknown")),
            n=report.device_count,
            ends=ends,
            slot=str(report.slot),
        )
    )
    if report.tools_changed:
        _say(
            _words(
                language,
                N_(
                    "Epiphan's tool list differs from the reviewed policy (%(tools)s): such a "
                    "proposable tool is neither proposed nor run; see `%(command)s`."
                ),
                tools="; ".join(visible(t, 300) for t in report.tools_changed),
                command=printed_command("tools", "diff", language=language, home=home_given()),
            )
        )
    return 0


async def logout_command(args: argparse.Namespace) -> int:
    from shared.epiphan.signin import logout
    from shared.epiphan.signin_oauth import http_client

    settings = load_settings()
    language = _language(args)
    path = settings.sandbox_token_file if args.sandbox else settings.read_token_file
    async with http_client() as http:
        report = await logout(path, http=http)
    if not report.removed:
        said = N_("No sign-in in %(path)s: nothing to do.")
    elif report.revoked is True:
        said = N_("Revoked at the server and deleted %(path)s.")
    elif report.revoked is False:
        said = N_(
            "Deleted %(path)s, but the server did not confirm the revocation: "
            "the token may stay valid at the server until it expires."
        )
    else:
        said = N_("Deleted %(path)s (the server offers no revocation for this sign-in).")
    _say(_words(language, said, path=str(path)))
    return 0

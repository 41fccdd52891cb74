"""``fleetwatch up`` / ``down``: the three services (and, in demo mode, the lab) under supervisord."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import importlib
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from gettext import gettext as _
from pathlib import Path
from typing import TYPE_CHECKING

from services.ctl import CtlError, add_language_option, ports, supervise
from services.ctl.demo_env import demo_environment, demo_slack_member
from shared.config import Settings, home_given, load_settings
from shared.epiphan.slots import SignIn, write_slot
from shared.errors import Code
from shared.private_files import write_private
from shared.text import languages
from shared.text.catalogue import N_, Joined, Words, placeholder, say_text, translate
from shared.text.change_words import why
from shared.text.command_line import printed_command
from shared.text.display import visible
from shared.text.languages import LANGUAGES, Language
from shared.web.port_holder import taken
from shared.wire.approval import Acknowledge, GetStatus, LiftDenialPauses
from shared.wire.assistant import Answer, Ask, AssistantClient

if TYPE_CHECKING:
    from shared.policy.loader import Limits  # the policy stack loads only in demo, which reads it


async def lab_state(lab_url: str) -> dict:
    """``GET /_lab/state`` (loopback only): the teams with their demo tokens and device IDs."""
    # only the demo asks the lab: other commands start without the HTTP stack; imported in a
    # thread, so the services' start that runs meanwhile is not held up for its import
    httpx2 = await asyncio.to_thread(importlib.import_module, "httpx2")

    async with httpx2.AsyncClient(timeout=10) as client:
        response = await client.get(f"{lab_url}/_lab/state")
        response.raise_for_status()
        return response.json()


@dataclass(frozen=True, slots=True)
class Started:
    """What `start` left running: the `settings` it ran with (with the ports it chose), whether
    this home's supervisord was already running (`reused`) and which programs this run started
    in it then (`launched`), the ports it chose (`chosen`), the fence, supervisord's layout."""

    settings: Settings
    reused: bool
    launched: tuple[str, ...]
    chosen: Mapping[str, str]
    fence: supervise.FenceChoice
    layout: supervise.Layout


def up_command(args: argparse.Namespace, language: Language) -> str:
    """The command that starts this again on free ports (`up`'s or `demo`'s, with its options),
    as `again` prints it in `language`."""
    words = [getattr(args, "command", None) or "up"]
    if getattr(args, "capture", None) is not None:
        words += ["--capture", str(args.capture)]
    return again(*words, "--free-ports", language=language)


async def start(args: argparse.Namespace) -> Started:
    """Check every port, then start supervisord and the programs (module doc of `supervise`);
    a home whose supervisord runs is reused (its running programs kept, the others started).

    Raises:
        CtlError: ``socket_in_use`` naming each taken port and its holder before anything
            starts (without ``--free-ports``); ``config_invalid`` when the running lab serves
            another scenario or capture. A later failure first stops what this run started
            (supervisord and every program, or in a reused home the programs it launched),
            then raises `SuperviseError`, naming the program that did not start and its log's
            last line.
    """
    settings = load_settings()
    fence = supervise.choose_fence(settings, os.geteuid())
    demo = supervise.is_demo(settings)
    capture = getattr(args, "capture", None)
    if capture is not None and not demo:
        raise CtlError(
            Code.CONFIG_INVALID,
            Words.of(
                N_(
                    "--capture replays a capture on the embedded lab only; FLEETWATCH_EPIPHAN_MCP_URL points elsewhere"
                )
            ),
        )
    if capture is not None and not (capture / "manifest.json").is_file():
        raise CtlError(
            Code.CONFIG_INVALID,
            Words.of(N_("%(folder)s is not a capture folder (no manifest.json)"), folder=str(capture)),
        )
    layout = supervise.Layout.of(settings)
    reused = supervise.running_pid(settings) is not None
    running: frozenset[str] = frozenset()
    chosen: dict[str, str] = {}
    if reused:
        refuse_another_lab(layout, args.scenario, capture, language_of(args, settings))
        running = await supervise.running_programs(settings)
        chosen = supervise.chosen_ports(settings)
        settings = load_settings({**os.environ, **chosen})
    env = services_environment(settings, args, demo, chosen)
    wanted = [p for p in ports.ports_of(load_settings(env), demo=demo) if p.program not in running]
    found = taken(wanted)
    if found:
        if not getattr(args, "free_ports", False):
            language = language_of(args, settings)
            raise ports.refusal(found, command=up_command(args, language), language=language)
        chosen |= ports.port_settings(ports.free_ports(found), os.environ, settings.lab_port)
        settings = load_settings({**os.environ, **chosen})
        env = services_environment(settings, args, demo, chosen)
    launched: list[str] = []
    try:
        layout = await supervise.start_daemon(
            settings, env, scenario=args.scenario, server=fence.layout, capture=capture
        )
        if chosen:
            write_private(layout.ports, json.dumps(chosen).encode())
        await start_programs(settings, fence, layout, demo=demo, reused=reused, launched=launched)
    except BaseException:
        await undo(settings, reused=reused, launched=launched)
        raise
    return Started(settings, reused, tuple(launched), chosen, fence, layout)


def services_environment(
    settings: Settings, args: argparse.Namespace, demo: bool, chosen: Mapping[str, str]
) -> dict[str, str]:
    """The environment supervisord's programs start from: this process's with the `chosen`
    ports, and on the lab the demo's (`demo_environment`)."""
    base = {**os.environ, **chosen}
    return demo_environment(settings, args.scenario, language_of(args, settings), base) if demo else base


def refuse_another_lab(
    layout: supervise.Layout, scenario: str, capture: Path | None, language: Language = LANGUAGES[0]
) -> None:
    """Refuse (``config_invalid``) to reuse a running home whose lab serves another scenario or
    capture than `scenario` and `capture` (a replay must not answer with the demo's fleet)."""
    try:
        running = supervise.lab_command(layout.config.read_text())
    except OSError:
        return
    if running is None:
        return
    argv = shlex.split(running.removeprefix("command="))

    def option(name: str) -> str | None:
        return argv[argv.index(name) + 1] if name in argv[:-1] else None

    wanted = str(capture.resolve()) if capture is not None else None
    if option("--scenario") == scenario and option("--capture") == wanted:
        return
    raise CtlError(
        Code.CONFIG_INVALID,
        Words.of(
            N_(
                "Fleetwatch already runs here with another lab (scenario or capture): stop it first "
                "(%(command)s), or use another FLEETWATCH_HOME"
            ),
            command=again("down", language=language),
        ),
    )


async def start_programs(
    settings: Settings,
    fence: supervise.FenceChoice,
    layout: supervise.Layout,
    *,
    demo: bool,
    reused: bool,
    launched: list[str],
) -> None:
    """The programs in the fence's order (`services`) while, on the lab, the lab and its model
    start (supervisord starts them with itself; in a `reused` home they are started when they
    were stopped since) and the demo's sign-ins are placed; the assistant, whose watch reads
    the fleet as it starts, only once they are placed. Each program this call starts is added
    to `launched` (for `undo`)."""
    # root may not connect to every socket (each one's peer check would audit it): it looks at
    # the socket file instead
    probe = supervise.socket_answers if fence.layout is None else supervise.socket_ready

    def socket(name: str) -> Path:
        if fence.layout is None:
            return settings.runtime_dir / supervise.SOCKET_NAMES[name]
        return fence.layout.socket(name)

    async def lab_ready(_ready_file: Path) -> bool:
        return layout.lab_ready.exists()  # one stat: the lab writes it once it listens

    async def sign_ins() -> None:
        if demo:
            for name in ("lab", "model") if reused else ():
                if await supervise.launch(settings, name):
                    launched.append(name)
            await supervise.wait_ready(settings, "lab", layout.lab_ready, probe=lab_ready)
            url = json.loads(layout.lab_ready.read_text())["url"]
            place_demo_sign_ins(settings, url, await lab_state(url))

    async def services() -> None:
        # The fence's order, each ready before the next serves: approval_web's process starts
        # beside the executor's (its imports are most of a cold start) and waits, with
        # --after-executor, for executor.sock to answer before it opens anything; the
        # assistant starts once approval_web answers. supervisord starts the first two with
        # itself (autostart); `launch` starts them when they were stopped since.
        executor, approval_web, assistant = supervise.SERVICES
        waiting = [name for name in (executor, approval_web) if not await probe(socket(name))]
        for name in waiting:
            if await supervise.launch(settings, name):
                launched.append(name)
        try:
            for name in waiting:
                await supervise.wait_ready(settings, name, socket(name), probe=probe)
        except supervise.SuperviseError:
            if approval_web in waiting:  # not left waiting for an executor that did not start
                with contextlib.suppress(supervise.SuperviseError):
                    await supervise.rpc(settings, "supervisor.stopProcess", approval_web)
            raise
        await placed  # the assistant's watch reads the fleet at once: its sign-in first
        if not await probe(socket(assistant)):
            launched.append(assistant)
            await supervise.start_service(settings, assistant, socket(assistant), probe=probe)

    # The executor and approval_web need nothing the lab makes to start (the executor reads its
    # sign-in at each operation): they start while supervisord starts the lab and the scripted
    # model and the demo's sign-ins are placed. The assistant starts after: its watch's first
    # beat reads the fleet through the read slot at once (walk report item 1: a first read
    # before the slot was written failed ``no_sign_in``).
    placed = asyncio.ensure_future(sign_ins())
    await asyncio.gather(placed, services())


async def undo(settings: Settings, *, reused: bool, launched: Sequence[str]) -> None:
    """Stop what a failed `start` started: supervisord and everything under it when this run
    started it, else each program it `launched` in the running one (the others were running
    before and are left as they were). What cannot be stopped is left for ``down``."""
    with contextlib.suppress(supervise.SuperviseError):
        if not reused:
            await supervise.stop(settings)
            return
        for name in launched:
            with contextlib.suppress(supervise.SuperviseError):
                await supervise.rpc(settings, "supervisor.stopProcess", name)


async def up(args: argparse.Namespace) -> int:
    """Start everything; print where the approval page is and where its secret is."""
    started = await start(args)
    for line in up_lines(started, args):
        print(line)
    return 0


def up_lines(started: Started, args: argparse.Namespace) -> list[str]:
    """What `up` prints once everything runs, in the operator's language: whether it reused the
    running services, the ports it chose, then `started_words`."""
    settings = started.settings
    lang = language_of(args, settings)
    out = []
    if started.reused:
        out.append(
            Words.of(
                N_("Fleetwatch was already running here: the running services were reused, not restarted.")
            )
            if not started.launched
            else Words.of(
                N_(
                    "Fleetwatch was already running here: reused it, and started what was not running: %(programs)s."
                ),
                programs=Joined(", ", tuple(Words.of(supervise.PROGRAM_WORDS[p]) for p in started.launched)),
            )
        )
    if started.chosen:
        out.append(
            Words.of(
                N_("Ports in use elsewhere were replaced by free ones: %(ports)s."),
                ports=" ".join(f"{k}={v}" for k, v in sorted(started.chosen.items())),
            )
        )
    demo = supervise.is_demo(settings)
    out += started_words(settings, started.fence, demo=demo, logs=started.layout.logs, language=lang)
    now = dt.datetime.now(dt.UTC)
    return [say_text(words, lang, zone=settings.timezone, now=now) for words in out]


def started_words(
    settings: Settings, fence: supervise.FenceChoice, *, demo: bool, logs: Path, language: Language = "en"
) -> list[Words]:
    """What `up` says once everything runs, line by line: on the lab or not, the fence's level,
    each page's address and where its secret is, the wall screen, the lab's posts (`demo`),
    the `logs` folder. The lab's Slack example asks as a member who speaks `language`
    (`demo_slack_member`)."""
    out: list[Words] = []
    out.append(
        Words.of(N_("Fleetwatch is up on the lab (a simulated Epiphan Edge)."))
        if demo
        else Words.of(N_("Fleetwatch is up."))
    )
    if not demo:
        out.append(
            Words.of(
                N_(
                    "Not on the lab: FLEETWATCH_EPIPHAN_MCP_URL is %(url)s, not the lab's %(lab)s, so the lab is "
                    "not started and Fleetwatch uses the sign-ins from 'fleetwatch login'."
                ),
                url=visible(settings.epiphan_mcp_url, 300),
                lab=f"http://127.0.0.1:{settings.lab_port}/mcp",
            )
        )
    out.append(Words.of(N_("Fence level: %(fence)s."), fence=fence.words()))
    readers = fence.layout
    if demo or settings.fence_configured:
        out.append(Words.of(N_("Approval page: %(url)s"), url=f"http://127.0.0.1:{settings.approve_port}/"))
        out.append(secret_words(fence.approve_secret_file(settings), readers.approvers if readers else None))
    else:
        out.append(
            Words.of(
                N_(
                    "The fence is not configured (FLEETWATCH_WRITE_DEVICE_IDS / FLEETWATCH_WRITE_TEAM_ID): the "
                    "approval page is not started and nothing can be proposed. Reads and answers work."
                )
            )
        )
    out.append(Words.of(N_("Ask page: %(url)s"), url=f"http://localhost:{settings.ask_port}/"))
    out.append(secret_words(fence.ask_secret_file(settings), readers.operators if readers else None))
    out.append(
        Words.of(
            N_("Wall screen (read-only, no secret): %(url)s"),
            url=f"http://localhost:{settings.ask_port}/wall",
        )
    )
    if demo:
        out.append(
            Words.of(
                N_("The watch's Slack and Teams posts, as the lab received them: %(url)s"),
                url=f"http://127.0.0.1:{settings.lab_port}/_lab/notices",
            )
        )
        if (
            settings.slack_app_token is None
            and settings.slack_bot_token is None
            and settings.slack_channel is None
        ):
            out.append(
                Words.of(
                    N_(
                        "Ask from the lab's Slack (read-only): curl -s -X POST %(url)s/_lab/slack/ask -d "
                        '\'{"user": "%(user)s", "channel": "%(channel)s", "text": "what is offline?"}\''
                        " (the answer joins the notices above)"
                    ),
                    url=f"http://127.0.0.1:{settings.lab_port}",
                    user=(member := demo_slack_member(language)),
                    channel="D" + member[1:],  # the member's direct message (the lab's conversations.open)
                )
            )
    out.append(Words.of(N_("Logs: %(path)s"), path=str(logs)))
    return out


def language_of(args: argparse.Namespace, settings: Settings) -> Language:
    """``--language``, else `FLEETWATCH_LANGUAGE`."""
    chosen = getattr(args, "language", None) or settings.language
    return languages.language_of(chosen)


def secret_words(path: Path, group: str | None) -> Words:
    """Where a page's secret is, and which group may read it (None: only this user)."""
    if group:
        return Words.of(
            N_(
                "Its secret is in %(path)s (asked once per browser session; the group %(group)s may read it)."
            ),
            path=str(path),
            group=group,
        )
    return Words.of(N_("Its secret is in %(path)s (asked once per browser session)."), path=str(path))


def place_demo_sign_ins(settings: Settings, lab_url: str, state: dict) -> None:
    """Write the lab's demo tokens: the normal team in the read slot, the sandbox team in the
    sandbox slot."""
    teams = {team["name"]: team for team in state["teams"]}
    for slot, name in ((settings.read_token_file, "normal"), (settings.sandbox_token_file, "sandbox")):
        team = teams[name]
        write_slot(
            slot,
            SignIn(access_token=team["token"], server=f"{lab_url}/mcp", team_id=team["team_id"], kind="lab"),
        )


async def down(args: argparse.Namespace) -> int:
    """Stop supervisord and everything under it; wait until it has exited."""
    settings = load_settings()
    stopped = await supervise.stop(settings)
    server = supervise.ServerLayout.of(settings)
    if stopped and server is not None and os.geteuid() == 0:
        supervise.clear_server(server)  # as systemd removes a stopped unit's runtime folder
    said = N_("Fleetwatch stopped.") if stopped else N_("Fleetwatch was not running.")
    print(translate(language_of(args, settings), said))
    return 0


DEMO_QUESTION = N_(
    "Which rooms need attention before their next class? Start any recording that should be running."
)
"""The demo's question (the catalogue's message: asked in the operator's language)."""


WAITING_STATES = frozenset({"waiting_for_approval", "already_waiting"})
"""Proposal line states that leave a card on the approval page."""

ADMIN_SECONDS = 10.0
"""Bound on each approval.sock request the demo makes to clean the queue."""
ASK_SECONDS = 180.0
"""Bound on the demo's question (longer than the assistant's own wall budget)."""


async def clean_queue(settings: Settings, language: Language) -> list[str]:
    """The demo starts from a clean queue: on the lab, whose world starts afresh with every
    ``up``, the denial pauses and the changes left unsettled by an earlier demo refer to a world
    that is gone. Each is lifted or acknowledged through approval.sock (audited, actor
    ``demo``), and said; the lines to print. Raises `CallError`."""
    from services.ctl.admin_words import view_for
    from services.ctl.commands_admin import approval_client, pause_words

    view = view_for(language, language, settings.timezone)
    client = approval_client(timeout_seconds=ADMIN_SECONDS)
    lifted = await client.call(LiftDenialPauses(actor="demo"))
    said = [
        view.text(
            N_("Lifted a denial pause left from an earlier demo: %(pause)s."),
            pause=pause_words(view, p, lifted=True),
        )
        for p in lifted.pauses
    ]
    for change in (await client.call(GetStatus())).unsettled:
        await client.call(Acknowledge(proposal_id=change.proposal_id, actor="demo"))
        said.append(
            view.text(
                N_(
                    "Acknowledged %(id)s, a change left unsettled by an earlier demo (the lab's rooms start afresh)."
                ),
                id=visible(change.proposal_id, 40),
            )
        )
    return said


def no_card_reason(answer: Answer, limits: Limits, language: Language) -> str | None:
    """Why the answer left no card on the page, in words of `language` (the policy's `limits`
    fill in the numbers); None when it left one."""
    if any(line.state in WAITING_STATES for line in answer.proposals):
        return None
    if answer.refusals:
        code = answer.refusals[-1].code
        return f"{why(code, language, max_pending=limits.max_pending, per_hour=limits.per_hour)}."
    if answer.proposals:
        return translate(language, N_("the proposal is no longer waiting for approval (see its line above)."))
    if answer.code is not None:
        return f"{why(answer.code, language)}."
    return translate(language, N_("the assistant proposed no change (see its answer above)."))


async def demo(args: argparse.Namespace) -> int:
    """The main job on the lab: everything up, a clean queue, the fleet, a question answered by
    the assistant (the lab's demo model behind the real SDK, or the real model with a key), a
    proposal waiting on the approval page, and what to do next; when no card was made, why."""
    from services.ctl.commands_ask import render_answer
    from services.ctl.commands_fleet import read_snapshot, sandbox_rooms, show

    settings = load_settings()
    if not supervise.is_demo(settings):
        raise CtlError(
            Code.CONFIG_INVALID,
            Words.of(
                N_(
                    "demo runs on the embedded lab only; FLEETWATCH_EPIPHAN_MCP_URL points elsewhere "
                    "(use 'fleetwatch up')"
                )
            ),
        )
    started = await start(args)
    for line in up_lines(started, args):
        print(line)
    settings = started.settings
    from shared.policy.loader import load_policies

    policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
    print()
    lang = language_of(args, settings)

    def say(msgid: str, **params: object) -> str:
        return translate(lang, msgid) % params

    show(await read_snapshot(settings, tool_policy), policy, as_json=False, language=lang)
    print()
    print(await sandbox_rooms(settings, lang))
    cleaned = await clean_queue(settings, lang)
    if cleaned:
        print()
        print("\n".join(cleaned))
    question = translate(lang, DEMO_QUESTION)
    print()
    print(say(N_("Asking the assistant: %(question)s"), question=question))
    print()
    answer = await AssistantClient(settings.assistant_socket).call(
        Ask(question=question, language=lang), timeout_seconds=ASK_SECONDS
    )
    print(render_answer(answer))
    print()

    def again_here(*words: str) -> str:
        return again(*words, language=lang)

    reason = no_card_reason(answer, policy.limits, lang)
    if reason is None:
        secret_file = supervise.choose_fence(settings, os.geteuid()).approve_secret_file(settings)
        language = "" if lang == LANGUAGES[0] else f"?lang={lang}"
        print(
            say(
                N_(
                    "Next: open %(url)s , enter the secret from\n      %(file)s , and approve or deny the card."
                ),
                url=f"http://127.0.0.1:{settings.approve_port}/{language}",
                file=secret_file,
            )
        )
        shown = answer.proposals[0].proposal_id if answer.proposals else None
        print(
            say(
                N_("Then: %(command)s   (its outcome and verification)"),
                command=again_here("pending", "show", shown or say(N_("<proposal ID above>"))),
            )
        )
    else:
        print(say(N_("No card was made: %(reason)s"), reason=reason))
        print(
            say(
                N_("See: %(command)s   (the queue, denial pauses, changes to settle)"),
                command=again_here("status"),
            )
        )
    print(f"      {again_here('pending', 'list')}")
    print(f"      {again_here('audit', 'tail')}")
    held = await digest_held(settings, lang)
    if held is not None:
        print(held)
    print(say(N_("Stop: %(command)s"), command=again_here("down")))
    return 0


async def digest_held(settings: Settings, language: Language) -> str | None:
    """When the watch holds its digests for quiet hours now (its own `WatchStatus`), the line
    saying so: the first digest waits until they end; readiness and notices still post. None
    outside quiet hours, or when the watch does not answer (``status`` says why)."""
    from services.ctl.admin_words import view_for
    from services.ctl.commands_watch import assistant_client
    from shared.text.catalogue import Moment
    from shared.wire.assistant import GetWatchStatus
    from shared.wire.client import CallError

    try:
        status = await assistant_client(settings).call(GetWatchStatus())
    except CallError:
        return None
    if status.held_until is None:
        return None
    return view_for(language, language, settings.timezone).text(
        N_(
            "Quiet hours now: the watch's first digest is held until %(at)s (quiet hours in %(zone)s); "
            "readiness and the notice of the waiting change still post (%(url)s)."
        ),
        at=Moment(status.held_until),
        zone=visible(status.timezone, 64),
        url=f"http://127.0.0.1:{settings.lab_port}/_lab/notices",
    )


def again(*words: str, language: Language) -> str:
    """A command to run next, as the operator copies it into a new terminal: this install's
    script (`shared.text.command_line.this_program`), in `language`, with this home when it is not the default
    (`shared.text.command_line.printed_command`)."""
    return printed_command(*words, language=language, home=home_given())


def add_commands(sub, epilog: str) -> None:
    """Add ``up``, ``down`` and ``demo`` to the ``fleetwatch`` command tree."""
    said = _(
        "start the services under supervisord (and, on the embedded lab, the lab and its scripted model)"
    )
    parser = sub.add_parser("up", help=said, description=said, epilog=epilog)
    add_start_options(parser, _("lab scenario in demo mode (default: campus)"))
    add_language_option(parser)
    parser.set_defaults(run=up)
    said = _("stop everything 'fleetwatch up' started, and wait until it has")
    parser = sub.add_parser("down", help=said, description=said, epilog=epilog)
    add_language_option(parser)
    parser.set_defaults(run=down)
    said = _(
        "the main job on the embedded lab: start everything, show the fleet, ask the assistant, leave a proposal on the page"
    )
    parser = sub.add_parser("demo", help=said, description=said, epilog=epilog)
    add_start_options(parser, _("lab scenario (default: campus)"))
    add_language_option(parser, _("ask and answer in English or Spanish (default: FLEETWATCH_LANGUAGE)"))
    parser.set_defaults(run=demo)


def add_start_options(parser, scenario_help: str) -> None:
    """``--scenario NAME`` (said by `scenario_help`), ``--capture DIR`` and ``--free-ports``,
    shared by ``up`` and ``demo``."""
    parser.add_argument("--scenario", default="campus", metavar=placeholder("SCENARIO"), help=scenario_help)
    parser.add_argument(
        "--capture",
        type=Path,
        metavar=placeholder("DIR"),
        help=_(
            "the lab serves this 'fleetwatch capture' folder as the read sign-in's team (a replay with no account)"
        ),
    )
    parser.add_argument(
        "--free-ports",
        action="store_true",
        help=_(
            "use free ports instead of those in use (beside a running demo); the pages' addresses are printed"
        ),
    )

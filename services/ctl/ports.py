"""The ports `fleetwatch up` (and ``demo``) will listen on, checked before anything starts.

Each program of the configuration that listens on TCP has one setting for its port
(`ports_of`): the lab and its scripted model on 127.0.0.1 (on the embedded lab only), the
approval page (when the fence is configured) and the ask page with the wall, each on 127.0.0.1
**and** [::1] (`shared.web.local_http.bind_loopback`). A taken one is said with its holder
(`shared.web.port_holder`); `refusal` is the one error `up` raises then, before supervisord or
any program starts. `free_ports` chooses free ones instead (``up --free-ports``: a replay
beside a running demo).

A program this home's supervisord already runs holds its own port: `up` checks only the ports
of the programs it is about to start.
"""

from __future__ import annotations

import pwd
import shlex
from collections.abc import Iterable, Mapping, Sequence

from services.ctl import CtlError
from services.ctl.supervise import PROGRAM_WORDS
from shared.config import Settings
from shared.errors import Code
from shared.text.catalogue import C_, N_, Joined, Words
from shared.text.command_line import printed_command
from shared.text.display import visible
from shared.text.languages import LANGUAGES, Language
from shared.web.local_http import bind_loopback
from shared.web.port_holder import Holder, Port, Taken, taken

PORT_WORD = Words.in_context("placeholder", C_("placeholder", "PORT"))
"""The placeholder for a port number in a printed setting (``FLEETWATCH_LAB_PORT=PUERTO``)."""


def ports_of(settings: Settings, *, demo: bool) -> list[Port]:
    """The ports `up` will listen on with `settings` (those of the services' own environment:
    the demo's fence counts); port 0 (any free port) is never taken and is left out."""
    ports = []
    if demo:
        ports.append(Port("lab", "FLEETWATCH_LAB_PORT", settings.lab_port, False))
        ports.append(Port("model", "FLEETWATCH_MODEL_STANDIN_PORT", settings.model_standin_port, False))
    if settings.fence_configured:
        ports.append(Port("approval_web", "FLEETWATCH_APPROVE_PORT", settings.approve_port, True))
    ports.append(Port("assistant", "FLEETWATCH_ASK_PORT", settings.ask_port, True))
    return [port for port in ports if port.number != 0]


def account(uid: int) -> str:
    """``uid 0 (root)``, or ``uid 4242`` for a uid with no account (as it is in every language)."""
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def holder_words(holder: Holder) -> Words:
    """`holder` in words: another Fleetwatch's program and its home (or, its home unseen, that
    it is another Fleetwatch's), a process by its name and account, an account, or an unknown
    process. Never a command line: another program's arguments can carry a key."""
    if holder.program is not None and holder.home is not None:
        return Words.of(
            N_("%(program)s of the Fleetwatch at FLEETWATCH_HOME=%(home)s (process %(pid)s)"),
            program=Words.of(PROGRAM_WORDS[holder.program]),
            home=visible(holder.home, 300),
            pid=holder.pid,
        )
    owner = account(holder.uid) if holder.uid is not None else "?"
    if holder.program is not None:
        return Words.of(
            N_("%(program)s of another Fleetwatch (process %(pid)s of %(account)s)"),
            program=Words.of(PROGRAM_WORDS[holder.program]),
            pid=holder.pid,
            account=owner,
        )
    if holder.pid is not None:
        return Words.of(
            N_("process %(pid)s (%(name)s) of %(account)s"),
            pid=holder.pid,
            name=visible(holder.name or "?", 40),
            account=owner,
        )
    if holder.uid is not None:
        return Words.of(N_("a process of %(account)s"), account=owner)
    return Words.of(N_("an unknown process"))


def taken_words(
    found: Sequence[Taken], *, other: Joined, command: str, language: Language = LANGUAGES[0]
) -> Words:
    """Each port in `found` on a line of its own, named with how it is set, the loopback and its
    holder; then, on the last line, that nothing was started and what to do: stop another
    Fleetwatch holding one (the command that does, in `language`:
    `shared.text.command_line.printed_command`), give another port (`other`:
    ``FLEETWATCH_LAB_PORT=PORT``, ``--port PORT``, the placeholder in the reader's language), or
    run `command` (the same start on free ports)."""
    said = Joined(
        ";\n",
        tuple(
            Words.of(
                N_("port %(port)s (%(program)s, %(setting)s) is in use on %(address)s by %(holder)s"),
                port=t.port.number,
                program=Words.of(PROGRAM_WORDS[t.port.program]),
                setting=t.port.setting,
                address=t.named,
                holder=holder_words(t.holder),
            )
            for t in found
        ),
    )
    homes = sorted({t.holder.home for t in found if t.holder.program and t.holder.home})
    if homes:
        return Words.of(
            N_(
                "%(taken)s.\nNothing was started. To use that Fleetwatch, give your commands its "
                "FLEETWATCH_HOME; or stop it (%(stop)s), give another port (%(other)s), or start beside it "
                "on free ports: %(command)s"
            ),
            taken=said,
            stop="; ".join(printed_command("down", language=language, home=home) for home in homes),
            other=other,
            command=visible(command, 900),
        )
    return Words.of(
        N_(
            "%(taken)s.\nNothing was started. Free it, give another port (%(other)s), or start on free "
            "ports: %(command)s"
        ),
        taken=said,
        other=other,
        command=visible(command, 900),
    )


def refusal(found: Sequence[Taken], *, command: str, language: Language = LANGUAGES[0]) -> CtlError:
    """`up`'s refusal (``socket_in_use``): `taken_words`, with the settings that give another port
    and `command`, the same start on free ports; the commands it prints in `language`."""
    other = Joined(", ", tuple(Joined("=", (t.port.setting, PORT_WORD)) for t in found))
    return CtlError(
        Code.SOCKET_IN_USE, taken_words(found, other=other, command=command, language=language), lines=True
    )


def free_ports(found: Iterable[Taken]) -> dict[str, str]:
    """A free port for each port in `found`, as the settings that name them
    (``{"FLEETWATCH_LAB_PORT": "39121"}``): free on both loopbacks when chosen (another program
    may take one before it listens: that program then says so)."""
    chosen = {}
    for t in found:
        sockets = bind_loopback(0)
        try:
            chosen[t.port.setting] = str(sockets[0].getsockname()[1])
        finally:
            for sock in sockets:
                sock.close()
    return chosen


def port_settings(chosen: Mapping[str, str], env: Mapping[str, str], lab_port: int) -> dict[str, str]:
    """`chosen` with ``FLEETWATCH_EPIPHAN_MCP_URL`` following a moved lab when `env` named the
    lab's URL at `lab_port` (the default follows by itself)."""
    out = dict(chosen)
    lab = chosen.get("FLEETWATCH_LAB_PORT")
    if lab is not None and env.get("FLEETWATCH_EPIPHAN_MCP_URL", "").rstrip("/") == (
        f"http://127.0.0.1:{lab_port}/mcp"
    ):
        out["FLEETWATCH_EPIPHAN_MCP_URL"] = f"http://127.0.0.1:{lab}/mcp"
    return out


def lab_refusal(argv: Sequence[str]) -> CtlError | None:
    """``fleetwatch lab ARGV``'s ports checked before the lab starts: its ``--port`` and, with
    ``--model-profile``, its ``--model-port`` (127.0.0.1 each); the refusal naming each taken one
    and its holder, with the same command on a free port (``--port 0``), or None when all are
    free (a bad option is left for the lab's own parser to say)."""
    from services.lab.__main__ import build_parser  # the lab's own options, read as it reads them

    args, _ = build_parser().parse_known_args(list(argv))
    wanted = [Port("lab", "--port", args.port, False)]
    if args.model_profile is not None:
        wanted.append(Port("model", "--model-port", args.model_port, False))
    found = taken(p for p in wanted if p.number != 0)
    if not found:
        return None
    kept = [a for i, a in enumerate(argv) if a != "--port" and (i == 0 or argv[i - 1] != "--port")]
    kept = [a for a in kept if not a.startswith("--port=")]
    command = " ".join(["fleetwatch", "lab", *(shlex.quote(a) for a in kept), "--port", "0"])
    other = Joined(", ", tuple(Joined(" ", (t.port.setting, PORT_WORD)) for t in found))
    return CtlError(Code.SOCKET_IN_USE, taken_words(found, other=other, command=command), lines=True)

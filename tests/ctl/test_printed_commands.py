"""Issue 28, loose ends of items 1, 3 and 5: doctor checks the ports ``up --free-ports`` chose;
every command a CLI line prints keeps the reader's language and home (one helper,
`shared.text.command_line.printed_command`); every code-built CLI line that shows a room or
channel name quotes it (`shared.text.changes.quoted_name`), so a hostile name cannot pass
for the state that follows it."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import msgspec
import pytest

from services.ctl import ports, supervise
from services.ctl.admin_words import View, render_status, render_writable
from services.ctl.commands_admin import pause_words
from services.ctl.commands_doctor import running_settings
from services.ctl.doctor import (
    Level,
    LiveProof,
    check_fence,
    check_live,
    check_ports,
    check_queue,
    check_sign_in,
    check_state_modes,
    render,
)
from shared.config import load_settings
from shared.text.catalogue import say_text
from shared.text.command_line import printed_command
from shared.web.port_holder import Holder, Port, Taken
from shared.wire.approval import Status
from shared.wire.executor import WritableChannel, WritableDevice, WritableDevices
from tests.ctl.test_doctor import settling_status
from tests.procs import base_env

HOSTILE = "ENG 105 — approved and verified"
"""A room or channel name that reads as a state when it is not quoted."""
QUOTES = {"en": ("“", "”"), "es": ("«", "»")}
NOW = dt.datetime(2026, 9, 16, 12, 0, tzinfo=dt.UTC)
HOME = "/srv/fw room"


def status(name: str = HOSTILE) -> Status:
    """`tests.ctl.test_doctor.settling_status` with its pause and its change to settle in `name`."""
    settling = settling_status()
    return msgspec.structs.replace(
        settling,
        pauses=tuple(msgspec.structs.replace(p, target_name=name) for p in settling.pauses),
        unsettled=tuple(msgspec.structs.replace(u, target_names=(name,)) for u in settling.unsettled),
    )


def writable(name: str = HOSTILE) -> WritableDevices:
    device = WritableDevice(
        device_id="29088800004",
        name=name,
        model="pearl-2",
        online=True,
        channels=(WritableChannel(channel_id="1", name=name, recording=False),),
    )
    return WritableDevices(devices=(device,), read_at="2026-09-16T11:59:00.000Z")


def unquoted(text: str, language: str) -> list[str]:
    """Each line of `text` where `HOSTILE` appears without the reader's quote marks around it."""
    start, end = QUOTES[language]
    return [
        line
        for line in text.splitlines()
        for found in re.finditer(re.escape(HOSTILE), line)
        if line[found.start() - 1 : found.start()] != start or line[found.end() : found.end() + 1] != end
    ]


@pytest.mark.parametrize("language", ["en", "es"])
def test_every_cli_line_with_a_room_or_channel_name_quotes_it(language: str) -> None:
    view = View(language, ZoneInfo("America/Mexico_City"), NOW, home=HOME)
    command = functools.partial(printed_command, language=language, home=HOME)
    said = {
        "status": render_status(view, status()),
        "status stopped": render_status(view, status(), stopped=True),
        "pause": pause_words(view, status().pauses[0]),
        "lifted pause": pause_words(view, status().pauses[0], lifted=True),
        "fleet": render_writable(view, writable(), ()),
        "doctor": render(check_queue(status(), None, command), language=language),
    }
    for where, text in said.items():
        assert HOSTILE in text, (where, text)
        assert unquoted(text, language) == [], where


@pytest.mark.parametrize("language", ["en", "es"])
def test_doctors_commands_keep_the_language_and_the_home(language: str) -> None:
    command = functools.partial(printed_command, language=language, home=HOME)
    tail = " --language es" if language == "es" else ""
    queue = render(check_queue(status("Sandbox Classroom"), None, command), language=language)
    assert (
        f"FLEETWATCH_HOME='/srv/fw room' fleetwatch resume --denials batch_recording 29088800004{tail}"
        in queue
    )
    assert f"FLEETWATCH_HOME='/srv/fw room' fleetwatch acknowledge p-0123456789ab{tail}" in queue
    now = NOW.timestamp()
    missing = render(check_sign_in("sandbox", {"present": False}, now, command), language=language)
    assert f"FLEETWATCH_HOME='/srv/fw room' fleetwatch login --sandbox{tail}`" in missing
    refused = LiveProof(via="here", outcome="refused")
    live = render(check_live("read", refused, now, command), language=language)
    assert f"FLEETWATCH_HOME='/srv/fw room' fleetwatch login{tail}`" in live


def test_doctor_checks_the_ports_up_free_ports_chose_while_the_services_run(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    settings = load_settings(env)
    layout = supervise.Layout.of(settings)
    layout.run.mkdir(parents=True, exist_ok=True)
    layout.ports.write_text(json.dumps({"FLEETWATCH_ASK_PORT": "39121", "FLEETWATCH_APPROVE_PORT": "39122"}))
    assert running_settings(env).ask_port == settings.ask_port  # no supervisord: the terminal's own
    layout.pidfile.write_text(str(os.getpid()))  # a live process stands for this home's supervisord
    chosen = running_settings(env)
    assert (chosen.ask_port, chosen.approve_port) == (39121, 39122)
    checks = {c.name: c for c in check_ports(chosen, [("127.0.0.1", 39121), ("::1", 39122)])}
    assert checks["port ask page"].level is Level.OK and "39121" in checks["port ask page"].message
    assert checks["port approval page"].level is Level.OK and "39122" in checks["port approval page"].message


@pytest.mark.parametrize("language", ["en", "es"])
def test_the_port_refusals_print_their_commands_with_the_language_and_the_home(language: str) -> None:
    holder = Holder(pid=4242, uid=0, name="fleetwatch", program="assistant", home=HOME)
    found = [Taken(Port("assistant", "FLEETWATCH_ASK_PORT", 8780, True), "127.0.0.1", holder)]
    refusal = ports.refusal(found, command="fleetwatch up --free-ports", language=language)
    assert refusal.words is not None
    said = say_text(refusal.words, language, zone=dt.UTC, now=NOW)
    tail = " --language es" if language == "es" else ""
    assert f"FLEETWATCH_HOME='/srv/fw room' fleetwatch down{tail}" in said


@pytest.mark.parametrize("language", ["en", "es"])
def test_doctors_other_lines_print_their_commands_with_the_language_and_the_home(
    language: str, tmp_path: Path
) -> None:
    command = functools.partial(printed_command, language=language, home=HOME)
    tail = " --language es" if language == "es" else ""
    modes = render(check_state_modes((("/x", "0755", "0700"),), None, command), language=language)
    assert f"`FLEETWATCH_HOME='/srv/fw room' fleetwatch up{tail}`" in modes
    no_fence_here = load_settings(base_env(tmp_path))
    fenced = msgspec.structs.replace(status(), fence_configured=True)
    fence = render(check_fence(no_fence_here, fenced, command), language=language)
    assert f"FLEETWATCH_HOME='/srv/fw room' fleetwatch demo{tail}" in fence, fence

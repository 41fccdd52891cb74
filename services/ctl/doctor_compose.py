"""``fleetwatch doctor --compose FILE``: do the uids in the settings match the compose file's users?

In containers the fence rests on each service's fixed numeric ``user:`` and on the peer
allowlists each service is given (``FLEETWATCH_EXECUTOR_UIDS`` and the rest, docs/container.md):
the executor must admit approval_web's user and no other, approval_web must know the assistant's
user, the assistant must admit its own. A compose file whose users and allowlists disagree
leaves a service refused by the one it needs, or admits a user it should not. `check_compose` is
pure: the parsed file and the allowlists this ``fleetwatch`` was given in (None: not set) in,
`Check` lines out; the command reads the file.

Rules (each broken one a FAIL naming the service and the setting):
- executor, approval_web and assistant each have a fixed numeric ``user:`` (``uid`` or
  ``uid:gid``), neither 0 nor the overflow id 65534, all three different;
- the executor's ``FLEETWATCH_EXECUTOR_UIDS`` is approval_web's uid, exactly;
- approval_web's ``FLEETWATCH_ASSISTANT_UIDS`` is the assistant's uid, exactly;
- the assistant's ``FLEETWATCH_ASSISTANT_UIDS`` holds the assistant's uid;
- no ``FLEETWATCH_*_UIDS`` or ``*_GIDS`` in the file names 65534 (it is never admitted);
- each of those allowlists given to this ``fleetwatch`` equals the file's for the service that
  reads it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from services.ctl.doctor import Check, Level
from shared.text.catalogue import C_, N_, Words
from shared.text.display import visible
from shared.web.loopback_peer import OVERFLOW_ID

NAME: Final = C_("doctor check", "compose users")
SERVICES: Final = ("executor", "approval_web", "assistant")
EXPECTED: Final = (
    ("executor", "FLEETWATCH_EXECUTOR_UIDS", "approval_web", True),
    ("approval_web", "FLEETWATCH_ASSISTANT_UIDS", "assistant", True),
    ("assistant", "FLEETWATCH_ASSISTANT_UIDS", "assistant", False),
)
"""(service, setting, whose uid it must name, exactly that one)."""
READERS: Final = {
    "FLEETWATCH_EXECUTOR_UIDS": "executor",
    "FLEETWATCH_APPROVAL_UIDS": "approval_web",
    "FLEETWATCH_ASSISTANT_UIDS": "approval_web",
}
"""Which service's value an allowlist given to ``fleetwatch`` is compared with (the operators'
command reaches executor.sock and approval.sock as that service's clients do)."""
ALLOWLIST: Final = re.compile(r"FLEETWATCH_(EXECUTOR|APPROVAL|ASSISTANT)_(UIDS|GIDS)")
VARIABLE: Final = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def _check(level: Level, msgid: str, **params: object) -> Check:
    return Check(NAME, level, Words.of(msgid, **params))


def _expand(value: str, env: Mapping[str, str]) -> str:
    """``${NAME}`` and ``${NAME:-default}`` as compose fills them in from `env`."""
    return VARIABLE.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)


def _environment(service: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        raw = dict(str(item).partition("=")[::2] for item in raw)
    return {str(k): _expand(str(v if v is not None else ""), env) for k, v in raw.items()}


def parse_ids(raw: str) -> frozenset[int] | None:
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        return None
    return frozenset(int(p) for p in parts)


def _uid(service: Mapping[str, Any], env: Mapping[str, str]) -> int | None:
    user = _expand(str(service.get("user", "")), env).partition(":")[0]
    return int(user) if user.isdigit() else None


def _show(ids: frozenset[int] | None) -> str:
    return ",".join(str(i) for i in sorted(ids)) if ids else "-"


def check_compose(
    compose: Any,
    given: Mapping[str, frozenset[int] | None],
    *,
    env: Mapping[str, str],
) -> list[Check]:
    """The compose file `compose` (as YAML parsed it) against itself and against the
    allowlists `given` to this ``fleetwatch`` (setting name -> ids, None: not set); `env` fills
    in ``${...}`` (the command gives none: each variable takes the file's default). One OK
    line, or a FAIL per mismatch."""
    services = compose.get("services") if isinstance(compose, Mapping) else None
    if not isinstance(services, Mapping):
        return [_check(Level.FAIL, N_("not a compose file: it has no services"))]
    fails: list[Check] = []

    def fail(msgid: str, **params: object) -> None:
        fails.append(_check(Level.FAIL, msgid, **params))

    uids: dict[str, int | None] = {}
    settings: dict[str, dict[str, str]] = {}
    for name in SERVICES:
        service = services.get(name)
        if not isinstance(service, Mapping):
            fail(N_("the compose file has no %(service)s service"), service=name)
            continue
        uids[name] = uid = _uid(service, env)
        settings[name] = _environment(service, env)
        if uid is None or uid in (0, OVERFLOW_ID):
            fail(
                N_("%(service)s's user: is %(user)s: give it a fixed numeric uid, neither 0 nor 65534"),
                service=name,
                user=visible(str(service.get("user", "-")), 40),
            )
    known = [u for u in uids.values() if u is not None]
    if len(set(known)) != len(known):
        fail(N_("two services share a uid: each service needs its own user"))
    for name, setting, whose, exact in EXPECTED:
        if name not in settings or uids.get(whose) is None:
            continue
        ids = parse_ids(settings[name].get(setting, ""))
        want = uids[whose]
        if ids is None or (ids != {want} if exact else want not in ids):
            fail(
                N_("%(service)s's %(setting)s is %(ids)s, but %(whose)s runs as uid %(uid)s"),
                service=name,
                setting=setting,
                ids=_show(ids),
                whose=whose,
                uid=want,
            )
    for name, values in settings.items():
        for setting, raw in sorted(values.items()):
            if ALLOWLIST.fullmatch(setting) and OVERFLOW_ID in (parse_ids(raw) or ()):
                fail(
                    N_("%(service)s's %(setting)s names 65534, the overflow id, which is never admitted"),
                    service=name,
                    setting=setting,
                )
    for setting, ids in sorted(given.items()):
        reader = READERS.get(setting)
        if ids is None or reader not in settings:
            continue
        theirs = parse_ids(settings[reader].get(setting, ""))
        if theirs != ids:
            fail(
                N_(
                    "this command's %(setting)s is %(ids)s, but %(service)s's in the compose file is %(theirs)s"
                ),
                setting=setting,
                ids=_show(ids),
                service=reader,
                theirs=_show(theirs),
            )
    if fails:
        return fails
    return [
        _check(
            Level.OK,
            N_(
                "the services' users and the allowlists agree (executor %(e)s, approval_web %(w)s, assistant %(a)s)"
            ),
            e=uids["executor"],
            w=uids["approval_web"],
            a=uids["assistant"],
        )
    ]

"""The read-only commands while the services are stopped: the same reply read from the store.

`read_call` asks a socket first; when its service is not running (``service_unavailable``:
nothing was sent) it runs that service's readout (`shared.wire.client.call_readout`: ``python
-m services.approval_web.readout`` or ``services.assistant.readout``, the service's own
handlers over its store opened read-only as this user, in the environment the services run
in: on the lab, ``up``'s demo environment, `services.ctl.demo_env`; nothing is written) and
says so on stderr in the operator's language. No store yet: the service's own error (how to start it).
A store this account may not read: ``service_unavailable``, naming the store's owner.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Final, Protocol, TypeVar

from services.ctl import CtlError, admin_words
from shared.config import load_settings
from shared.errors import Code
from shared.text.catalogue import N_, Words
from shared.text.display import account_name
from shared.wire.client import CallError, call_readout
from shared.wire.protocol import Message, Request

R = TypeVar("R", bound=Message)

APPROVAL_READOUT: Final = "services.approval_web.readout"
"""approval.sock's read-only operations from the approval store (run, never imported)."""
ASSISTANT_READOUT: Final = "services.assistant.readout"
"""assistant.sock's history from the watch store (run, never imported)."""


class Client(Protocol):
    async def call(self, request: Request[R]) -> R: ...


async def read_call(
    view: admin_words.View, client: Client, request: Request[R], *, store: Path, readout: str
) -> R:
    """`client`'s reply to the read-only `request`; while its service is stopped, the reply of
    `readout` over `store`, and a line on stderr saying so (see the module doc).

    Raises:
        CallError: the service's refusal or the readout's (the same codes); the service's
            ``service_unavailable`` when there is no `store`.
        CtlError: ``service_unavailable`` when this account may not read `store`.
    """
    reply, _stopped = await read_reply(view, client, request, store=store, readout=readout)
    return reply


async def read_reply(
    view: admin_words.View, client: Client, request: Request[R], *, store: Path, readout: str
) -> tuple[R, bool]:
    """`read_call`'s reply, and whether it was read from the store (True: the services are
    stopped, and nothing was asked of them). Raises as `read_call`."""
    try:
        return await client.call(request), False
    except CallError as exc:
        if exc.code != Code.SERVICE_UNAVAILABLE:
            raise
        reply = await from_store(request, store, readout=readout, unavailable=exc)
    said = view.text(N_("The services are stopped; read from the store at %(path)s."), path=str(store))
    print(said, file=sys.stderr)
    return reply, True


async def from_store(request: Request[R], store: Path, *, readout: str, unavailable: CallError) -> R:
    """`readout`'s reply to `request` over `store` (see the module doc).

    Raises:
        CallError: `unavailable` when there is no `store`; the readout's refusal.
        CtlError: ``service_unavailable`` when this account may not read `store`.
    """
    owner, readable = store_access(store)
    if owner is None and readable:
        raise unavailable
    if not readable:
        raise CtlError(
            Code.SERVICE_UNAVAILABLE,
            Words.of(
                N_(
                    "The services are stopped, and this account cannot read the store at %(path)s (it "
                    "belongs to %(owner)s): run the command as that account, or start the services."
                ),
                path=str(store),
                owner=account_name(owner) if owner is not None else "?",
            ),
        )
    # the readout judges as the services would: on the lab, with up's demo environment (the
    # fence, the model) rather than this terminal's settings alone (walk item 7)
    from services.ctl.demo_env import running_environment  # supervise only once stopped

    return await call_readout(readout, request, env=running_environment(load_settings()))


def store_access(store: Path) -> tuple[int | None, bool]:
    """(the store's owner uid, whether this account may read it); (None, True): there is no
    store; (None, False): its folder may not be searched by this account."""
    try:
        owner = os.stat(store).st_uid
    except FileNotFoundError:
        return None, True
    except PermissionError:
        return None, False
    return owner, os.access(store, os.R_OK)

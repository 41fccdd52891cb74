"""The write client: one call of one Epiphan write tool, once, and what its answer means.

With `shared.epiphan.read_client.EpiphanReadClient`, this is the only class that calls
`shared.epiphan.mcp_session.McpConnection.call` (a static test holds every module to it), and the only
one that sends a write tool. A `WriteClient` sends at most one call in its life: there is no
retry of any kind, not after a timeout, not after a 401. The write goes on the session the reads
before it used (``reopen=False``): when that session has closed since, nothing is sent and the
outcome is ``unknown``, as for a session that dies under the write.

What an answer means (EPIPHAN.md, "Write result"): a JSON map of target ID -> error string.

- a refusal for the team's plan (an error result, or a map whose every value says so, in the
  words `shared.epiphan.read_client.is_plan_error_text` knows: writes need Epiphan Edge
  Premium) -> ``refused`` with ``plan_required``: Epiphan refused before acting, nothing ran;
- ``{}``: every target worked -> ``ok``;
- a non-empty map of strings: some target failed -> ``error`` with the map (values redacted);
- an error result (``isError``, including an in-band 401), a non-map, a map holding anything
  but strings, unreadable text, a timeout, a lost response, an unreachable server -> ``unknown``:
  the write may or may not have happened, and it is never taken as ``ok``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.executor import ExecutorError
from shared.epiphan.mcp_session import McpConnection, RawToolResult
from shared.epiphan.read_client import WRITE_TOOLS_OF_EPIPHAN, is_auth_error_text, is_plan_error_text
from shared.epiphan.redact import redact_text
from shared.errors import Code, FleetwatchError
from shared.text.display import visible

DETAIL_CAP = 300
"""Characters kept of one per-target error string."""


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """``outcome`` ∈ ok | error | unknown | refused; ``detail``: target ID -> redacted error
    string (for error); ``message``: one sentence for a person; ``code``: the refusal's code
    (only with refused: ``plan_required``)."""

    outcome: str
    message: str
    detail: dict[str, str] = field(default_factory=dict)
    code: Code | None = None


PLAN_REFUSED = WriteOutcome(
    "refused",
    "Epiphan refused the write: this team's plan does not allow changes (writes need Epiphan Edge "
    "Premium). Nothing ran; reads keep working.",
    code=Code.PLAN_REQUIRED,
)


def interpret(raw: RawToolResult) -> WriteOutcome:
    """What one write result means (see the module docstring). Pure."""
    if raw.is_error:
        if is_plan_error_text(raw.text):
            return PLAN_REFUSED
        if is_auth_error_text(raw.text):
            return WriteOutcome(
                "unknown", "Epiphan answered with a sign-in error; whether the change ran is unknown."
            )
        return WriteOutcome(
            "unknown",
            f"Epiphan answered with an error result ({visible(redact_text(raw.text), 120)}); outcome unknown.",
        )
    data: Any = raw.data()
    if isinstance(data, str):
        return WriteOutcome("unknown", "Epiphan's answer was not readable JSON; outcome unknown.")
    if not isinstance(data, Mapping):
        return WriteOutcome(
            "unknown", "Epiphan's answer was not a map of targets to errors; outcome unknown."
        )
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        return WriteOutcome(
            "unknown", "Epiphan's answer held something other than error strings; outcome unknown."
        )
    if not data:
        return WriteOutcome("ok", "Epiphan reported that every target worked.")
    if all(is_plan_error_text(value) for value in data.values()):
        return PLAN_REFUSED
    detail = {key: redact_text(value)[:DETAIL_CAP] for key, value in data.items()}
    return WriteOutcome("error", f"Epiphan reported an error for {len(detail)} target(s).", detail)


class WriteClient:
    """Sends one write over a connection holding the sandbox sign-in.

    Args:
        connection: an `McpConnection` (its ``timeout_seconds`` bounds the call).
    """

    def __init__(self, connection: McpConnection) -> None:
        self._connection = connection
        self._sent = False

    async def write_once(self, tool: str, arguments: Mapping[str, Any]) -> WriteOutcome:
        """Call `tool` with `arguments` once and say what happened; never retries.

        Raises:
            ExecutorError: ``internal_error`` when `tool` is not an Epiphan write tool or this
                client already sent its one write (a programming error; nothing is sent).
        """
        if tool not in WRITE_TOOLS_OF_EPIPHAN:
            raise ExecutorError(Code.INTERNAL_ERROR, f"{tool!r} is not a write tool")
        if self._sent:
            raise ExecutorError(Code.INTERNAL_ERROR, "a write client sends one write only")
        self._sent = True
        try:
            raw = await self._connection.call(tool, arguments, reopen=False)
        except FleetwatchError as exc:
            return WriteOutcome(
                "unknown",
                f"The write was sent but no result came back ({exc.code}); it may or may not have run.",
            )
        return interpret(raw)

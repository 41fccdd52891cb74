"""``fleetwatch`` admin commands: argument parsing and output (pure), then each command end to
end through the real approval.sock of a running approval_web (``main`` called in-process)."""

from __future__ import annotations

import argparse
import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import pytest

from services.ctl.admin_words import (
    View,
    render_audit,
    render_detail,
    render_pending,
    render_processes,
    render_status,
)
from services.ctl.commands_admin import (
    inspection_warnings,
    parse_arg_values,
    propose_warnings,
    render_audit_report,
    render_lifted,
)
from services.ctl.main import EPILOG, build_parser
from services.ctl.stopped import APPROVAL_READOUT, from_store
from shared.errors import Code, FleetwatchError
from shared.text.display import account_name
from shared.wire.approval import (
    AuditReport,
    AuditRow,
    AuditTail,
    DenialPause,
    ProposalDetail,
    ProposalSummary,
    Status,
)
from shared.wire.client import CallError
from shared.wire.executor import Inspection, WriterCheck
from tests.approval_web.helpers import SANDBOX_DEVICES
from tests.approval_web.page.helpers import policies

A, B, C = SANDBOX_DEVICES
ADMIN_COMMANDS = [
    ["pending", "list"],
    ["pending", "show", "p-1"],
    ["deny", "p-1"],
    ["deny-all"],
    ["pause"],
    ["resume"],
    ["audit", "tail"],
    ["audit", "verify"],
    ["status"],
    ["propose", "batch_reboot", "--reason", "r"],
]


# --- parsing and help ---------------------------------------------------------------------------------


def test_an_argument_value_is_json_when_it_parses_as_json_and_text_otherwise() -> None:
    parsed = parse_arg_values(
        ['device_ids=["29088800001"]', "action=start", "count=7", 'quoted="7"', "flag=true"]
    )
    assert parsed == {
        "device_ids": ["29088800001"],
        "action": "start",
        "count": 7,
        "quoted": "7",
        "flag": True,
    }
    assert parse_arg_values(["empty=", "eq=a=b"]) == {"empty": "", "eq": "a=b"}


def test_an_all_digit_id_stays_text_where_the_reviewed_schema_says_text() -> None:
    _, tool_policy = policies()
    schema = tool_policy.propose["confirm_cms_event_on_device"].arguments_schema
    parsed = parse_arg_values(["device_id=29088800001", "event_id=1791484740"], schema)
    assert parsed == {"device_id": "29088800001", "event_id": "1791484740"}
    assert parse_arg_values(["device_id=29088800001"]) == {"device_id": 29088800001}  # no schema: JSON


def test_malformed_json_says_not_valid_json() -> None:
    with pytest.raises(FleetwatchError) as caught:
        parse_arg_values(['device_ids=["29088800001"'])
    assert caught.value.code is Code.INVALID_ARGUMENTS and "not valid JSON" in caught.value.message


def test_propose_help_lists_every_proposable_tool_its_arguments_and_which_are_disruptive() -> None:
    _, tool_policy = policies()
    top = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = top.choices["propose"].format_help()
    for tool, rule in tool_policy.propose.items():
        line = next(line for line in text.splitlines() if line.lstrip(" *").startswith(f"{tool}:"))
        assert line.strip().startswith("*") is rule.disruptive, line
        for name in rule.arguments_schema["properties"]:
            assert f"{name}=" in line, (tool, name)
    assert "* batch_recording: action=start|stop" in text and "(* when action=stop)" in text
    assert "No command approves a change" in text


@pytest.mark.parametrize(
    ("pairs", "code"),
    [
        (["no-equals-sign"], Code.INVALID_ARGUMENTS),
        (["=value"], Code.INVALID_ARGUMENTS),
        (["a=1", "a=2"], Code.INVALID_ARGUMENTS),
        (["delay=1.5"], Code.NOT_CANONICALIZABLE),
        (['x={"k": 1, "k": 2}'], Code.NOT_CANONICALIZABLE),
    ],
)
def test_a_malformed_argument_is_a_user_error_with_a_code(pairs: list[str], code: Code) -> None:
    with pytest.raises(FleetwatchError) as caught:
        parse_arg_values(pairs)
    assert caught.value.code is code


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [parser]
    return [leaf for sub in subs for child in sub.choices.values() for leaf in _leaf_parsers(child)]


def test_every_admin_command_takes_json_and_its_help_says_no_command_approves() -> None:
    parser = build_parser()
    for argv in ADMIN_COMMANDS:
        args = parser.parse_args([*argv, "--json"])
        assert args.json is True and callable(args.run)
    admin = {"pending", "deny", "deny-all", "pause", "resume", "audit", "status", "propose"}
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in admin:
        for leaf in _leaf_parsers(top.choices[name]):
            assert (leaf.epilog or "").endswith(EPILOG), leaf.prog
            assert "No command approves a change" in leaf.format_help()
    assert not any("approve" == name for name in top.choices)


# --- output ----------------------------------------------------------------------------------------------


def _detail(**changes: Any) -> ProposalDetail:
    summary = ProposalSummary(
        proposal_id="p-0123456789ab",
        tool="batch_reboot",
        targets=(A,),
        created_at="2026-03-02T10:00:00.000Z",
        expires_at="2026-03-02T10:05:00.000Z",
        proposed_by="assistant",
        status="pending",
    )
    fields: dict[str, Any] = {
        "summary": summary,
        "arguments": {"device_ids": [A]},
        "reason": "The room \u202eis frozen\nline two",
        "fingerprint_hash": "ab" * 32,
        "schema_version": 1,
        "age_seconds": 12,
        "expires_in_seconds": 288,
    }
    fields.update(changes)
    return ProposalDetail(**fields)


NOW = dt.datetime(2026, 3, 2, 10, 0, 12, tzinfo=dt.UTC)
MEXICO = View("en", ZoneInfo("America/Mexico_City"), NOW)  # UTC-6
# UTC+14, half a minute before midnight there: the rows at 10:00 UTC are tomorrow, 3 March.
KIRITIMATI = View("es", ZoneInfo("Pacific/Kiritimati"), NOW - dt.timedelta(seconds=30))


def test_pending_show_names_the_change_and_room_in_words_with_local_times_every_argument_and_hidden_characters() -> (
    None
):
    text = render_detail(MEXICO, _detail())
    for expected in (
        f"Restart a device: device {A}  (p-0123456789ab)",
        "the assistant, 04:00, 12 seconds ago",
        "04:05, in 5 minutes",
        "batch_reboot (schema version 1)",
        f'["{A}"]',
        "ab" * 32,
        "Reason, written by the assistant (not checked):",
        "⟦U+202E⟧is frozen",
        "line two",
    ):
        assert expected in text, (expected, text)
    assert "\u202e" not in text
    assert re.search(r"\n  Proposed by +the assistant", text) and re.search(
        r"\n  Expires unreviewed +04:05", text
    )
    spanish = render_detail(KIRITIMATI, _detail())
    assert f"Reiniciar un dispositivo: dispositivo {A}" in spanish
    assert "el asistente, mar 3 mar, 00:00, dentro de 18 segundos" in spanish  # across the date line


def test_pending_show_reports_an_unknown_outcome_and_a_refusal_in_words() -> None:
    unknown = render_detail(MEXICO, _detail(outcome="unknown", verification=None, expires_in_seconds=None))
    assert re.search(r"\n  Outcome +unknown\n", unknown) and "Expires" not in unknown
    refused = render_detail(MEXICO, _detail(outcome="refused", refusal_code="kill_switch_on"))
    audit = refused.index("For an audit (as stored):")
    assert re.search(r"\n  Outcome +refused: writes are paused \(the kill switch is on\)\.\n", refused)
    assert refused.index("kill_switch_on") > audit  # the stable code is kept for an audit only
    spanish = render_detail(KIRITIMATI, _detail(outcome="refused", refusal_code="target_recording"))
    audit = spanish.index("Para una auditoría (tal como se guardó):")
    assert "rechazado: la sala está grabando y este cambio la interrumpiría." in spanish[:audit]
    assert "target_recording" not in spanish[:audit] and "target_recording" in spanish[audit:]
    not_run = render_detail(
        KIRITIMATI,
        _detail(
            summary=msgspec.structs.replace(_detail().summary, status="not_run", status_code="seal_invalid"),
            expires_in_seconds=None,
        ),
    )
    audit = not_run.index("Para una auditoría")
    assert "seal_invalid" not in not_run[:audit] and "seal_invalid" in not_run[audit:]
    assert "el sello de la propuesta no se verifica" in not_run[:audit]


def test_pending_show_says_a_write_refused_for_the_plan_in_words_in_both_languages() -> None:
    english = render_detail(MEXICO, _detail(outcome="refused", refusal_code="plan_required"))
    audit = english.index("For an audit (as stored):")
    assert re.search(
        r"\n  Outcome +refused: Epiphan refused the change because this team's plan does not allow changes",
        english,
    )
    assert "Epiphan Edge Premium" in english[:audit] and "plan_required" not in english[:audit]
    spanish = render_detail(KIRITIMATI, _detail(outcome="refused", refusal_code="plan_required"))
    audit = spanish.index("Para una auditoría (tal como se guardó):")
    assert (
        "rechazado: Epiphan rechazó el cambio porque el plan de este grupo no permite cambios"
        in spanish[:audit]
    )
    assert "plan_required" not in spanish[:audit] and "plan_required" in spanish[audit:]


def _recording() -> ProposalSummary:
    return ProposalSummary(
        proposal_id="p-ffffffffffff",
        tool="batch_recording",
        targets=(B,),
        created_at="2026-03-02T09:58:00.000Z",
        expires_at=None,
        proposed_by="operator",
        status="pending",
    )


def test_pending_list_is_aligned_and_names_change_room_who_and_when() -> None:
    summary = _detail().summary
    other = _recording()
    lines = render_pending(MEXICO, [summary, other]).split("\n")
    assert lines[0] == "Waiting for a person on the approval page: 2"
    assert lines[1].split() == ["Change", "Room", "Proposed", "by", "Proposed", "Expires", "unreviewed", "ID"]
    assert lines[2].startswith(f"  Restart a device         device {A}  the assistant")
    assert lines[3].startswith(f"  Start or stop recording  device {B}  an operator")
    assert len({line.index("p-") for line in lines[2:]}) == 1  # the ID column lines up
    assert render_pending(MEXICO, []) == "No proposals are waiting."
    # With the rooms' current names; a look-alike name is marked, its device ID beside it.
    names = {f"device {A} name": "Sandbox Сlassroom", f"device {B} name": "Sandbox Pearl Mini"}
    named = render_pending(MEXICO, [summary, other], names=names)
    assert f"Restart a device         “Sandbox Сlassroom” (look-alike letters: device {A})" in named
    assert "Start or stop recording  “Sandbox Pearl Mini”" in named


def test_audit_tail_says_who_did_what_and_when_in_words() -> None:
    rows = [
        AuditRow(
            seq=7,
            at="2026-03-02T10:00:00.000Z",
            actor="operator:1000",
            kind="denial",
            proposal_id="p-1",
            detail={},
        ),
        AuditRow(
            seq=8,
            at="2026-03-02T10:00:05.000Z",
            actor="executor",
            kind="refusal",
            proposal_id="p-2",
            detail={"code": "kill_switch_on", "operation": "execute"},
        ),
        AuditRow(
            seq=9,
            at="2026-03-02T10:00:06.000Z",
            actor="page abc",
            kind="approval",
            proposal_id="p-3",
            detail={},
        ),
    ]
    lines = render_audit(MEXICO, rows).split("\n")
    assert lines[0].split() == ["#", "When", "Who", "What", "Proposal", "Detail"]
    # Who decided by account and where (`shared.text.deciders`, as the page says it), never a role or a bare uid
    assert lines[1].startswith(
        f"7  04:00, 12 seconds ago  {account_name(1000)}, from the command line  denied"
    )
    assert (
        "the executor" in lines[2]
        and "refused" in lines[2]
        and "kill_switch_on: writes are paused (the kill switch is on)." in lines[2]
    )
    assert "someone, on the approval page" in lines[3] and "approved" in lines[3]
    assert (
        render_audit(KIRITIMATI, rows).split("\n")[1].startswith("7  mar 3 mar, 00:00, dentro de 18 segundos")
    )


def _status(**changes: Any) -> Status:
    """A full queue, writes paused, the executor not answering, no fence (as `changes` say)."""
    fields: dict[str, Any] = {
        "pending": 3,
        "max_pending": 3,
        "last_hour": 4,
        "per_hour": 10,
        "kill_switch": True,
        "executor_up": False,
        "fence_configured": False,
        "autonomy": "propose",
    }
    return Status(**(fields | changes))


def test_status_names_the_queue_the_caps_the_pauses_and_a_missing_fence() -> None:
    status = _status(
        pauses=(
            DenialPause(
                tool="batch_reboot",
                target=A,
                until="2026-03-02T11:00:00.000Z",
                target_name="Pearl Two",
                denials=3,
            ),
        ),
    )
    text = render_status(MEXICO, status)
    assert render_status(KIRITIMATI, status).startswith("Cola:")
    for expected in (
        "3 of 3 pending",
        "4 of 10",
        f"reboot in “Pearl Two” ({A}) is paused until 05:00, in 60 minutes, after 3 denials",
        f"lift it: fleetwatch resume --denials batch_reboot {A}",
        "ON",
        "not answering",
        "NOT configured",
    ):
        assert expected in text, expected
    assert re.search(r"Autonomy: +may propose changes; a person approves each one", text)
    spanish = render_status(KIRITIMATI, status)
    assert re.search(r"Autonomía: +puede proponer cambios; una persona aprueba cada uno", spanish)
    assert "propose" not in spanish
    observing = render_status(MEXICO, msgspec.structs.replace(status, autonomy="observe"))
    assert "only watching: nothing may be proposed" in observing


def test_pending_show_says_the_state_in_words_and_keeps_the_raw_facts_for_an_audit_last() -> None:
    detail = _detail(detail={"turn_id": "t-42"})
    text = render_detail(MEXICO, detail)
    assert re.search(r"\n  State +waiting for a person\n", text)
    audit = text.index("For an audit (as stored):")
    for raw in ("batch_reboot (schema version 1)", "ab" * 32, "Model turn", "t-42"):
        assert text.index(raw) > audit, raw
    assert text.index("Reason, written by the assistant") < audit
    spanish = render_detail(KIRITIMATI, detail)
    assert re.search(r"\n  Estado +pendiente: espera la decisión de una persona\n", spanish)
    before_audit = spanish[: spanish.index("Para una auditoría (tal como se guardó):")]
    for raw in ("pending", "schema", "Huella", "turn_id", "ab" * 32):
        assert raw not in before_audit, raw
    ran = render_detail(
        KIRITIMATI,
        _detail(
            summary=msgspec.structs.replace(_detail().summary, status="executed"),
            outcome="ok",
            verification="verified",
            expires_in_seconds=None,
        ),
    )
    assert re.search(r"\n  Estado +ejecutada\n", ran)
    assert re.search(r"\n  Resultado +hecho\n", ran)
    assert "confirmado por una lectura posterior" in ran


def test_pending_list_names_the_recording_action_in_both_languages() -> None:
    start = msgspec.structs.replace(_recording(), action="start")
    assert "  Start recording  " in render_pending(MEXICO, [start])
    spanish = render_pending(KIRITIMATI, [start])
    assert "Iniciar grabación" in spanish and "detener" not in spanish


def test_propose_warnings_are_in_the_operators_language() -> None:
    status = _status(fence_configured=True)
    english = propose_warnings(MEXICO, status)
    assert [w.split(":")[0] for w in english] == ["warning"] * 3
    assert english[0].startswith("warning: writes are paused (the kill switch is on)")
    assert "(3 of 3)" in english[2]
    spanish = propose_warnings(KIRITIMATI, status)
    assert spanish == [
        "aviso: los cambios están en pausa (el interruptor de parada está activado): aunque se apruebe, "
        "este cambio no se ejecutará hasta `fleetwatch resume --language es`.",
        "aviso: el ejecutor no responde: una aprobación no podría ejecutarse ahora.",
        "aviso: la cola está llena (3 de 3): esta propuesta será rechazada.",
    ]
    inspection = Inspection(proposal_id="p-1", complete=True, targets=(), would_refuse=Code.TARGET_RECORDING)
    (refusal,) = inspection_warnings(KIRITIMATI, inspection)
    assert refusal == (
        "aviso: el ejecutor rechazaría este cambio en este momento: "
        "la sala está grabando y este cambio la interrumpiría."
    )
    told = msgspec.structs.replace(
        inspection, would_refuse_message="Room B is recording; batch_reboot would interrupt it."
    )
    assert inspection_warnings(KIRITIMATI, told) == [refusal]  # the executor's English stays out
    (english_refusal,) = inspection_warnings(MEXICO, told)
    assert english_refusal == (
        "warning: the executor would refuse this change right now: the room is recording, and this change "
        "would disrupt it. (Room B is recording; batch_reboot would interrupt it.)"
    )
    assert inspection_warnings(MEXICO, msgspec.structs.replace(inspection, would_refuse=None)) == []


def test_lifted_denial_pauses_are_said_in_the_operators_language_and_time() -> None:
    pause = DenialPause(
        tool="batch_reboot", target=A, until="2026-03-02T11:00:00.000Z", target_name="Pearl Two", denials=3
    )
    english = render_lifted(MEXICO, [pause])
    assert english.startswith("Lifted 1 denial pause;")
    assert (
        f"reboot (batch_reboot) in “Pearl Two” ({A}) would have been paused until 05:00, in 60 minutes"
        in english
    )
    spanish = render_lifted(KIRITIMATI, [pause])
    assert spanish.startswith("Se levantó 1 pausa por rechazos")
    assert f"en «Pearl Two» ({A}) habría estado en pausa hasta mar 3 mar, 01:00" in spanish
    assert render_lifted(KIRITIMATI, []) == "No había ninguna pausa por rechazos vigente; no se levantó nada."


def test_audit_verify_says_its_verdict_in_both_languages() -> None:
    report = AuditReport(
        ok=False,
        rows=9,
        first_bad_seq=7,
        reason="row 7's hash does not match",
        checks=(
            WriterCheck(writer="executor", ok=True, rows=9, signed=4, anchor_seq=9),
            WriterCheck(writer="approval_web", ok=False, rows=9, first_bad_seq=7, reason="bad MAC"),
            WriterCheck(writer="assistant", ok=False, rows=9),
        ),
    )
    assert render_audit_report(MEXICO, report).split("\n") == [
        "The audit chain is BROKEN at row 7: row 7's hash does not match",
        "  executor: checked its 4 rows with its own key; its anchor has seen row 9.",
        "  approval_web: row 7: bad MAC",
        "  assistant: not checked",
    ]
    assert render_audit_report(KIRITIMATI, report).split("\n") == [
        "La cadena de auditoría está ROTA en la fila 7: row 7's hash does not match",
        "  executor: comprobó sus 4 filas con su propia clave; su ancla llegó a la fila 9.",
        "  approval_web: fila 7: bad MAC",
        "  assistant: sin comprobar",
    ]
    fine = AuditReport(ok=True, rows=9)
    assert render_audit_report(KIRITIMATI, fine) == "La cadena de auditoría se verifica: 9 filas."


SUPERVISED = [
    {
        "name": "executor",
        "statename": "RUNNING",
        "pid": 4242,
        "start": 1772445600,
        "stop": 0,
        "exitstatus": 0,
        "description": "pid 4242, uptime 0:00:12",
    },
    {
        "name": "approval_web",
        "statename": "FATAL",
        "pid": 0,
        "start": 1772445590,
        "stop": 1772445595,
        "exitstatus": 1,
        "description": "Exited too quickly (process log may have details)",
    },
    {
        "name": "assistant",
        "statename": "STOPPED",
        "pid": 0,
        "start": 1772445590,
        "stop": 1772445605,
        "exitstatus": 0,
        "description": "Mar 02 10:00 AM",
    },
    {
        "name": "lab",
        "statename": "EXITED",
        "pid": 0,
        "start": 1772445590,
        "stop": 1772445605,
        "exitstatus": 3,
        "description": "Mar 02 10:00 AM",
    },
    {
        "name": "other",
        "statename": "BACKOFF",
        "pid": 0,
        "start": 0,
        "stop": 0,
        "exitstatus": 0,
        "description": "Exited too quickly",
    },
]
"""What supervisord's ``getAllProcessInfo`` answers (its documented fields), one process per state."""


def test_status_says_each_supervised_process_state_in_words_in_both_languages() -> None:
    english = "\n".join(render_processes(MEXICO, SUPERVISED))
    for expected in (
        "executor      running since 04:00, 12 seconds ago (pid 4242)",
        "approval_web  could not start: supervisord gave up (see its log)",
        "assistant     stopped at 04:00, 7 seconds ago",
        "lab           exited at 04:00, 7 seconds ago (exit status 3)",
        "other         exited too quickly; supervisord is starting it again",
    ):
        assert expected in english, english
    never = {**SUPERVISED[2], "stop": 0, "start": 0}
    assert render_processes(MEXICO, [never]) == ["assistant  not started"]
    assert render_processes(KIRITIMATI, [never]) == ["assistant  sin iniciar"]
    spanish = "\n".join(render_processes(KIRITIMATI, SUPERVISED))
    assert "en ejecución desde" in spanish and "(pid 4242)" in spanish
    assert "no pudo iniciarse: supervisord dejó de intentarlo (vea su registro)" in spanish
    for raw in ("RUNNING", "FATAL", "STOPPED", "EXITED", "BACKOFF", "uptime", "Exited", "running", "stopped"):
        assert raw not in spanish and raw not in english.replace("running since", "").replace(
            "stopped at", ""
        ), raw


async def test_with_the_services_stopped_and_no_store_a_read_says_how_to_start_them(tmp_path) -> None:
    missing = tmp_path / "state" / "fleetwatch.db"
    down = CallError(Code.SERVICE_UNAVAILABLE, "not running", service="approval_web", operation="audit_tail")
    with pytest.raises(CallError) as raised:
        await from_store(AuditTail(limit=1), missing, readout=APPROVAL_READOUT, unavailable=down)
    assert raised.value is down


# --- the walk's audit and pending show (issue 28 walk item 8) ---------------------------------------


WALK_ROWS = (  # actor, kind, proposal, detail
    ("page s-1", "denial", "p-1", {"uid": 0}),
    ("assistant", "ask", None, {"outcome": "end_turn", "code": None, "turn_id": "t-1"}),
    ("executor", "outcome", "p-2", {"outcome": "ok", "tool": "batch_reboot"}),
    ("executor", "verification", "p-2", {"verification": "verified"}),
    ("approval_web", "refusal", None, {"code": "secret_wrong", "operation": "page POST /login", "uid": 0}),
    ("approval_web", "expiry", "p-3", {"reason": "undecided"}),
    ("assistant", "ask", None, {"outcome": "fallback_timeout", "code": "model_unavailable"}),
)


def _walk_rows() -> list[AuditRow]:
    return [
        AuditRow(seq=n, at="2026-03-02T10:00:00.000Z", actor=actor, kind=kind, proposal_id=pid, detail=detail)
        for n, (actor, kind, pid, detail) in enumerate(WALK_ROWS, start=1)
    ]


@pytest.mark.parametrize(
    ("view", "who", "words", "sign_in"),
    [
        (
            MEXICO,
            f"{account_name(0)}, on the approval page",
            ("answered", "done; reboot", "confirmed by a later read", "nobody decided in time"),
            "page sign-in refused",
        ),
        (
            KIRITIMATI,
            f"{account_name(0)}, en la página de aprobación",
            (
                "respondida",
                "hecho; reinici",
                "confirmado por una lectura posterior",
                "nadie decidió a tiempo",
            ),
            "inicio de sesión en la página rechazado",
        ),
    ],
)
def test_audit_tail_names_the_page_decider_by_account_and_its_detail_in_words(
    view, who, words, sign_in
) -> None:
    """The walk: "alguien, en la página de aprobación" for a denial the page knew was root's;
    ``end_turn``, ``ok``, ``verified`` as they are stored; a wrong page secret said as
    "refused by a rule". The row's own uid names the person; every stored word has its words."""
    lines = render_audit(view, _walk_rows()).split("\n")
    assert who in lines[1], lines[1]
    text = "\n".join(lines).lower()
    for said in words:
        assert said in text, (said, text)
    for raw in ("end_turn", " ok", "verified", "undecided", "batch_reboot", "fallback_"):
        assert raw not in text, (raw, text)
    assert sign_in in lines[5].lower(), lines[5]
    assert "por una regla" not in lines[5] and "by a rule" not in lines[5]
    assert "secret_wrong" in lines[5]  # the stable code stays for an audit


@pytest.mark.parametrize(
    ("view", "section", "words", "denied"),
    [
        (
            MEXICO,
            "For an audit (as stored):",
            ("Model turn", "Checked afterwards", "Epiphan tool", "schema version 1"),
            f"Denied on the approval page by {account_name(0)}, 04:00, 12 seconds ago",
        ),
        (
            KIRITIMATI,
            "Para una auditoría (tal como se guardó):",
            ("Turno del modelo", "Comprobado después", "Herramienta de Epiphan", "versión de esquema 1"),
            f"Rechazado en la página de aprobación por {account_name(0)}, mar 3 mar, 00:00",
        ),
    ],
)
def test_pending_show_words_its_stored_facts_and_says_who_denied_and_when(
    view, section, words, denied
) -> None:
    detail = _detail(
        summary=msgspec.structs.replace(_detail().summary, status="denied"),
        expires_in_seconds=None,
        detail={"turn_id": "t-42", "verified_at": "2026-03-02T10:00:00.000Z"},
        decided_kind="denial",
        decided_at="2026-03-02T10:00:00.000Z",
        decided_from="page",
        decided_uids=(0,),
    )
    text = render_detail(view, detail)
    for said in (*words, denied):
        assert said in text, (said, text)
    for raw in ("turn_id", "verified_at", "(schema 1)", "2026-03-02T10:00:00.000Z"):
        assert raw not in text, (raw, text)
    assert "t-42" in text[text.index(section) :]


@pytest.mark.parametrize("view", [MEXICO, KIRITIMATI])
def test_an_audit_refusal_reads_as_refused_and_its_detail_parts_join_without_a_stray_full_stop(view) -> None:
    """The walk: "rechazado por una regla" for a `pending show` of an unknown ID (no rule
    refused it), and "…la página de aprobación.; empezar o detener…" where a sentence's full stop
    met the next part."""
    details = ({"code": "target_busy", "tool": "batch_recording"}, {"code": "proposal_not_found"})
    rows = [
        AuditRow(
            seq=n,
            at="2026-03-02T10:00:00.000Z",
            actor="operator:0",
            kind="refusal",
            proposal_id=None,
            detail=detail,
        )
        for n, detail in enumerate(details, start=1)
    ]
    lines = render_audit(view, rows).split("\n")
    assert ".;" not in lines[1] and "target_busy: " in lines[1], lines[1]
    assert "regla" not in lines[2] and "rule" not in lines[2], lines[2]
    assert ("rechazado" if view is KIRITIMATI else "refused") in lines[2], lines[2]

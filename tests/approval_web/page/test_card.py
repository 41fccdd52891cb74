"""The card is built by code from the stored proposal and a fresh Inspect; anything missing
leaves only Deny, with the reason in plain words."""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgspec

from services.approval_web.page.card import ARGUMENT_CAP, NAME_CAP, REASON_CAP, build_card
from services.approval_web.page.i18n import make_say, make_when, page_environments
from services.approval_web.page.words import Words, refusal_words
from shared.store.approvals import ProposalRow
from shared.text.catalogue import load_translations
from shared.wire.executor import EventFacts, Inspection, StreamFacts, TargetFacts
from tests.approval_web.page.helpers import policies, text_of

DEVICE = "29088800001"
STREAM = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"


def row(
    tool: str = "start_stream_endpoint", arguments: dict[str, Any] | None = None, **fields: Any
) -> ProposalRow:
    arguments = (
        arguments if arguments is not None else {"stream_id": STREAM, "device_id": DEVICE, "channel_id": "1"}
    )
    values: dict[str, Any] = {
        "id": "p-000000000001",
        "created_at": "2026-03-02T09:58:00.000Z",
        "tool": tool,
        "arguments": arguments,
        "targets": (DEVICE,),
        "fingerprint": {},
        "fingerprint_hash": "0" * 64,
        "schema_version": 1,
        "slot": "sandbox",
        "reason": "Stream the rehearsal.",
        "proposed_by": "assistant",
        "status": "pending",
        "status_code": None,
        "bound_record": b"{}",
        "seal": "0" * 64,
        "expires_at": None,
        "decided_at": None,
        "turn_id": None,
    }
    values.update(fields)
    return ProposalRow(**values)


def inspection(**fields: Any) -> Inspection:
    values: dict[str, Any] = {
        "proposal_id": "p-000000000001",
        "complete": True,
        "targets": (
            TargetFacts(
                device_id=DEVICE,
                found=True,
                name="Sandbox Pearl-2",
                model="Pearl-2",
                online=True,
                recording=False,
                channel_id="1",
                channel_name="Program",
            ),
        ),
        "stream": StreamFacts(
            stream_id=STREAM, found=True, name="Sandbox test stream", host="test.example.net"
        ),
        "event": EventFacts(
            event_id="sbx4f2a9c1:1791484740",
            found=True,
            title="Sandbox rehearsal",
            start="2026-03-02T11:00:00Z",
            finish="2026-03-02T12:00:00Z",
        ),
        "read_at": "2026-03-02T10:00:00.000Z",
        "facts": {f"device {DEVICE} name": "Sandbox Pearl-2"},
        "facts_hash": "f" * 64,
    }
    values.update(fields)
    return Inspection(**values)


def card_of(proposal: ProposalRow | None = None, facts: Inspection | None = None, **kwargs: Any):
    proposal = proposal or row()
    _, tool_policy = policies()
    defaults: dict[str, Any] = {
        "rule": tool_policy.propose.get(proposal.tool),
        "disruptive": tool_policy.is_disruptive(proposal.tool, proposal.arguments),
        "inspection": facts if facts is not None else inspection(),
    }
    defaults.update(kwargs)
    return build_card(proposal, **defaults)


def test_a_complete_card_names_everything_and_may_be_approved() -> None:
    card = card_of()
    assert card.can_approve and card.blockers == ()
    assert text_of(card.title) == "Start a stream: “Sandbox Pearl-2”, channel 1 (“Program”)"
    assert text_of(card.title, "es") == "Iniciar una transmisión: «Sandbox Pearl-2», canal 1 («Program»)"
    assert text_of(card.summary) == (
        "“Sandbox Pearl-2”, channel 1 (“Program”) starts sending its picture to the stream destination "
        "Sandbox test stream."
    )
    assert text_of(card.risk).startswith("Low risk")
    assert card.undo == Words.of("Stop the stream to the same destination.")
    assert not card.disruptive
    assert [(a.name, a.value, a.full) for a in card.arguments] == [
        ("channel_id", "1", True),
        ("device_id", DEVICE, True),
        ("stream_id", STREAM, True),
    ]
    (target,) = card.targets
    assert (target.device_id, target.name, target.model, target.channel_id, target.channel_name) == (
        DEVICE,
        "Sandbox Pearl-2",
        "Pearl-2",
        "1",
        "Program",
    )
    assert (target.online, target.recording) == (Words.of("online"), Words.of("not recording"))
    stream, event = card.things
    assert (stream.name, stream.host) == ("Sandbox test stream", "test.example.net")
    assert (event.name, event.start, event.finish) == (
        "Sandbox rehearsal",
        "2026-03-02T11:00:00Z",
        "2026-03-02T12:00:00Z",
    )
    assert text_of(card.room) == "“Sandbox Pearl-2”, channel 1 (“Program”)"


def test_a_list_argument_is_shown_in_full_as_json_and_recording_says_start_or_stop() -> None:
    start = card_of(
        row("batch_recording", {"action": "start", "device_ids": [f"{DEVICE}-1"]}),
        inspection(stream=None, event=None),
    )
    stop = card_of(
        row("batch_recording", {"action": "stop", "device_ids": [f"{DEVICE}-1"]}),
        inspection(stream=None, event=None),
    )
    assert [(a.name, a.value) for a in start.arguments] == [
        ("action", "start"),
        ("device_ids", f'["{DEVICE}-1"]'),
    ]
    assert (text_of(start.change), text_of(stop.change)) == ("Start recording", "Stop recording")
    assert text_of(stop.risk).startswith("High risk")
    assert (start.disruptive, stop.disruptive) == (False, True)


def test_an_argument_that_cannot_be_shown_in_full_leaves_only_deny() -> None:
    long = card_of(
        row(arguments={"stream_id": "x" * (ARGUMENT_CAP + 1), "device_id": DEVICE, "channel_id": "1"})
    )
    hidden = card_of(row(arguments={"stream_id": STREAM, "device_id": DEVICE, "channel_id": "1\u202e"}))
    assert not long.can_approve and not hidden.can_approve
    assert long.blockers == (Words.of("The argument %(name)s cannot be shown in full.", name="stream_id"),)
    assert hidden.blockers == (Words.of("The argument %(name)s cannot be shown in full.", name="channel_id"),)


def test_an_id_that_was_not_found_leaves_only_deny_and_says_which() -> None:
    gone = inspection(
        complete=False,
        targets=(TargetFacts(device_id=DEVICE, found=False),),
        stream=StreamFacts(stream_id=STREAM, found=False),
        event=EventFacts(event_id="e-1", found=False),
    )
    card = card_of(facts=gone)
    assert card.blockers == (
        Words.of("Device %(id)s was not found on the sandbox team's list.", id=DEVICE),
        Words.of("Stream destination %(id)s was not found.", id=STREAM),
        Words.of("Event %(id)s was not found.", id="e-1"),
    )
    assert card.targets[0].online == Words.of("unknown")


def test_a_list_that_could_not_be_read_leaves_only_deny() -> None:
    card = card_of(facts=inspection(complete=False))
    assert card.blockers == (Words.of("A list could not be read, so some facts are missing."),)


def test_a_refusal_the_executor_would_make_now_leaves_only_deny() -> None:
    card = card_of(facts=inspection(would_refuse="target_recording", would_refuse_message="recording"))
    (blocker,) = card.blockers
    assert text_of(blocker) == (
        "The room is recording now. This change is allowed again once the recording stops."
    )
    other = card_of(facts=inspection(would_refuse="kill_switch_on"))
    assert other.blockers == (
        Words.of("The executor would refuse this right now: %(why)s", why=refusal_words("kill_switch_on")),
    )


def test_a_room_busy_with_its_event_says_which_and_until_when() -> None:
    card = card_of(facts=inspection(would_refuse="target_in_event_window"))
    (blocker,) = card.blockers
    assert text_of(blocker) == (
        "The room is busy: Sandbox rehearsal starts 11:00, in 60 minutes and ends 12:00, in 2 hours. "
        "This change is allowed again after 12:00."
    )
    assert text_of(blocker, "es").startswith(
        "La sala está ocupada: Sandbox rehearsal empieza 11:00, dentro de 60 minutos"
    )


def test_a_failed_inspect_or_one_about_another_proposal_leaves_only_deny() -> None:
    failed = card_of(inspection=None, inspect_code="service_unavailable")
    other = card_of(facts=inspection(proposal_id="p-other"))
    expected = (
        Words.of("The facts could not be read just now: %(why)s", why=refusal_words("service_unavailable")),
    )
    assert failed.blockers == expected and other.blockers == expected
    assert failed.targets[0].name == "" and failed.things == ()


def test_a_tool_the_policy_no_longer_allows_leaves_only_deny() -> None:
    card = card_of(rule=None)
    assert card.undo is None and not card.can_approve
    assert Words.of("The policy no longer allows this tool to be proposed.") in card.blockers


def test_the_reason_keeps_its_lines_shows_hidden_characters_and_is_capped() -> None:
    short = card_of(row(reason="First line\nSecond \u202eline\u202c"))
    assert short.reason_lines == ("First line", "Second ⟦U+202E⟧line⟦U+202C⟧") and not short.reason_cut
    long = card_of(row(reason="y" * 5000))
    assert sum(len(line) for line in long.reason_lines) <= REASON_CAP and long.reason_cut
    many = card_of(row(reason="\n".join(f"line {n}" for n in range(50))))
    assert len(many.reason_lines) == 12 and many.reason_cut


def test_names_are_shown_visibly_and_capped() -> None:
    facts = inspection(
        targets=(TargetFacts(device_id=DEVICE, found=True, name="Room\u200b" + "x" * 500, model="P"),)
    )
    (target,) = card_of(facts=facts).targets
    assert (
        target.name.startswith("Room⟦U+200B⟧") and len(target.name) == NAME_CAP and target.name.endswith("…")
    )


def test_the_card_hash_covers_every_fact_shown() -> None:
    assert card_of().card_hash == card_of().card_hash
    recording = inspection(targets=(msgspec.structs.replace(inspection().targets[0], recording=True),))
    renamed = inspection(
        stream=StreamFacts(stream_id=STREAM, found=True, name="Other", host="test.example.net")
    )
    hashes = {
        card_of().card_hash,
        card_of(facts=recording).card_hash,
        card_of(facts=renamed).card_hash,
        card_of(row(reason="another reason")).card_hash,
    }
    assert len(hashes) == 4


def test_the_card_says_which_room_uses_the_destination_and_whether_it_streams_in_both_languages() -> None:
    locked = StreamFacts(
        stream_id=STREAM,
        found=True,
        name="Sandbox test stream",
        host="test.example.net",
        locked_by="29088800004",
        locked_by_name="Sandbox Classroom\u202e",
        streaming=True,
    )
    idle = msgspec.structs.replace(locked, locked_by=None, locked_by_name=None, streaming=False)
    free = card_of(facts=inspection(stream=idle))
    stream, _event = free.things
    assert (text_of(stream.in_use), text_of(stream.streaming)) == ("not in use", "not streaming")
    assert (text_of(stream.in_use, "es"), text_of(stream.streaming, "es")) == ("sin uso", "sin transmitir")
    unreported = card_of().things[0]  # an older shape: neither reported
    assert (text_of(unreported.in_use), text_of(unreported.streaming)) == ("not in use", "unknown")
    stream, _event = card_of(facts=inspection(stream=locked)).things
    assert text_of(stream.in_use) == "in use by “Sandbox Classroom⟦U+202E⟧”"
    assert text_of(stream.streaming) == "streaming now"
    assert text_of(stream.in_use, "es") == "en uso por «Sandbox Classroom⟦U+202E⟧»"
    assert text_of(stream.streaming, "es") == "transmitiendo ahora"
    unnamed = msgspec.structs.replace(locked, locked_by_name=None)
    stream, _event = card_of(facts=inspection(stream=unnamed)).things
    assert text_of(stream.in_use) == "in use by 29088800004"
    assert card_of(facts=inspection(stream=locked)).card_hash != free.card_hash


def facts_html(card: Any, language: str) -> str:
    """The card's facts as the page renders them in `language` (``parts.html``'s ``facts``)."""
    translations = load_translations()
    when = make_when(zone=dt.UTC, now=dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC), language=language)
    macro = (
        page_environments(translations)[language]
        .get_template("parts.html")
        .make_module({"say": make_say(translations[language], when), "when": when})
    )
    return str(macro.facts(card))


def test_the_rendered_card_shows_the_destinations_use_in_the_readers_language() -> None:
    locked = StreamFacts(
        stream_id=STREAM,
        found=True,
        name="Sandbox test stream",
        host="test.example.net",
        locked_by="29088800004",
        locked_by_name="<b>Sandbox Classroom</b>",
        streaming=True,
    )
    card = card_of(facts=inspection(stream=locked))
    shown = {lang: facts_html(card, lang) for lang in ("en", "es")}
    assert "<dt>In use</dt><dd>in use by “&lt;b&gt;Sandbox Classroom&lt;/b&gt;”</dd>" in shown["en"]
    assert "<dt>Streaming</dt><dd>streaming now</dd>" in shown["en"]
    assert "<dt>En uso</dt><dd>en uso por «&lt;b&gt;Sandbox Classroom&lt;/b&gt;»</dd>" in shown["es"]
    assert "<dt>Transmisión</dt><dd>transmitiendo ahora</dd>" in shown["es"]


def test_a_card_whose_seal_fails_says_so_first_in_its_own_words_and_not_that_the_device_is_missing() -> None:
    # What Inspect answers for a seal that does not verify (services.executor.inspection):
    # nothing was read, so no device can have been "not found".
    unsealed = Inspection(
        proposal_id="p-000000000001",
        complete=False,
        targets=(),
        would_refuse="seal_invalid",
        would_refuse_message="The proposal's seal does not verify",
        read_at="2026-03-02T10:00:00.000Z",
    )
    card = card_of(facts=unsealed)
    assert not card.can_approve
    said = [text_of(b) for b in card.blockers]
    assert said[0].startswith("This card's seal does not verify") and len(said) == 1, said
    spanish = [text_of(b, "es") for b in card.blockers]
    assert spanish[0].startswith("El sello de esta tarjeta no se verifica") and len(spanish) == 1, spanish
    assert not any("not found" in s or "no se encontr" in s for s in [*said, *spanish])


def test_a_refusal_before_any_read_is_said_before_anything_that_was_not_read() -> None:
    # Any refusal Inspect makes before reading (the standing checks: the kill switch, a schema
    # that changed) comes first and alone: the devices were not read, not missing.
    for code in ("schema_version_changed", "kill_switch_on"):
        early = Inspection(
            proposal_id="p-000000000001",
            complete=False,
            targets=(),
            would_refuse=code,
            read_at="2026-03-02T10:00:00.000Z",
        )
        (blocker,) = card_of(facts=early).blockers
        assert blocker == Words.of(
            "The executor would refuse this right now: %(why)s", why=refusal_words(code)
        )


def test_the_devices_of_a_card_whose_facts_were_not_read_are_shown_as_not_read_not_as_not_found() -> None:
    unsealed = Inspection(
        proposal_id="p-000000000001", complete=False, targets=(), would_refuse="seal_invalid", read_at=""
    )
    gone = inspection(complete=False, targets=(TargetFacts(device_id=DEVICE, found=False),))
    shown = {}
    for name, card in (
        ("unsealed", card_of(facts=unsealed)),
        ("failed", card_of(inspection=None)),
        ("gone", card_of(facts=gone)),
    ):
        for lang in ("en", "es"):
            shown[name, lang] = facts_html(card, lang)
    for name in ("unsealed", "failed"):
        assert "not read" in shown[name, "en"] and "not found" not in shown[name, "en"]
        assert "sin leer" in shown[name, "es"] and "no encontrado" not in shown[name, "es"]
    assert "not found" in shown["gone", "en"] and "not read" not in shown["gone", "en"]

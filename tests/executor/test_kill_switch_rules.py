"""`services.executor.kill_switch.judge`: never paused is off; a state the executor sealed off is
off; anything unsealed, changed, replayed or unreadable is paused."""

from __future__ import annotations

from services.executor.kill_switch import Facts, judge


def test_never_paused_is_off_and_anything_unsealed_or_unreadable_is_on() -> None:
    fresh = Facts(seal=None, seal_mac_ok=False, sealed_row=None, newest_request=None, high_water=0)
    assert judge(fresh) == (False, "never paused")
    seal = {"on": False, "request_seq": 4, "row_seq": 5, "mac": "m"}
    row = {
        "writer": "executor",
        "kind": "kill_switch_sealed",
        "detail": {"on": False, "request_seq": 4},
        "mac_ok": True,
    }
    sealed_off = Facts(seal=seal, seal_mac_ok=True, sealed_row=row, newest_request=(4, False), high_water=5)
    assert judge(sealed_off) == (False, "sealed off")
    for changed in (
        Facts(None, False, None, None, None),
        Facts(None, False, None, (4, False), 0),
        Facts(seal, False, row, (4, False), 5),
        Facts(seal, True, row, (4, False), 6),
        Facts(seal, True, None, (4, False), 5),
        Facts(seal, True, {**row, "mac_ok": False}, (4, False), 5),
        Facts(seal, True, {**row, "writer": "approval_web"}, (4, False), 5),
        Facts(seal, True, row, (7, True), 5),
        Facts(seal, True, row, None, 5),
    ):
        assert judge(changed)[0] is True, changed

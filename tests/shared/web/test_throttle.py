"""The slow-down for wrong secrets, decided by pure functions over a clock the test moves."""

from __future__ import annotations

from shared.web.throttle import (
    PER_UID,
    ROW_WINDOW_SECONDS,
    ROWS_PER_WINDOW,
    Rule,
    Strikes,
    WrongSecretThrottle,
    after_failure,
    wait_left,
)


def waits_after(failures: int, rule: Rule = PER_UID) -> list[float]:
    strikes, now, out = Strikes(), 0.0, []
    for _ in range(failures):
        now += wait_left(strikes, now)
        strikes = after_failure(strikes, rule, now)
        out.append(wait_left(strikes, now))
    return out


def test_three_tries_are_free_then_the_wait_doubles_up_to_a_minute() -> None:
    assert waits_after(11) == [0, 0, 1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_entries_during_a_wait_neither_count_nor_extend_it() -> None:
    throttle = WrongSecretThrottle()
    for _ in range(3):
        throttle.failed(OPERATOR, 100.0)
    assert throttle.wait_left(OPERATOR, 100.0) == 1.0
    assert throttle.wait_left(OPERATOR, 100.5) == 0.5  # asking does not move it
    assert throttle.wait_left(OPERATOR, 101.0) == 0.0


def test_a_right_entry_clears_the_address_and_idle_strikes_are_forgotten() -> None:
    throttle = WrongSecretThrottle()
    for _ in range(4):
        throttle.failed(OPERATOR, 0.0)
    throttle.succeeded(OPERATOR)
    assert throttle.wait_left(OPERATOR, 0.0) == 0.0
    strikes = Strikes()
    for _ in range(3):
        strikes = after_failure(strikes, PER_UID, 0.0)
    later = after_failure(strikes, PER_UID, PER_UID.forget_after + 1)
    assert later.failures == 1 and wait_left(later, PER_UID.forget_after + 1) == 0.0


ATTACKER, OPERATOR = 65534, 1000


def test_wrong_secrets_from_one_uid_never_slow_another_uid() -> None:
    """Issue 24 #7: a local user posting wrong secrets every 50 ms for an hour, as the page
    meets them (an entry during a wait is refused unchecked); the operator is never slowed."""
    throttle = WrongSecretThrottle()
    for step in range(72_000):
        now = step * 0.05
        if throttle.wait_left(ATTACKER, now) == 0.0:
            throttle.failed(ATTACKER, now)
        if step % 1000 == 0:
            assert throttle.wait_left(OPERATOR, now) == 0.0, now
    assert throttle.wait_left(ATTACKER, 3600.0) > 0.0
    assert throttle.wait_left(OPERATOR, 3600.0) == 0.0


def test_refusal_rows_are_capped_per_uid_and_the_next_window_counts_the_rest() -> None:
    throttle = WrongSecretThrottle()
    decided = [throttle.refusal_row(ATTACKER, 10.0 + i * 0.05) for i in range(320)]  # 16 s at 20/s
    assert decided[:ROWS_PER_WINDOW] == [0] * ROWS_PER_WINDOW
    assert decided[ROWS_PER_WINDOW:] == [None] * (320 - ROWS_PER_WINDOW)
    assert throttle.refusal_row(OPERATOR, 20.0) == 0  # another uid's rows are its own
    assert throttle.refusal_row(ATTACKER, 10.0 + ROW_WINDOW_SECONDS) == 320 - ROWS_PER_WINDOW
    assert throttle.refusal_row(ATTACKER, 10.5 + ROW_WINDOW_SECONDS) == 0


def test_the_number_of_addresses_remembered_is_bounded() -> None:
    throttle = WrongSecretThrottle(max_addresses=10)
    for n in range(50):
        throttle.failed(n, float(n))
    assert throttle.addresses_remembered() == 10

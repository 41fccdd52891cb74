"""The slow-down for wrong secrets, decided by pure functions over a clock the test moves."""

from __future__ import annotations

from shared.web.throttle import PER_ADDRESS, Rule, Strikes, WrongSecretThrottle, after_failure, wait_left


def waits_after(failures: int, rule: Rule = PER_ADDRESS) -> list[float]:
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
        throttle.failed("127.0.0.1", 100.0)
    assert throttle.wait_left("127.0.0.1", 100.0) == 1.0
    assert throttle.wait_left("127.0.0.1", 100.5) == 0.5  # asking does not move it
    assert throttle.wait_left("127.0.0.1", 101.0) == 0.0


def test_a_right_entry_clears_the_address_and_idle_strikes_are_forgotten() -> None:
    throttle = WrongSecretThrottle()
    for _ in range(4):
        throttle.failed("127.0.0.1", 0.0)
    throttle.succeeded("127.0.0.1")
    assert throttle.wait_left("127.0.0.1", 0.0) == 0.0
    strikes = Strikes()
    for _ in range(3):
        strikes = after_failure(strikes, PER_ADDRESS, 0.0)
    later = after_failure(strikes, PER_ADDRESS, PER_ADDRESS.forget_after + 1)
    assert later.failures == 1 and wait_left(later, PER_ADDRESS.forget_after + 1) == 0.0


def test_many_addresses_together_meet_a_much_higher_ceiling() -> None:
    throttle = WrongSecretThrottle()
    for n in range(29):
        assert throttle.failed(f"127.0.0.{n + 2}", 50.0) == 0.0  # one wrong entry each: free
    assert throttle.failed("127.0.1.1", 50.0) == 1.0  # the 30th overall: everyone waits
    assert throttle.wait_left("127.0.9.9", 50.0) == 1.0
    assert throttle.wait_left("127.0.9.9", 51.0) == 0.0


def test_the_number_of_addresses_remembered_is_bounded() -> None:
    throttle = WrongSecretThrottle(max_addresses=10)
    for n in range(50):
        throttle.failed(f"127.0.0.{n}", float(n))
    assert throttle.addresses_remembered() == 10

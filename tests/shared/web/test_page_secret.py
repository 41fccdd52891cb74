"""The page secret: typed once per browser session, printed on a terminal, otherwise written to
a 0600 file whose path alone is printed, and deleted at a clean stop and at the next start."""

from __future__ import annotations

import io
import stat
from pathlib import Path

from shared.web.page_secret import ALPHABET, PageSecret, SecretSink, read_secret_file


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_secret_has_a_hundred_bits_in_groups_a_person_can_type() -> None:
    secret = PageSecret.new()
    groups = secret.shown().split("-")
    assert [len(g) for g in groups] == [4] * 5
    assert all(c in ALPHABET for c in "".join(groups))
    assert PageSecret.new().shown() != secret.shown()
    assert "shown" not in repr(secret) and secret.shown() not in repr(secret)


def test_a_secret_matches_whatever_the_case_spaces_or_dashes() -> None:
    secret = PageSecret("ABCDEFGHJKMNPQRSTUVW")
    assert secret.matches("abcd-efgh-jkmn-pqrs-tuvw")
    assert secret.matches(" ABCD EFGH JKMN PQRS TUVW\n")
    assert not secret.matches("ABCD-EFGH-JKMN-PQRS-TUVX")
    assert not secret.matches("")
    assert not secret.matches("ABCD-EFGH-JKMN-PQRS-TUVW" + " " * 300)


def test_off_a_terminal_the_secret_goes_to_a_private_file_and_only_its_path_is_printed(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    path = tmp_path / "state" / "approve-secret"
    sink = SecretSink.for_stream(path, out)
    secret = PageSecret.new()
    sink.publish(secret, "http://127.0.0.1:8767/")
    assert not sink.terminal
    assert read_secret_file(path) == secret.shown()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert str(path) in out.getvalue() and secret.shown() not in out.getvalue()
    sink.withdraw()
    assert not path.exists()


def test_a_file_left_by_an_earlier_run_is_replaced_at_start(tmp_path: Path) -> None:
    path = tmp_path / "approve-secret"
    path.write_text("OLD-SECRET\n")
    sink = SecretSink.for_stream(path, io.StringIO())
    secret = PageSecret.new()
    sink.publish(secret, "http://127.0.0.1:8767/")
    assert read_secret_file(path) == secret.shown()


def test_a_symlink_in_place_of_the_file_is_removed_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep me\n")
    path = tmp_path / "approve-secret"
    path.symlink_to(target)
    SecretSink.for_stream(path, io.StringIO()).publish(PageSecret.new(), "http://127.0.0.1:1/")
    assert target.read_text() == "keep me\n" and not path.is_symlink()


def test_on_a_terminal_the_secret_is_printed_once_and_no_file_is_written(tmp_path: Path) -> None:
    out = Terminal()
    path = tmp_path / "approve-secret"
    secret = PageSecret.new()
    SecretSink.for_stream(path, out).publish(secret, "http://127.0.0.1:8767/")
    assert out.getvalue().count(secret.shown()) == 1
    assert not path.exists()

"""Token slots: 0600 files in 0700 folders, no symlinks, owned by the folder's owner when root
writes them (``fleetwatch login`` on a server), and an inter-process lock beside each."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

import pytest

from shared.epiphan.slots import (
    SignIn,
    SlotError,
    lock_path,
    locked_slot,
    read_slot,
    remove_slot,
    slot_summary,
    write_slot,
)
from shared.errors import Code

SIGN_IN = SignIn("secret-token", server="http://127.0.0.1:1/mcp", refresh_token="r", expires_at=1.0)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_slot_is_written_0600_in_a_0700_folder_and_reads_back(tmp_path):
    slot = tmp_path / "tokens" / "read.json"
    write_slot(slot, SIGN_IN)
    assert (mode(slot), mode(slot.parent)) == (0o600, 0o700)
    assert read_slot(slot) == SIGN_IN
    assert "secret-token" not in repr(read_slot(slot))


def test_a_slot_others_may_read_or_reached_through_a_symlink_is_refused(tmp_path):
    slot = tmp_path / "tokens" / "read.json"
    write_slot(slot, SIGN_IN)
    slot.chmod(0o640)
    with pytest.raises(SlotError) as loose:
        read_slot(slot)
    link = tmp_path / "tokens" / "link.json"
    link.symlink_to(slot)
    with pytest.raises(SlotError) as linked:
        read_slot(link)
    with pytest.raises(SlotError):
        write_slot(link, SIGN_IN)
    assert (loose.value.code, linked.value.code) == (Code.CONFIG_INVALID, Code.UNSAFE_PATH)
    assert slot_summary(slot)["ok"] is False and slot_summary(tmp_path / "none.json")["present"] is False


@pytest.mark.skipif(os.geteuid() != 0, reason="root writes slots in place for the services")
async def test_root_writes_a_slot_and_its_lock_as_the_folder_owner(tmp_path):
    nobody = pwd.getpwnam("nobody").pw_uid
    folder = tmp_path / "executor" / "tokens"
    folder.mkdir(parents=True, mode=0o700)
    os.chown(folder, nobody, -1)
    slot = folder / "sandbox.json"
    async with locked_slot(slot):
        write_slot(slot, SIGN_IN)
    assert (slot.stat().st_uid, lock_path(slot).stat().st_uid) == (nobody, nobody)
    assert (mode(slot), mode(lock_path(slot))) == (0o600, 0o600)
    assert read_slot(slot) == SIGN_IN  # root reads a service's slot in place
    assert slot_summary(slot)["owner_uid"] == nobody


def test_a_symlinked_token_folder_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "tokens").symlink_to(elsewhere)
    with pytest.raises(SlotError) as caught:
        write_slot(tmp_path / "tokens" / "read.json", SIGN_IN)
    assert caught.value.code == Code.UNSAFE_PATH and list(elsewhere.iterdir()) == []


async def test_a_second_holder_of_the_lock_waits_and_gives_up_after_the_bound(tmp_path):
    slot = tmp_path / "tokens" / "read.json"
    async with locked_slot(slot):
        with pytest.raises(SlotError) as busy:
            async with locked_slot(slot, timeout_seconds=0.2):
                pass
    assert busy.value.code == Code.SIGN_IN_BUSY
    async with locked_slot(slot, timeout_seconds=0.2):
        pass  # free again


def test_removing_a_slot_says_whether_there_was_one(tmp_path):
    slot = tmp_path / "tokens" / "read.json"
    write_slot(slot, SIGN_IN)
    assert remove_slot(slot) is True and remove_slot(slot) is False


@pytest.mark.skipif(os.geteuid() != 0, reason="root removes a service's slot (fleetwatch logout on a server)")
def test_root_removing_a_slot_never_deletes_through_a_tokens_folder_swapped_for_a_symlink(tmp_path):
    """Issue 24 item 4: the service's user swaps ``tokens`` for a link between root's read and
    its unlink; the unlink must not land in the folder the link names."""
    nobody = pwd.getpwnam("nobody").pw_uid
    home = tmp_path / "executor"
    home.mkdir(mode=0o700)
    os.chown(home, nobody, -1)
    elsewhere = tmp_path / "roots-own"
    elsewhere.mkdir(mode=0o755)
    (elsewhere / "sandbox.json").write_text("root's file\n")
    (home / "tokens").symlink_to(elsewhere)
    os.lchown(home / "tokens", nobody, -1)  # planted by the service's user
    with pytest.raises(SlotError) as refused:
        remove_slot(home / "tokens" / "sandbox.json")
    assert refused.value.code == Code.UNSAFE_PATH and "tokens" in refused.value.message
    assert (elsewhere / "sandbox.json").read_text() == "root's file\n"

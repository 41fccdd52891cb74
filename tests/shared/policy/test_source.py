"""shared.policy.source: strict YAML with the line of every key."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.policy.source import MAX_BYTES, PolicyError, dotted, read_source


def write(tmp_path: Path, data: str | bytes) -> Path:
    path = tmp_path / "p.yaml"
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_every_key_and_list_item_keeps_its_line(tmp_path: Path) -> None:
    source = read_source(write(tmp_path, "# c\na:\n  b: 1\n  c:\n    - x\n    - y\nd: {e: 2}\n"))
    assert source.data == {"a": {"b": 1, "c": ["x", "y"]}, "d": {"e": 2}}
    assert [source.line_of(p) for p in [("a",), ("a", "b"), ("a", "c", 1), ("d", "e")]] == [2, 3, 6, 7]


def test_a_path_that_is_not_in_the_file_takes_the_line_of_its_nearest_ancestor(tmp_path: Path) -> None:
    source = read_source(write(tmp_path, "a: 1\nb:\n  c: 2\n"))
    assert source.line_of(("b", "missing", "deeper")) == 2
    assert source.line_of(("nowhere",)) == 1


def test_a_duplicate_key_in_a_flow_mapping_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="duplicate key 'e'") as caught:
        read_source(write(tmp_path, "a: 1\nd: {e: 2, e: 3}\n"))
    assert caught.value.line == 2


def test_a_merge_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="merge keys") as caught:
        read_source(write(tmp_path, "a: &x {b: 1}\nc:\n  <<: {b: 2}\n"))
    assert caught.value.line == 3


def test_a_file_that_is_not_utf8_is_refused_naming_the_line(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="not UTF-8") as caught:
        read_source(write(tmp_path, b"a: 1\nb: \xff\n"))
    assert caught.value.line == 2


def test_a_file_larger_than_the_cap_is_refused_unread(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="larger than"):
        read_source(write(tmp_path, "#" * (MAX_BYTES + 1)))


def test_a_yaml_error_message_holds_no_snippet_of_the_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        read_source(write(tmp_path, "a: 1\nb: secret-value: [\n"))
    assert caught.value.line == 2
    assert "secret-value" not in str(caught.value)


def test_dotted_paths_read_like_the_file() -> None:
    assert dotted(("propose", "batch_reboot", "target_fields", 0)) == "propose.batch_reboot.target_fields[0]"
    assert dotted(()) == "(top level)"
    assert dotted(("k" * 100,)) == "k" * 37 + "..."

"""``model_tools`` in ``policy.yaml``: ``all`` (the default) or ``per_question``; an override may
narrow all to per_question and never widen it back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shared.config import REPO_POLICY_DIR
from shared.policy.loader import load_policies
from shared.policy.source import PolicyError


def _folder(tmp_path: Path, model_tools: str | None) -> Path:
    folder = tmp_path / "policy"
    shutil.copytree(REPO_POLICY_DIR, folder)
    text = (folder / "policy.yaml").read_text()
    assert "\nmodel_tools: all\n" in text
    line = "" if model_tools is None else f"\nmodel_tools: {model_tools}\n"
    (folder / "policy.yaml").write_text(text.replace("\nmodel_tools: all\n", line or "\n"))
    return folder


def _override(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "override.yaml"
    path.write_text(text)
    return path


def test_the_shipped_policy_offers_every_tool_and_per_question_is_read():
    assert load_policies(REPO_POLICY_DIR)[0].model_tools == "all"


@pytest.mark.parametrize(("given", "read"), [(None, "all"), ("all", "all"), ("per_question", "per_question")])
def test_model_tools_defaults_to_all(tmp_path, given, read):
    assert load_policies(_folder(tmp_path, given))[0].model_tools == read


def test_an_unknown_model_tools_is_refused_naming_the_line(tmp_path):
    with pytest.raises(PolicyError, match="must be one of: all, per_question"):
        load_policies(_folder(tmp_path, "some"))


def test_an_override_narrows_all_to_per_question_and_never_widens_it_back(tmp_path):
    narrowed = load_policies(REPO_POLICY_DIR, _override(tmp_path, "model_tools: per_question\n"))[0]
    assert narrowed.model_tools == "per_question"
    base = _folder(tmp_path, "per_question")
    with pytest.raises(PolicyError, match="widens per_question to all"):
        load_policies(base, _override(tmp_path, "model_tools: all\n"))

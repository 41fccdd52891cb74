"""The live-run guide works as written, in both languages (issue 28 item 2): the lines it quotes
from ``fleetwatch capture`` are lines the tool prints in the guide's language (for the committed
campus capture), its replay command is the one the capture prints, and the lines it quotes
from ``up`` are the catalogue's in that language. That command running beside a demo:
``tests/e2e/test_replay_beside.py``."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from services.ctl.commands_capture import summary
from shared.epiphan.capture import Manifest
from shared.text.catalogue import translate

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "tests" / "fixtures" / "captures" / "campus" / "manifest.json"
GUIDES = {
    "en": (REPO / "docs" / "live-run.md", "/home/you/fleetwatch-captures/first-run", "## Replay it"),
    "es": (REPO / "docs" / "live-run.es.md", "/home/usted/fleetwatch-captures/primera", "## Reproducirla"),
}
REUSED = "Fleetwatch was already running here: the running services were reused, not restarted."
CHOSEN = "Ports in use elsewhere were replaced by free ones: %(ports)s."


def blocks(text: str, kind: str) -> list[list[str]]:
    """The fenced blocks of `kind` (``text``, ``sh``) in `text`, each as its lines."""
    return [b.strip("\n").splitlines() for b in re.findall(rf"```{kind}\n(.*?)```", text, re.S)]


def printed(language: str, folder: str) -> list[str]:
    manifest = msgspec.json.decode(MANIFEST.read_bytes(), type=Manifest)
    return summary(manifest, Path(folder), language=language).splitlines()


@pytest.mark.parametrize("language", list(GUIDES))
def test_the_guide_quotes_only_lines_capture_prints_in_its_language_in_order(language: str) -> None:
    guide, folder, _ = GUIDES[language]
    (quoted,) = blocks(guide.read_text(), "text")
    lines = printed(language, folder)
    positions = [lines.index(line) if line in lines else -1 for line in quoted]
    assert -1 not in positions, [q for q, at in zip(quoted, positions, strict=True) if at == -1]
    assert positions == sorted(positions)


@pytest.mark.parametrize("language", list(GUIDES))
def test_the_guides_replay_command_is_the_one_capture_prints(language: str) -> None:
    guide, folder, heading = GUIDES[language]
    text = guide.read_text()
    replay = text[text.index(heading) :]
    home = f"{Path(folder).parent.parent}/"  # the guide's ~/
    lines = printed(language, folder)
    command = blocks(replay, "sh")[0][0]
    assert f"  {command.replace('~/', home)}" in lines
    follow = blocks(replay, "sh")[1]
    assert [line.strip() for line in follow if line.strip()] == [
        line.strip().replace(home, "~/") for line in lines[-3:]
    ]


@pytest.mark.parametrize("language", list(GUIDES))
def test_the_lines_the_guide_quotes_from_up_are_the_catalogues_in_its_language(language: str) -> None:
    guide, _, _ = GUIDES[language]
    text = " ".join(guide.read_text().split())
    assert translate(language, REUSED) in text
    assert translate(language, CHOSEN).split("%(ports)s")[0] in text
    if language != "en":
        assert REUSED not in text and CHOSEN.split("%(ports)s")[0] not in text

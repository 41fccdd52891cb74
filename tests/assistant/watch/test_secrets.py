"""The watch's posts through the lab hold no secret a Pearl or Edge shape carried: every room's
name in a campus whose names carry a secret in every text shape (webhook addresses, ingest
paths, escaped URLs, masked values, SRT passphrases, stream URLs), read through the guarded read
client, posted to the console, Slack and Teams: the rooms are named, the secrets are not."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator

import msgspec
import pytest

from services.lab.scenario import Scenario, load_scenario
from services.lab.server import LabHandle, run_lab
from services.lab.state import LabClock
from shared.config import REPO_POLICY_DIR
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.policy.loader import load_policies
from tests.assistant.watch.helpers import NOW, beat
from tests.assistant.watch.test_destinations import notices, slack, teams

SHAPES = (
    "https://hooks.slack.com/services/T01/B02/{}",
    "https://discord.com/api/webhooks/1234/{}",
    "https://team.webhook.office.com/webhookb2/a@b/IncomingWebhook/{}/c",
    "https://whip.example.net/whip/{}",
    "rtmp:\\/\\/live.example.net\\/app\\/{}",
    "****{}",
    "passphrase {}",
    "srt://ingest.example.com:9000?streamid={}",
    "rtmp://live.example.net/app/{}",
)
"""Text shapes of a secret (`tests.corpus.redaction.SECRET_SHAPES` has them all)."""


def planted(scenario: Scenario) -> tuple[Scenario, dict[str, str]]:
    """The campus with each normal-team room's name followed by a secret in the next shape,
    and room name -> the secret it carries."""
    shapes, secrets = itertools.cycle(SHAPES), {}
    groups = []
    for g, group in enumerate(scenario.teams.normal.groups):
        devices = []
        for d, device in enumerate(group.devices):
            secret = f"Wk{g}x{d}Q7"
            secrets[device.name] = secret
            devices.append(
                msgspec.structs.replace(device, name=f"{device.name} {next(shapes).format(secret)}")
            )
        groups.append(msgspec.structs.replace(group, devices=tuple(devices)))
    normal = msgspec.structs.replace(scenario.teams.normal, groups=tuple(groups))
    return msgspec.structs.replace(
        scenario, teams=msgspec.structs.replace(scenario.teams, normal=normal)
    ), secrets


SCENARIO, SECRETS = planted(load_scenario("campus"))


@pytest.fixture
async def lab() -> AsyncIterator[LabHandle]:
    async with run_lab(SCENARIO, clock=LabClock(NOW, frozen=True)) as handle:
        yield handle


async def test_no_secret_in_a_room_s_name_reaches_a_post_and_the_rooms_are_still_named(
    make_watch, recorder, lab: LabHandle
):
    tools = load_policies(REPO_POLICY_DIR)[1]
    async with EpiphanReadClient(
        McpConnection(lab.mcp_url, lab.teams["normal"].token), tools.read_tools
    ) as reader:
        watch = await make_watch(reader=reader, destinations=[recorder, slack(lab), teams(lab)])
        await beat(watch)
    received = json.dumps((await notices(lab))["notices"], ensure_ascii=False)
    posted = "\n".join(repr(post) for post in recorder.posts) + received
    assert recorder.posts and len(SECRETS) == 30
    assert [s for s in SECRETS.values() if s in posted] == []
    named = [room for room in SECRETS if room in posted]
    assert len(named) >= 3, posted

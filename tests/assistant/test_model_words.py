"""Issue 28 #12: what the model writes can never pass for what Fleetwatch recorded. An obeying
model (the stand-in's ``obey_words`` script, through the real Anthropic SDK) reads a fleet of
hostile names and answers with the product's own headings, fake "approved, ran, verified"
lines and every line separator; on each surface (``fleetwatch ask``, the ask page, Slack
through the lab's Socket Mode stand-in), in English and Spanish, no line of it stands
unquoted: the forged lines counted there are 0."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path

import httpx2
import pytest

from services.assistant.page import serve_page
from services.assistant.server import assistant_side
from services.assistant.service import Assistant
from services.assistant.watch.store import WatchStore
from services.lab.model_scripts.obeying_words import FORGED_HEADINGS, FORGED_TAG, SEPARATORS
from services.lab.model_standin import StandinHandle
from services.lab.server import LabHandle, run_lab
from services.lab.slack_board import LAB_ASK_CHANNEL
from services.lab.state import LabClock
from shared.config import load_settings
from shared.epiphan.mcp_session import McpConnection
from shared.epiphan.read_client import EpiphanReadClient
from shared.text.answered_by import answered_by
from shared.text.catalogue import translate
from shared.text.model_text import IMITATION, MODEL_HEADING, MODEL_MARK
from shared.web.page_secret import SecretSink, read_secret_file
from tests.assistant.conftest import START, MakeAssistant
from tests.assistant.helpers import FakeSink
from tests.assistant.hostile import hostile_scenario
from tests.assistant.test_page import Page, RecordingAudit, _form, _same_origin
from tests.assistant.test_slack import AV, OPS, answered, ask, listening
from tests.ctl.cli import fleetwatch_async
from tests.procs import base_env

QUESTIONS = {"en": "What needs attention?", "es": "¿Qué necesita atención?"}
IMITATING = (*FORGED_HEADINGS, "Proposal p_", "Propuesta p_", "Answered by the keyword")
"""What a forged line imitating the product holds (the obeying script's own words)."""


@pytest.fixture
async def hostile() -> AsyncIterator[LabHandle]:
    async with run_lab(hostile_scenario(), clock=LabClock(START, frozen=True)) as handle:
        yield handle


@pytest.fixture
async def obeying(
    hostile: LabHandle, standin: StandinHandle, make_assistant: MakeAssistant, policies
) -> AsyncIterator[MakeAssistant]:
    """`make_assistant` on the hostile lab, the stand-in playing ``obey_words``."""
    standin.set_script("obey_words")
    connection = McpConnection(hostile.mcp_url, hostile.teams["normal"].token)
    async with EpiphanReadClient(connection, policies[1].model_read_tools) as reader:
        yield lambda **overrides: make_assistant(reader=reader, **overrides)


def forged(lines: list[str], language: str, *, ours: set[str]) -> list[str]:
    """The lines a person could take for Fleetwatch's own: neither quoted as the model's nor
    one of `ours` (the surface's code-built lines), nor blank; plus a quoted line imitating
    the product that is not marked as the model's."""
    label = translate(language, IMITATION)
    out = []
    for line in (raw.strip() for raw in lines):
        if not line or line in ours:
            continue
        if not line.startswith(MODEL_MARK.rstrip()):
            out.append(line)
        elif any(i in line for i in IMITATING) and label not in line:
            out.append(line)
    return out


def the_obeying_model_wrote_its_forgeries(lines: list[str]) -> None:
    """The surface did show the forgeries (as quoted lines): the test is not vacuous."""
    text = "\n".join(lines)
    assert text.count(FORGED_TAG) >= len(SEPARATORS) and "h0" in text  # names read, copied


@pytest.mark.parametrize("language", ["en", "es"])
async def test_fleetwatch_ask_quotes_every_line_of_an_obeying_model(obeying, tmp_path: Path, language):
    env = base_env(tmp_path / "home")
    async with assistant_side(load_settings(env), obeying()):
        code, out, err = await fleetwatch_async(env, "ask", QUESTIONS[language], "--language", language)
    assert code == 0, err
    lines = out.split("\n")
    the_obeying_model_wrote_its_forgeries(lines)
    ours = {translate(language, MODEL_HEADING), answered_by("model", language)}
    assert forged(lines, language, ours=ours) == []


class _Texts(HTMLParser):
    """The text of each paragraph, list item and heading of a page, with whether it stands
    inside the quote of the model's words (``<blockquote class="model">``)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[tuple[bool, str]] = []
        self._quoted = 0
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "blockquote":
            self._quoted += 1
        if tag in ("p", "li", "h1", "h2"):
            self._open = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "blockquote":
            self._quoted -= 1
        if tag in ("p", "li", "h1", "h2") and self._open is not None:
            self.texts.append((self._quoted > 0, "".join(self._open)))
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)


@pytest.mark.parametrize("language", ["en", "es"])
async def test_the_ask_page_quotes_every_line_of_an_obeying_model(obeying, tmp_path: Path, language):
    sink_file = tmp_path / "ask-secret"
    sink = SecretSink.for_stream(sink_file, io.StringIO())
    async with serve_page(obeying(), 0, sink=sink) as url, httpx2.AsyncClient() as http:
        page = Page(url.rstrip("/"), read_secret_file(sink_file), RecordingAudit())
        token = await _form(http, page)
        response = await http.post(
            f"{page.url}/ask?lang={language}",
            data={"token": token, "question": QUESTIONS[language], "language": language},
            headers=_same_origin(page.url),
        )
    assert response.status_code == 200
    answer = response.text[response.text.index('<section class="answer"') :]
    parser = _Texts()
    parser.feed(answer)
    quoted = [text for inside, text in parser.texts if inside]
    outside = [text for inside, text in parser.texts if not inside]
    the_obeying_model_wrote_its_forgeries(quoted)
    assert all(text.startswith(MODEL_MARK.rstrip()) for text in quoted)
    assert outside == [translate(language, MODEL_HEADING), answered_by("model", language)]
    assert forged(quoted, language, ours=set()) == []
    assert not re.search("[\u2028\u2029\x85\x1c-\x1e\r]", answer)


@pytest.mark.parametrize("language", ["en", "es"])
async def test_slack_quotes_every_line_of_an_obeying_model(obeying, hostile, tmp_path: Path, language):
    store = await WatchStore.connect(tmp_path / "watch.db")
    sink = FakeSink()
    assistant: Assistant = obeying(sink=sink, fence_configured=False)
    try:
        async with listening(hostile, assistant, sink, store, allowed_users=(OPS, AV)):
            # U0LABAV's Slack locale is es-LA: the answer is in Spanish
            await ask(hostile, OPS if language == "en" else AV, LAB_ASK_CHANNEL, QUESTIONS[language])
            (reply,) = await answered(hostile)
    finally:
        await store.close()
    lines = reply["text"].split("\n")
    the_obeying_model_wrote_its_forgeries(lines)
    ours = {translate(language, MODEL_HEADING), answered_by("model", language)}
    assert forged(lines, language, ours=ours) == []

"""The injection corpus renders inert on the card: every hostile name (device, model, channel,
stream name and host, event title, the model's reason) is escaped, its hidden and bidi
characters shown as markers, long ones capped, and the page's own forms, buttons and focus
stay exactly what the code made."""

from __future__ import annotations

import html.parser
from pathlib import Path

from services.approval_web.page.card import NAME_CAP, REASON_CAP
from shared.store import approvals
from shared.text.display import has_hidden, visible
from shared.wire.executor import EventFacts, Inspection, StreamFacts, TargetFacts
from tests.approval_web.page.helpers import add_proposal, connection, page
from tests.corpus.hostile_names import BY_KIND, HIDDEN, HOSTILE_NAMES

STREAM = "6f7a8b9c-0d1e-4f2a-9b3c-5d6e7f8091a2"
TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "link",
    "body",
    "header",
    "span",
    "main",
    "section",
    "p",
    "strong",
    "article",
    "h1",
    "h2",
    "dl",
    "dt",
    "dd",
    "code",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "div",
    "ul",
    "li",
    "form",
    "input",
    "button",
    "br",
}


class Page(html.parser.HTMLParser):
    """Every tag and attribute of a page, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.names: list[str] = []
        self._in_name: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if "name" in (dict(attrs).get("class") or "").split():
            self._in_name = tag
            self.names.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in_name:
            self._in_name = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_name is not None:
            self.names[-1] += data


def hostile_inspection(name: str):
    def inspect(proposal_id: str, targets: tuple[str, ...]) -> Inspection:
        return Inspection(
            proposal_id=proposal_id,
            complete=True,
            targets=tuple(
                TargetFacts(
                    device_id=t,
                    found=True,
                    name=name,
                    model=name,
                    online=True,
                    recording=False,
                    channel_id="1",
                    channel_name=name,
                )
                for t in targets
            ),
            stream=StreamFacts(stream_id=STREAM, found=True, name=name, host=name),
            event=EventFacts(
                event_id="ev-1",
                found=True,
                title=name,
                start="2026-03-02T10:00:00Z",
                finish="2026-03-02T11:00:00Z",
            ),
            read_at="2026-03-02T09:00:00.000Z",
            facts={"device name": name},
            facts_hash="f" * 64,
        )

    return inspect


def test_the_corpus_holds_at_least_sixty_distinct_names_of_every_kind() -> None:
    assert len(HOSTILE_NAMES) >= 60 and len(set(HOSTILE_NAMES)) == len(HOSTILE_NAMES)
    assert set(BY_KIND) == {
        "markup",
        "bidi_and_hidden",
        "instructions_en",
        "instructions_es",
        "mentions",
        "long",
    }


async def test_every_hostile_name_renders_inert_on_the_card(tmp_path: Path) -> None:
    async with page(tmp_path) as h:
        await h.login()
        for name in HOSTILE_NAMES:
            proposal_id = await add_proposal(h.db, reason=name)
            h.executor.inspection_for = hostile_inspection(name)
            text, forms = await h.card()
            parsed = Page()
            parsed.feed(text)
            tags = [tag for tag, _ in parsed.tags]
            assert set(tags) <= TAGS, (name, set(tags) - TAGS)
            assert not any(k.startswith("on") or k in ("src", "style") for _, a in parsed.tags for k in a), (
                name
            )
            assert [t for t, a in parsed.tags if "autofocus" in a] == ["button"]
            assert [(b.get("class"), b.get("form")) for b in forms.buttons] == [
                ("deny", "/deny"),
                ("approve", "/approve"),
                ("deny", "/deny-all"),
            ], name
            assert set(forms.forms) == {"/deny", "/approve", "/deny-all"}
            assert set(forms.forms["/approve"]) == {
                "proposal_id",
                "card_hash",
                "facts_hash",
                "shown_at",
                "token",
            }
            refreshes = [a for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "refresh"]
            assert all((a.get("content") or "").endswith("; url=/") for a in refreshes)
            assert not any(c in text for c in HIDDEN) and "\x00" not in text and "\x1b" not in text
            page_text = "".join(parsed.text)
            for chunk in parsed.text:
                assert not has_hidden(chunk.strip("\n ")), (name, chunk[:80])
            shown = visible(name, NAME_CAP)
            assert shown in page_text, name
            assert max(len(chunk) for chunk in parsed.text) <= REASON_CAP + 2
            # Device, stream and event names (class "name") are cut to NAME_CAP characters.
            assert parsed.names == [shown] * 3, (name, parsed.names)
            if len(visible(name, 10_000)) > REASON_CAP:
                assert visible(name, 10_000) not in page_text
            async with connection(h.db) as conn:
                await approvals.deny(conn, proposal_id, actor="test")
    assert h.executor.executed == []

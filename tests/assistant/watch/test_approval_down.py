"""The watch tells the operators when approval.sock stops answering for longer than a restart
takes (approval_web down: nothing can be approved or run), and when it answers again (issue
24 item 9: a service stopped for good was seen by nobody). A moment's outage, a restart, says
nothing."""

from __future__ import annotations

from services.assistant.watch.notices import DOWN_AFTER
from services.assistant.watch.post import plain_text
from services.lab.server import LabHandle
from shared.errors import Code
from tests.assistant.watch.helpers import MemoryProposals, Recorder, notices_of


async def test_approval_sock_silent_past_a_restart_is_said_once_and_its_return_once(
    make_watch, recorder: Recorder, lab: LabHandle
):
    proposals = MemoryProposals()
    watch = await make_watch(proposals=proposals)
    notices = notices_of(watch)
    await notices.poll()
    proposals.history_reply = Code.SERVICE_UNAVAILABLE
    await notices.poll()
    lab.advance(DOWN_AFTER.total_seconds() - 1)
    await notices.poll()
    await watch.outbox.drain()
    assert recorder.of("approval_down") == []  # as long as a restart takes: nothing said
    lab.advance(2)
    await notices.poll()
    await notices.poll()
    await watch.outbox.drain()
    (down,) = recorder.of("approval_down")
    assert not down.console_only  # to Slack and Teams too: the people who approve read those
    text = plain_text(down)
    assert "service_unavailable" in text and "fleetwatch status" in text
    proposals.history_reply = None
    await notices.poll()
    await notices.poll()
    await watch.outbox.drain()
    (back,) = recorder.of("approval_back")
    assert "answers again" in plain_text(back)


async def test_a_restarts_moment_of_silence_says_nothing(make_watch, recorder: Recorder, lab: LabHandle):
    proposals = MemoryProposals(history_reply=Code.SERVICE_UNAVAILABLE)
    watch = await make_watch(proposals=proposals)
    notices = notices_of(watch)
    await notices.poll()
    lab.advance(DOWN_AFTER.total_seconds() / 2)
    proposals.history_reply = None
    await notices.poll()
    lab.advance(DOWN_AFTER.total_seconds())
    proposals.history_reply = Code.SERVICE_UNAVAILABLE
    await notices.poll()  # a second outage counts from its own start
    await watch.outbox.drain()
    assert recorder.of("approval_down") == [] and recorder.of("approval_back") == []


async def test_the_approval_down_post_says_it_in_spanish(make_watch, recorder: Recorder, lab: LabHandle):
    from services.assistant.watch.heartbeat import WatchOptions

    proposals = MemoryProposals(history_reply=Code.SERVICE_UNAVAILABLE)
    watch = await make_watch(proposals=proposals, options=WatchOptions(language="es"))
    notices = notices_of(watch)
    await notices.poll()
    lab.advance(DOWN_AFTER.total_seconds() + 1)
    await notices.poll()
    await watch.outbox.drain()
    (down,) = recorder.of("approval_down")
    assert "no responde" in plain_text(down)

"""The tools offered to the model: static, read-only, ours."""

from __future__ import annotations

import json

from services.assistant.tools import (
    ASK_OPERATOR,
    GET_PROPOSAL_STATE,
    LIST_WRITABLE,
    PROPOSE_CHANGE,
    READ_TOOL_DEFINITIONS,
    ToolKind,
    kind_of,
    offered_names,
    tool_definitions,
)
from services.lab.tools import TOOLS
from shared.epiphan.read_client import WRITE_TOOLS_OF_EPIPHAN


def test_no_write_tool_and_no_picture_tool_is_ever_offered(policies):
    _, tool_policy = policies
    for may_propose in (True, False):
        names = offered_names(tool_definitions(tool_policy.model_read_tools, may_propose=may_propose))
        assert not names & WRITE_TOOLS_OF_EPIPHAN
        assert "get_channel_image" not in names


def test_the_nineteen_model_read_tools_are_offered_with_our_own_definitions(policies):
    _, tool_policy = policies
    definitions = tool_definitions(tool_policy.model_read_tools, may_propose=True)
    read = [d for d in definitions if d["name"] in tool_policy.model_read_tools]
    assert len(read) == 19 == len(tool_policy.model_read_tools)
    for definition in read:
        description, schema = READ_TOOL_DEFINITIONS[definition["name"]]
        assert definition["description"] == description and definition["input_schema"] == schema
        server_listing = TOOLS[definition["name"]].listing(older_shapes=False)
        assert definition["description"] != server_listing.description


def test_observe_mode_offers_no_propose_change_but_still_the_state_and_question_tools(policies):
    _, tool_policy = policies
    names = offered_names(tool_definitions(tool_policy.model_read_tools, may_propose=False))
    assert PROPOSE_CHANGE not in names and LIST_WRITABLE not in names
    assert {GET_PROPOSAL_STATE, ASK_OPERATOR} <= names


def test_the_writable_list_is_offered_with_propose_change_and_takes_no_arguments(policies):
    _, tool_policy = policies
    definitions = tool_definitions(tool_policy.model_read_tools, may_propose=True)
    names = [d["name"] for d in definitions]
    assert names[-2:] == [LIST_WRITABLE, PROPOSE_CHANGE]
    (listing,) = [d for d in definitions if d["name"] == LIST_WRITABLE]
    assert listing["input_schema"]["properties"] == {} and not listing["input_schema"]["additionalProperties"]
    assert "sandbox" in listing["description"] and "not changed" in listing["description"]


def test_only_the_last_definition_is_marked_for_caching_and_the_bytes_repeat(policies):
    _, tool_policy = policies
    first = tool_definitions(tool_policy.model_read_tools, may_propose=True)
    again = tool_definitions(frozenset(sorted(tool_policy.model_read_tools, reverse=True)), may_propose=True)
    assert [("cache_control" in d) for d in first] == [False] * (len(first) - 1) + [True]
    assert json.dumps(first) == json.dumps(again)


def test_a_name_that_was_not_offered_has_no_kind(policies):
    _, tool_policy = policies
    offered = offered_names(tool_definitions(tool_policy.model_read_tools, may_propose=False))
    assert kind_of("batch_reboot", offered) is None
    assert kind_of("get_channel_image", offered) is None
    assert kind_of("please_reboot_everything", offered) is None
    assert kind_of(PROPOSE_CHANGE, offered) is None
    assert kind_of(LIST_WRITABLE, offered) is None
    assert kind_of(LIST_WRITABLE, offered | {LIST_WRITABLE}) is ToolKind.RESOLVE
    assert kind_of("get_devices_in_my_team", offered) is ToolKind.RESOLVE
    assert kind_of("get_device_info", offered) is ToolKind.READ
    assert kind_of(ASK_OPERATOR, offered) is ToolKind.USER_INPUT
    assert kind_of(PROPOSE_CHANGE, offered | {PROPOSE_CHANGE}) is ToolKind.PROPOSE


def test_propose_change_offers_exactly_the_policys_proposable_tools(policies):
    """One source for what may be proposed (issue 28 walk item 9): the policy's ``propose``
    table, as ``fleetwatch writable`` lists it, is ``propose_change``'s ``tool`` enum."""
    _, tool_policy = policies
    definitions = tool_definitions(
        tool_policy.model_read_tools, may_propose=True, proposable=list(tool_policy.propose)
    )
    (propose,) = [d for d in definitions if d["name"] == "propose_change"]
    assert propose["input_schema"]["properties"]["tool"]["enum"] == sorted(tool_policy.propose)

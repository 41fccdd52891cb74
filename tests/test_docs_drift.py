"""The documents and the code, held to each other: a number, code, setting, tool, command or
page word that changes on one side only fails the build.

| fact | read from | held in |
|---|---|---|
| approval expiry, pending limit, hourly cap, denial pause, event windows (firmware: its own), the assistant's parallel cap | ``policy/*.yaml``, ``MAX_PARALLEL`` | the "Limits" tables of the operator guides (exact cells) and fixed phrases in the guides, SECURITY(.es).md and README.es.md |
| proposable tools, their card text, their disruptive rule | ``propose:`` in ``tool_policy.yaml``, the page's catalogue | the tool tables of the operator guides, the lists in SECURITY(.es).md |
| what is sent to the model and what never is | `shared.epiphan.model_data` (``SENT_TO_MODEL``, ``NEVER_SENT``) | the two lists in SECURITY(.es).md, word for word; ``fleetwatch doctor``'s "model data" line |
| read results reach the model one escaped block per tool result | `services.assistant.data_block` | a fixed phrase in README(.es).md, SECURITY(.es).md, docs/architecture.md |
| the audit row kinds | every ``kind=`` the code writes, `shared.store.audit_kinds` | the kinds tables of the operator guides |
| the refusal code per case of a tool that cannot be proposed | ``ToolPolicy.rule_for`` and ``tool_policy.yaml`` | the refusal tables of the operator guides |
| error codes | `shared.errors` | ``docs/error-codes.md`` (generated; both directions) |
| settings | `shared.config.SETTINGS` | ``docs/settings.md`` (generated); every ``FLEETWATCH_*`` any document names |
| commands and flags | ``fleetwatch``'s parser | every ``fleetwatch ...`` in a document's code |
| the page's words | the page's catalogues | every “quoted” phrase in the operator guides |
| paths | the checkout | every backticked repository path in a document |

Regenerate the generated pages with ``python -m shared.errors > docs/error-codes.md`` and
``python -m shared.config > docs/settings.md``.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from services.assistant.pipeline import MAX_PARALLEL
from services.ctl.doctor import model_data_line
from services.ctl.main import build_parser
from services.lab.__main__ import build_parser as lab_parser
from shared.config import REPO_POLICY_DIR, SETTINGS, settings_markdown
from shared.epiphan.model_data import NEVER_SENT, SENT_TO_MODEL
from shared.errors import MEANINGS, Code, FleetwatchError, error_codes_markdown
from shared.policy.loader import ProposeRule, load_policies
from shared.store.audit_kinds import AUDIT_KINDS
from shared.text.catalogue import LOCALES_DIR, Lexicon, load_translations

ROOT = Path(__file__).resolve().parent.parent
POLICY, TOOL_POLICY = load_policies(REPO_POLICY_DIR)
GUIDE, GUIDE_ES = "docs/operator-guide.md", "docs/operator-guide.es.md"
DOCUMENTS = sorted(
    {
        *(p.relative_to(ROOT).as_posix() for p in ROOT.glob("*.md")),
        *(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")),
    }
)


def minutes(seconds: int) -> str:
    return f"{seconds / 60:g}"


FACTS = {
    "ttl": minutes(POLICY.limits.approval_ttl_seconds),
    "life": minutes(POLICY.limits.proposal_ttl_seconds),
    "max_pending": POLICY.limits.max_pending,
    "per_hour": POLICY.limits.per_hour,
    "denials": POLICY.limits.denials_before_pause,
    "pause": POLICY.limits.denial_pause_minutes,
    "window": POLICY.limits.denial_window_minutes,
    "lead": POLICY.lead_minutes,
    "firmware": TOOL_POLICY.propose["batch_firmware_update"].window_minutes(POLICY.lead_minutes),
    "parallel": MAX_PARALLEL,
}
"""Each number a document states, read from where the code reads it."""

LIMITS = {
    GUIDE: {
        "An approval expires": "{ttl} minutes after its card was shown",
        "A proposal nobody decided expires": "{life} minutes after it was proposed",
        "Proposals waiting at once": "{max_pending}",
        "Proposals per hour": "{per_hour} (denied ones do not count)",
        "Denial pause": "after {denials} denials of the same tool and target within {window} minutes, {pause} minutes from the last",
        "Window before an event": "{lead} minutes",
        "Window before an event, firmware update": "{firmware} minutes",
        "The assistant's tool calls at once": "{parallel}",
    },
    GUIDE_ES: {
        "Una aprobación vence": "{ttl} minutos después de mostrarse su tarjeta",
        "Una propuesta sin decidir vence": "{life} minutos después de proponerse",
        "Propuestas en espera a la vez": "{max_pending}",
        "Propuestas por hora": "{per_hour} (las rechazadas no cuentan)",
        "Pausa por rechazos": "tras {denials} rechazos de la misma herramienta sobre el mismo dispositivo en {window} minutos, {pause} minutos desde el último",
        "Ventana antes de un evento": "{lead} minutos",
        "Ventana antes de un evento, actualización de firmware": "{firmware} minutos",
        "Llamadas a herramientas del asistente a la vez": "{parallel}",
    },
}
"""The "Limits" table of each operator guide: first cell -> second cell, exactly."""
LIMITS_HEADING = {GUIDE: "## Limits", GUIDE_ES: "## Límites"}

EN = {
    "ttl": "An approval expires {ttl} minutes after its card was shown",
    "unreviewed": "expires {life} minutes after it was proposed",
    "max_pending": "at most {max_pending} proposals wait at once",
    "per_hour": "at most {per_hour} proposals an hour",
    "pause": "after {denials} denials of the same tool and target within {window} minutes, such proposals "
    "pause for {pause} minutes from the last of them",
    "windows": "({lead} minutes; {firmware} minutes for a firmware update",
    "parallel": "at most {parallel} tool calls at once",
}
ES = {
    "ttl": "Una aprobación vence {ttl} minutos después de mostrarse su tarjeta",
    "unreviewed": "vence {life} minutos después de proponerse",
    "max_pending": "como máximo {max_pending} propuestas en espera a la vez",
    "per_hour": "como máximo {per_hour} propuestas por hora",
    "pause": "tras {denials} rechazos de la misma herramienta sobre el mismo dispositivo en {window} minutos, "
    "esas propuestas se pausan {pause} minutos desde el último",
    "windows": "({lead} minutos; {firmware} minutos para una actualización de firmware",
    "parallel": "como máximo {parallel} llamadas a herramientas a la vez",
}
PHRASES = {
    GUIDE: [EN[k] for k in ("ttl", "unreviewed", "max_pending", "per_hour", "pause", "windows")],
    GUIDE_ES: [ES[k] for k in ("ttl", "unreviewed", "max_pending", "per_hour", "pause", "windows")],
    "SECURITY.md": [EN[k] for k in ("ttl", "max_pending", "per_hour", "pause", "windows", "parallel")],
    "SECURITY.es.md": [ES[k] for k in ("ttl", "max_pending", "per_hour", "pause", "windows", "parallel")],
    "README.es.md": [ES[k] for k in ("ttl", "max_pending", "per_hour", "pause")],
}
"""The fixed phrases each document states its numbers in (case and line breaks ignored)."""


# --- reading documents ---------------------------------------------------------------------


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    """`text` in one line, whitespace collapsed, case folded: a phrase may wrap anywhere."""
    return " ".join(text.split()).casefold()


def section(text: str, heading: str) -> str:
    """The lines under the Markdown `heading` (``## Limits``), up to the next heading of its
    level or higher. AssertionError when the heading is missing."""
    lines = text.splitlines()
    assert heading in lines, f"no heading {heading!r}"
    level = heading.split(" ", 1)[0]
    body = []
    for line in lines[lines.index(heading) + 1 :]:
        mark = line.split(" ", 1)[0]
        if mark and set(mark) == {"#"} and len(mark) <= len(level):
            break
        body.append(line)
    return "\n".join(body)


def table(text: str) -> list[list[str]]:
    """The body rows of the first Markdown table in `text`, as stripped cells."""
    rows: list[str] = []
    for line in text.splitlines():
        if line.strip().startswith("|"):
            rows.append(line.strip())
        elif rows:
            break
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row.strip("|"))] for row in rows]
    return [row for row in cells[1:] if not set("".join(row)) <= set("-: ")]


def code_texts(text: str) -> Iterator[str]:
    """Each piece of code in a document: the lines of fenced blocks and inline code spans."""
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
    for block in fenced.findall(text):
        yield from (line.split(" #", 1)[0] for line in block.splitlines())
    yield from re.findall(r"`([^`\n]+)`", fenced.sub("", text))


# --- numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize("document", sorted(LIMITS))
def test_the_limits_table_states_the_numbers_the_policy_and_code_use(document):
    rows = table(section(read(document), LIMITS_HEADING[document]))
    stated = {row[0]: row[1] for row in rows}
    expected = {label: value.format(**FACTS) for label, value in LIMITS[document].items()}
    assert stated == expected


@pytest.mark.parametrize("document", sorted(PHRASES))
def test_each_document_states_the_limits_in_its_fixed_phrases(document):
    text = flat(read(document))
    missing = [p.format(**FACTS) for p in PHRASES[document] if flat(p.format(**FACTS)) not in text]
    assert missing == []


# --- proposable tools ---------------------------------------------------------------------


def disruptive_words(rule: ProposeRule, language: str) -> str:
    """The tool table's "disruptive" cell for `rule`."""
    if not rule.disruptive:
        return "no"
    if rule.disruptive_when:
        joiner, verb, head = (" or ", "is", "only when ") if language == "en" else (" o ", "es", "solo si ")
        return head + "; ".join(
            f"`{name}` {verb} " + joiner.join(f"`{v}`" for v in sorted(values))
            for name, values in sorted(rule.disruptive_when.items())
        )
    return "yes" if language == "en" else "sí"


TOOL_TABLES = {GUIDE: ("## What can be proposed", "en"), GUIDE_ES: ("## Qué se puede proponer", "es")}


@pytest.mark.parametrize("document", sorted(TOOL_TABLES))
def test_the_tool_table_lists_exactly_the_proposable_tools_with_the_cards_words(document):
    heading, language = TOOL_TABLES[document]
    says = load_translations()[language].gettext
    rows = {row[0].strip("`"): (row[1], row[2]) for row in table(section(read(document), heading))}
    expected = {
        tool: (says(rule.summary), disruptive_words(rule, language))
        for tool, rule in TOOL_POLICY.propose.items()
    }
    assert rows == expected


@pytest.mark.parametrize(
    ("document", "heading"),
    [("SECURITY.md", "### Proposable tools"), ("SECURITY.es.md", "### Herramientas que se pueden proponer")],
)
def test_the_security_policy_lists_exactly_the_proposable_tools(document, heading):
    body = section(read(document), heading)
    listed = re.findall(r"^- `([a-z_]+)`", body, re.M)
    assert sorted(listed) == sorted(TOOL_POLICY.propose) and len(listed) == len(set(listed))


# --- what is sent to the model ------------------------------------------------------------

MODEL_DATA_LISTS = {
    "SECURITY.md": ("en", "### Sent to the model", "### Never sent to the model"),
    "SECURITY.es.md": ("es", "### Lo que se envía al modelo", "### Lo que nunca se envía al modelo"),
}


def bullets(text: str) -> list[str]:
    """The items of the Markdown bullet lists in `text`, each one `flat` (wrapped lines joined)."""
    items: list[str] = []
    for line in text.splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
    return [flat(item) for item in items]


@pytest.mark.parametrize("document", sorted(MODEL_DATA_LISTS))
def test_the_security_policy_lists_exactly_what_is_sent_to_the_model_and_what_never_is(document):
    language, sent, never = MODEL_DATA_LISTS[document]
    text = read(document)
    says = load_translations()[language].gettext
    assert bullets(section(text, sent)) == [flat(says(item)) for item in SENT_TO_MODEL]
    assert bullets(section(text, never)) == [flat(says(item)) for item in NEVER_SENT]


def test_doctor_names_exactly_the_same_lists_in_the_same_order():
    line = model_data_line()
    sent, never = line.split(" Never sent: ")
    assert sent.split(": ", 1)[1].rstrip(".").split("; ") == list(SENT_TO_MODEL)
    assert never.split(". Turn it off")[0].split("; ") == list(NEVER_SENT)


def test_the_list_check_sees_a_missing_or_extra_item():
    listed = "\n".join(f"- {item}" for item in SENT_TO_MODEL)
    assert bullets(listed) == [flat(item) for item in SENT_TO_MODEL]
    assert bullets(listed + "\n- serial numbers") != [flat(item) for item in SENT_TO_MODEL]
    assert bullets("\n".join(listed.splitlines()[1:])) != [flat(item) for item in SENT_TO_MODEL]


# --- generated pages: error codes and settings ----------------------------------------------


def test_the_error_code_page_is_the_generated_one():
    assert read("docs/error-codes.md") == error_codes_markdown(), (
        "run: python -m shared.errors > docs/error-codes.md"
    )


def test_every_registered_code_is_on_the_error_code_page_and_no_other():
    rows = table(read("docs/error-codes.md"))
    listed = {row[0].strip("`"): row[1] for row in rows}
    assert sorted(listed) == sorted(c.value for c in Code), "a code is missing from the page, or unknown"
    assert all(listed[c.value] == MEANINGS[c] for c in Code)


def test_the_settings_page_is_the_generated_one_and_documents_every_setting():
    text = read("docs/settings.md")
    assert text == settings_markdown(), "run: python -m shared.config > docs/settings.md"
    listed = [row[0].strip("`") for row in table(text)]
    assert listed == [s.name for s in SETTINGS]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_setting_a_document_names_exists(document):
    named = set(re.findall(r"\bFLEETWATCH_[A-Z][A-Z0-9_]*[A-Z0-9]\b", read(document)))
    assert named - {s.name for s in SETTINGS} == set()


# --- commands, paths, page words --------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> Mapping[str, argparse.ArgumentParser]:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return found[0].choices if found else {}


def command_problems(code: str, top: argparse.ArgumentParser) -> list[str]:
    """What in one piece of code names a ``fleetwatch`` command or flag the parser lacks.
    ``a / b`` names alternatives at the same level (``fleetwatch pause / resume``)."""
    problems = []
    for match in re.finditer(r"(?:^|(?<=[\s(/]))fleetwatch(?=\s|$)((?:\s+[^\s;&|]+)*)", code):
        levels, descend = [(top, "fleetwatch")], True
        for raw in match.group(1).split():
            parser, path = levels[-1]
            token = raw.strip("[]()<>,.:")
            if token == "/" and len(levels) > 1:
                levels.pop()
                descend = True
            elif not token or token in ("...", "…", "/"):
                continue
            elif token.startswith("-"):
                flags = {f for a in parser._actions for f in a.option_strings}
                if token.split("=")[0] not in flags:
                    problems.append(f"{path} has no flag {token}")
            elif descend and _subcommands(parser):
                if token not in _subcommands(parser):
                    problems.append(f"{path} has no command {token}")
                    break
                child = lab_parser() if token == "lab" else _subcommands(parser)[token]  # the lab's own flags
                levels.append((child, f"{path} {token}"))
            else:
                descend = False  # an argument (an ID, a question): no more commands after it
    return problems


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_fleetwatch_command_and_flag_a_document_shows_exists(document):
    top = build_parser()
    problems = [p for code in code_texts(read(document)) for p in command_problems(code, top)]
    assert problems == []


def test_the_command_check_sees_a_missing_command_and_flag():
    top = build_parser()
    assert command_problems("fleetwatch approve 7", top) == ["fleetwatch has no command approve"]
    assert command_problems("sudo fleetwatch login --sandbox --yes", top) == [
        "fleetwatch login has no flag --yes"
    ]
    assert command_problems("fleetwatch pending show ID --json", top) == []
    assert command_problems("fleetwatch pending / deny / audit", top) == []
    assert command_problems("fleetwatch pending / approve", top) == ["fleetwatch has no command approve"]
    assert command_problems("/etc/fleetwatch/fleetwatch.env fleetwatch-host", top) == []
    assert command_problems("fleetwatch lab --capture DIR --port 0", top) == []
    assert command_problems("fleetwatch lab --captured DIR", top) == ["fleetwatch lab has no flag --captured"]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_repository_path_a_document_names_exists(document):
    paths = re.findall(
        r"`((?:services|shared|tests|policy|deploy|docs|scripts|bench)/[\w/.*-]*)`", read(document)
    )
    assert [p for p in paths if "*" not in p and not (ROOT / p).exists()] == []


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_relative_link_in_a_document_leads_to_a_file(document):
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", read(document))
    local = [link for link in links if "://" not in link and not link.startswith("mailto:")]
    assert [link for link in local if not (ROOT / document).parent.joinpath(link).exists()] == []


def page_words(language: str) -> list[str]:
    """Every message of the page's catalogue in `language` (English: the IDs, or a keyed entry's words), parameters as …."""
    with (LOCALES_DIR / language / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        catalog = read_po(handle, locale=language)
    texts = []
    for message in catalog:
        if not message.id:
            continue
        found = message.string if any(message.string) else message.id  # a keyed entry: its words
        texts += [found] if isinstance(found, str) else list(found)
    return [" ".join(re.sub(r"%\(\w+\)[sd]", "…", t).split()) for t in texts if t]


@pytest.mark.parametrize(("document", "language"), [(GUIDE, "en"), (GUIDE_ES, "es")])
def test_every_quoted_page_word_in_the_operator_guide_is_on_the_page(document, language):
    words = page_words(language)
    quoted = {" ".join(q.split()) for q in re.findall(r"“([^”]+)”", read(document))}
    assert len(quoted) > 20
    assert sorted(q for q in quoted if not any(q in w for w in words)) == []


# --- audit kinds, refusal codes per case, the model's data blocks ---------------------------------

AUDIT_WRITERS = ("append_audit", "_close_pending", "_record_as_sent")
"""Calls that write an audit row of the ``kind=`` they are given."""


def _string_constants(tree: ast.Module, *, top_level: bool = False) -> dict[str, str]:
    """The names bound to a string constant in `tree` (with `top_level`, only the module's own
    upper-case constants: what another module may import)."""
    return {
        t.id: node.value.value
        for node in (tree.body if top_level else ast.walk(tree))
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name) and (t.id.isupper() or not top_level)
    }


def kinds_written_by_the_code() -> set[str]:
    """Every ``kind=`` an audit-writing call in ``services/`` and ``shared/`` passes: a string,
    or a constant holding one (the module's own, else one of ``shared/``'s, imported; the lab
    writes no audit)."""
    paths = [
        path
        for top in ("services", "shared")
        for path in (ROOT / top).rglob("*.py")
        if "services/lab/" not in path.as_posix()
    ]
    trees = {path: ast.parse(path.read_text(), str(path)) for path in paths}
    shared_constants: dict[str, str] = {}
    for path, tree in trees.items():
        if path.is_relative_to(ROOT / "shared"):
            shared_constants |= _string_constants(tree, top_level=True)
    found: set[str] = set()
    for tree in trees.values():
        constants = shared_constants | _string_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name not in AUDIT_WRITERS:
                continue
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg != "kind":
                    continue
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.add(value.value)
                elif isinstance(value, ast.Name) and value.id in constants:
                    found.add(constants[value.id])
    return found


def test_the_audit_kinds_table_is_every_kind_the_code_writes():
    assert kinds_written_by_the_code() == set(AUDIT_KINDS)


AUDIT_KIND_TABLES = {
    GUIDE: ("### Audit row kinds", "en"),
    GUIDE_ES: ("### Tipos de filas de auditoría", "es"),
}


@pytest.mark.parametrize("document", sorted(AUDIT_KIND_TABLES))
def test_the_operator_guide_lists_exactly_the_audit_kinds_with_their_meaning(document):
    heading, language = AUDIT_KIND_TABLES[document]
    rows = {row[0].strip("`"): row[1] for row in table(section(read(document), heading))}
    meanings = Lexicon("audit row")[language]
    assert rows == {kind: meanings[kind] for kind in AUDIT_KINDS}


REFUSAL_TABLES = {GUIDE: "## What can be proposed", GUIDE_ES: "## Qué se puede proponer"}


def refusal_rows(document: str) -> list[tuple[list[str], str]]:
    """The second table under the document's proposable-tools heading: (tools named, code)."""
    body = section(read(document), REFUSAL_TABLES[document])
    second = body.split("\n\n")
    tables = [part for part in second if part.lstrip().startswith("|")]
    assert len(tables) == 2, f"{document}: the tool table and the refusal table"
    return [(re.findall(r"`([a-z_]+)`", row[0]), row[1].strip("`")) for row in table(tables[1])]


@pytest.mark.parametrize("document", sorted(REFUSAL_TABLES))
def test_the_refusal_codes_per_case_are_the_policys(document):
    rows = refusal_rows(document)
    unreviewed = TOOL_POLICY.write_tools - set(TOOL_POLICY.propose) - TOOL_POLICY.never_proposable
    assert [sorted(tools) for tools, _ in rows[:2]] == [
        sorted(TOOL_POLICY.never_proposable),
        sorted(unreviewed),
    ], "the never-proposable tools, then every other unreviewed write tool"
    assert rows[2][0] == []  # read tools and unknown names: no list
    for tools, code in rows[:2]:
        for tool in tools:
            with pytest.raises(FleetwatchError) as caught:
                TOOL_POLICY.rule_for(tool)
            assert caught.value.code == code, tool
    for tool in ("get_device_info", "kb_search", "reboot_everything"):
        with pytest.raises(FleetwatchError) as caught:
            TOOL_POLICY.rule_for(tool)
        assert caught.value.code == rows[2][1], tool


DATA_BLOCK_PHRASES = {
    "README.md": "each tool result in its own escaped data block",
    "SECURITY.md": "each tool result inside its own escaped data block",
    "README.es.md": "cada resultado de herramienta en su propio bloque de datos escapado",
    "SECURITY.es.md": "cada resultado de herramienta dentro de su propio bloque de datos escapado",
    "docs/architecture.md": "one escaped data block per tool result",
}
"""How each document says read results reach the model: one block per tool result (the
assistant's `services.assistant.data_block`), never "one block" for them all."""


def test_every_tool_result_reaches_the_model_in_its_own_data_block():
    assert (
        "Every tool result (data or error) becomes exactly one block"
        in (ROOT / "services" / "assistant" / "data_block.py").read_text()
    )
    for document, phrase in DATA_BLOCK_PHRASES.items():
        text = flat(read(document))
        assert flat(phrase) in text, document
        assert "inside one quoted data block;" not in text and "inside one escaped block" not in text, (
            document
        )


# --- the sockets' messages in docs/deploy.md ------------------------------------------------------


def test_deploy_lists_every_message_each_socket_accepts_and_which_the_assistant_may_send() -> None:
    """docs/deploy.md's table of socket messages equals each socket's request union (both ways),
    and its "assistant's user" column equals what approval.sock lets the assistant's uid send."""
    from services.approval_web.intake import ASSISTANT_OPERATIONS
    from shared.wire import approval, assistant, executor

    rows = table(section(read("docs/deploy.md"), "### What each socket accepts"))
    listed: dict[str, set[str]] = {}
    for socket, message, *_ in rows:
        listed.setdefault(socket.strip("`"), set()).add(message.strip("`"))
    expected = {
        "executor.sock": {r.__name__ for r in executor.REQUESTS},
        "approval.sock": {r.__name__ for r in approval.REQUESTS},
        "assistant.sock": {r.__name__ for r in assistant.REQUESTS},
    }
    assert listed == expected
    assert "InspectProposal" in listed["approval.sock"] and "Inspect" in listed["executor.sock"]
    by_assistant = {
        row[1].strip("`") for row in rows if row[0] == "`approval.sock`" and "assistant" in row[3]
    }
    assert by_assistant == {r.__name__ for r in ASSISTANT_OPERATIONS}

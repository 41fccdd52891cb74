"""What a person reads: fleet text made safe to show, and the fleet's wording in two languages.

Layers (each imports only those below it)::

    fleet_answers.py  sentences about a fleet, topic by topic (the keyword answer)
    wording.py  change_words.py  fleet_words.py
                      shared phrases: times, events, priorities | changes and refusals in words
                      for the assistant's code-built lines (what a change does, in which room;
                      why a change was not proposed) | the fleet answers' headings and phrases
                      (keyed catalogue entries, every language's words in the .po: `Lexicon`)
    changes.py  refusals.py  model_text.py  deciders.py
                      a change in words for the page and the CLI: its title with the room, what
                      happens, its risk; every name in the reader's quote marks (`quoted_name`,
                      the one quoting helper of every surface) | why a change was refused or could not run, for each
                      code (catalogue `Words`) | the model's words quoted, one rule for every
                      surface (a line imitating the product marked) | who decided a change and
                      where, by account (the page's outcome and ``fleetwatch audit tail``)
    answered_by.py  ask_words.py
                      who answered a question (the ask page and ``fleetwatch ask``) | why a
                      question cannot be asked, the same words on both
    catalogue.py      the one translator-editable catalogue (locales/*/LC_MESSAGES/messages.po):
                      `Words`, `Moment`, `N_`, `C_`, `keyed` and `Lexicon` (a code's, an enum
                      value's or a table's words, keyed by it), plain-text `say_text` (the page,
                      the CLI and the assistant's fixed words)
    times.py  accept_language.py
                      times in the operator's zone, one format, relative where it helps;
                      numbers as each language writes them | a page's language for a request
                      (``?lang=``, cookie, ``Accept-Language``)
    command_line.py   a ``fleetwatch`` command as a surface prints it (the reader's language
                      and home kept)
    display.py  questions.py  languages.py
                      the one escaping helper (`visible` for text, `safe_json` for JSON; `width`
                      on a terminal) | what a question is about | the languages, declared once

May import `shared.canonical` (the hidden characters), `shared.language_tags` (the languages)
and `shared.epiphan` (the snapshot).
"""

"""What a person reads: fleet text made safe to show, and the fleet's wording in two languages.

Layers (each imports only those below it)::

    fleet_answers.py  sentences about a fleet, topic by topic (the keyword answer, the demo model)
    wording.py  change_words.py
                      shared phrases: times, events, priorities | changes and refusals in words
                      (what a change does, in which room; why a change was not proposed)
    display.py  fleet_words.py  questions.py  languages.py
                      the one escaping helper (`visible` for text, `safe_json` for JSON) | the
                      words per language | what a question is about | the languages, declared once

May import `shared.canonical` (the hidden characters) and `shared.epiphan` (the snapshot).
"""

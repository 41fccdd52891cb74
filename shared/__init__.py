"""Code used by more than one process, in rooms. Each room's ``__init__`` is its map.

Rooms, each importing only the ones below it (an import contract in ``pyproject.toml`` holds
this, and that nothing here imports `services`)::

    store/  wire/        the SQLite store (schema, approval state, audit chain) | the sockets
                         (framing, server, client, one contract module per socket)
    text/                what a person reads: hidden characters made visible, fleet wording,
                         changes and refusals in words
    epiphan/  web/       Epiphan Edge: MCP session, guarded read client, shapes, redaction,
                         capture, sign-in and token slots | local HTTP pages: guards, serving,
                         the one stylesheet
    binding.py  config.py  policy/
                         the bound record and its seal | the settings table | the policy files
    canonical.py  ids.py  language_tags.py  private_files.py  sqlite.py  spelling.py
                         the one canonical form | Epiphan's ID formats | the languages and how a
                         person names one (``ES``, ``es_MX.UTF-8``, a locale) | files a process
                         keeps for itself and files root writes, never through a planted link |
                         SQLite as every store uses it (WAL, ``BEGIN IMMEDIATE``, the database
                         clock, migrations) | the known word nearest to a misspelt one (did you
                         mean)
    errors.py            the stable codes and the exception tree

A module used by one service lives in that service, not here.
"""

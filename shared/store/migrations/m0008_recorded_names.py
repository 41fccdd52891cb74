"""Schema version 8: the names a proposal was made with (issue 28).

- ``proposals.names_json``: the rooms' and channels' names the executor read at Prepare, as
  binding-fact keys (``device <id> name``, ``device <id> channel <n> name``: display text;
  NULL before this version). Every page, outcome and command names a proposal's rooms from it,
  whoever decided and whatever ended it.
"""

SQL = """
ALTER TABLE proposals ADD COLUMN names_json TEXT;
"""

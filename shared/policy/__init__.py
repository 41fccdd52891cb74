"""The policy files: ``policy/policy.yaml`` and ``policy/tool_policy.yaml``, loaded strictly.

Layers (each imports only those below it)::

    loader.py    the public face: `load_policy`, `load_tool_policy`, `load_policies`
    override.py  the optional override file, which may only narrow
    parse.py     parsing both files into the frozen model (the design's numbers are ceilings)
    | definitions.py  Epiphan's tool list compared with the reviewed one (pinned definitions)
    model.py     the frozen data, and how a loaded rule judges a call
    schema.py    the reviewed subset of JSON Schema for proposable tools' arguments
    source.py    reading YAML strictly, with the line of every key

The files themselves are the checkout's ``policy/``; an installed package carries a copy as the
data package ``shared.policy.shipped`` (``pyproject.toml`` maps it), and
`shared.config.DEFAULT_POLICY_DIR` picks the checkout's folder when there is one, else that copy.

May import `shared.errors` and `shared.ids`.
"""

"""The page's root exception (see the package docstring for when it is raised)."""

from __future__ import annotations

from shared.errors import FleetwatchError


class PageError(FleetwatchError):
    """The page could not start: ``socket_in_use`` (the port is taken) or ``internal_error``
    (the secret file cannot be written); the message names the port or the file."""

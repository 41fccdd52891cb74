"""The page's root exception (see the package docstring for when it is raised)."""

from __future__ import annotations

from services.approval_web import ApprovalWebError


class PageError(ApprovalWebError):
    """The page could not start: ``socket_in_use`` (the port is taken) or ``internal_error``
    (the secret file cannot be written); the message names the port or the file."""

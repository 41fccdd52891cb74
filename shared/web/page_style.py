"""The one stylesheet of Fleetwatch's local pages (the approval page and the ask page), so both
look like one product. Served as ``/page.css`` by each page; no script, colours and labels are
the pages' own, never the model's.

`PAGE_CSS` is the file (``shared/web/static/page.css``, package data); `page_css` its bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

PAGE_CSS: Final = Path(__file__).resolve().parent / "static" / "page.css"


def page_css() -> bytes:
    """The stylesheet's bytes (read once by each page at start)."""
    return PAGE_CSS.read_bytes()

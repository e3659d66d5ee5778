"""``boilerstrip check``: judge a crawl's JSONL (ours or another tool's) per site; pure, writes nothing.

:func:`check_records` builds the report (a dict, JSON-ready); :func:`render_html` makes it one
self-contained HTML page (inline SVG plots, no external assets). The command is
``boilerstrip.commands.check``.
"""

from .core import RULES, VERDICTS, check_records, failed_rules, line_pattern, navigation_line
from .html import render_html
from .params import CheckParams

__all__ = ["CheckParams", "RULES", "VERDICTS", "check_records", "failed_rules", "line_pattern", "navigation_line",
           "render_html"]

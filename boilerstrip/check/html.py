"""The check report as one self-contained HTML page: tables and inline SVG plots, no external assets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

__all__ = ["render_html"]

_COLOURS = {"ok": "#2e7d32", "warn": "#b26a00", "fail": "#c62828"}
_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.05em;margin-top:1.4em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.verdict{display:inline-block;color:#fff;border-radius:4px;padding:1px 10px;font-weight:600}
.grid{display:flex;flex-wrap:wrap;gap:2em}figure{margin:0}figcaption{color:#555;font-size:.9em}
code{background:#f6f6f6;padding:0 3px}
"""


def _verdict(verdict: str) -> str:
    colour = _COLOURS.get(verdict, "#555")
    return f'<span class="verdict" style="background:{colour}">{escape(verdict)}</span>'


def _bars(rows: Sequence[tuple[str, float]], caption: str, width: int = 520, unit: str = "%") -> str:
    """A horizontal bar chart: one bar per (label, value in 0..1)."""
    if not rows:
        return ""
    bar_h, gap, label_w = 16, 4, 220
    height = len(rows) * (bar_h + gap) + gap
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{escape(caption)}">']
    span = width - label_w - 60
    for i, (label, value) in enumerate(rows):
        y = gap + i * (bar_h + gap)
        w = max(1, round(span * max(0.0, min(1.0, value))))
        short = label if len(label) <= 34 else label[:33] + "…"
        parts.append(f'<text x="{label_w - 6}" y="{y + bar_h - 4}" text-anchor="end" font-size="11">'
                     f'<title>{escape(label)}</title>{escape(short)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y}" width="{w}" height="{bar_h}" fill="#5c7cfa"/>')
        shown = f"{value:.0%}" if unit == "%" else f"{value:g}"
        parts.append(f'<text x="{label_w + w + 4}" y="{y + bar_h - 4}" font-size="11">{shown}</text>')
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>{escape(caption)}</figcaption></figure>"


def _histogram(counts: Sequence[int], caption: str, width: int = 420, height: int = 160) -> str:
    """A column chart of ten bins (0-10%, ..., 90-100%)."""
    if not counts or not any(counts):
        return ""
    top = max(counts)
    n = len(counts)
    top_pad = 14  # room for the tallest column's count
    plot_h = height - 30 - top_pad
    col_w = (width - 20) / n
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{escape(caption)}">']
    for i, count in enumerate(counts):
        h = round(plot_h * count / top) if top else 0
        x = 10 + i * col_w
        parts.append(f'<rect x="{x + 2:.1f}" y="{top_pad + plot_h - h + 5}" width="{col_w - 4:.1f}" height="{h}" fill="#20c997">'
                     f'<title>{i * 10}-{(i + 1) * 10}%: {count} pages</title></rect>')
        parts.append(f'<text x="{x + col_w / 2:.1f}" y="{height - 8}" text-anchor="middle" font-size="10">{i * 10}%</text>')
        if count:
            parts.append(f'<text x="{x + col_w / 2:.1f}" y="{top_pad + plot_h - h + 2}" text-anchor="middle" font-size="10">{count}</text>')
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>{escape(caption)}</figcaption></figure>"


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for value in row:
            if isinstance(value, float):
                cells.append(f'<td class="n">{value:.1%}</td>')
            elif isinstance(value, int):
                cells.append(f'<td class="n">{value}</td>')
            else:
                cells.append(f"<td>{escape(str(value))}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _site(site: Mapping[str, Any]) -> str:
    out = [f'<h2 id="site-{escape(site["site"])}">{escape(site["site"] or "(no host)")} {_verdict(site["verdict"])}</h2>']
    if site["reasons"]:
        items = "".join(f"<li>{_verdict(r['level'])} <code>{escape(r['rule'])}</code> {escape(r['detail'])}</li>"
                        for r in site["reasons"])
        out.append(f"<ul>{items}</ul>")
    else:
        out.append("<p>No finding.</p>")
    out.append(_table(["pages", "navigation lines", "first paragraph = title", "titled pages", "empty", "very short",
                       "text length (min / q1 / median / q3 / max)"],
                      [[site["pages"], site["nav_word_share"], site["first_paragraph_match_share"],
                        site["pages_with_title"], site["empty_pages"], site["short_pages"],
                        " / ".join(str(v) for v in site["text_chars_quartiles"])]]))
    plots = [
        _bars([(e["text"], e["share"]) for e in site["repeated_lines"][:15]], "Lines repeated across pages (share of pages)"),
        _bars([(e["pattern"], e["share"]) for e in site["near_repeated_lines"][:15]],
              "Near repeats: lines that differ only in names and numbers (share of pages)"),
        _histogram(site["removed_share_histogram"], "Pages by share of text removed as template"),
    ]
    out.append(f'<div class="grid">{"".join(p for p in plots if p)}</div>')
    out.append("<h3>Repeated lines</h3>")
    out.append(_table(["line", "pages", "share", "navigation", "section label"],
                      [[e["text"], e["pages"], e["share"], "yes" if e["navigation"] else "", "yes" if e["label"] else ""]
                       for e in site["repeated_lines"]]))
    out.append("<h3>Near repeats</h3>")
    out.append(_table(["pattern", "example", "pages", "share", "at the top or bottom"],
                      [[e["pattern"], e["text"], e["pages"], e["share"], e["at_page_edge_share"]]
                       for e in site["near_repeated_lines"]]))
    out.append("<h3>Navigation lines</h3>")
    out.append(_table(["line (normalised)", "pages"], [[e["text"], e["pages"]] for e in site["nav_lines"]]))
    out.append("<h3>Pages by method and fetch mode</h3>")
    out.append('<div class="grid">' + _table(["method", "pages"], list(site["methods"].items()))
               + _table(["fetch", "pages"], list(site["fetch_modes"].items())) + "</div>")
    if site["empty_examples"] or site["short_examples"]:
        out.append("<h3>Empty and very short pages (examples)</h3>")
        out.append(_table(["url", "kind"], [[u, "empty"] for u in site["empty_examples"]]
                          + [[u, "very short"] for u in site["short_examples"]]))
    return "\n".join(out)


def render_html(report: Mapping[str, Any], source: str = "") -> str:
    """The report (:func:`boilerstrip.check.check_records`) as one HTML page a person reads in a browser."""
    title = f"boilerstrip check{': ' + source if source else ''}"
    summary = _table(["site", "pages", "verdict", "navigation lines", "first paragraph = title", "findings"],
                     [[s["site"], s["pages"], s["verdict"], s["nav_word_share"], s["first_paragraph_match_share"],
                       len(s["reasons"])] for s in report["sites"]])
    sites = "\n".join(_site(s) for s in report["sites"])
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{_CSS}</style></head><body>\n<h1>{escape(title)} {_verdict(report['verdict'])}</h1>\n"
            f"<p>{report['pages']} pages in {len(report['sites'])} site(s); {report['skipped_records']} records "
            f"skipped (no url, or failed/filtered); {len(report.get('excluded', ()))} left out below --min-confidence.</p>\n{summary}\n{sites}\n</body></html>\n")

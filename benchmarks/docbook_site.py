"""A generated DocBook XSL site with large pages, written to a folder: the crawl benchmark's large-page site.

Issue 29 measured a 1,147-page DocBook site with ~13 KB of HTML a page, where start-up and the finishing
pass cost the whole command more than the crawl did. Debian's ``docbook-xsl-doc-html`` has the markup but
small pages (~3.4 KB), so this writes pages in the markup the DocBook XSL chunker writes (``navheader`` and
``navfooter`` tables, ``titlepage`` headings, ``variablelist``, ``programlisting``, a ``toc`` on chapter
pages) and fills them with text unique to each page (seeded, so every run writes the same site): an
``index.html`` listing 31 chapters, each chapter page listing its sections, every page linking its
previous, next, up and home pages. 1 + 31 + 1,115 = 1,147 pages, ~13 KB each.

    python benchmarks/docbook_site.py OUT_DIR [--pages 1147]
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["write_site", "DEFAULT_PAGES"]

DEFAULT_PAGES = 1147
CHAPTERS = 31
_WORDS = ("stylesheet parameter element attribute output chunk section template processor transform table "
          "index glossary entry value default profile language callout figure example formal title list "
          "reference manual page custom layer generate number label heading string node").split()


def _words(seed: int, count: int) -> str:
    out = []
    x = seed * 2654435761 % (2**32) or 1
    for _ in range(count):
        x = (1103515245 * x + 12345) % (2**31)
        out.append(_WORDS[x % len(_WORDS)] + ("" if x % 5 else str(x % 89)))
    return " ".join(out)


def _nav(prev: tuple[str, str] | None, nxt: tuple[str, str] | None, up: tuple[str, str] | None,
         title: str, part: str) -> tuple[str, str]:
    prev_link = f'<a accesskey="p" href="{prev[0]}">Prev</a>' if prev else ""
    next_link = f'<a accesskey="n" href="{nxt[0]}">Next</a>' if nxt else ""
    up_link = f'<a accesskey="u" href="{up[0]}">Up</a>' if up else ""
    header = ('<div class="navheader"><table width="100%" summary="Navigation header">'
              f'<tr><th colspan="3" align="center">{title}</th></tr><tr><td width="20%" align="left">{prev_link} </td>'
              f'<th width="60%" align="center">{part}</th><td width="20%" align="right"> {next_link}</td></tr>'
              '</table><hr></div>')
    footer = ('<div class="navfooter"><hr><table width="100%" summary="Navigation footer"><tr>'
              f'<td width="40%" align="left">{prev_link} </td><td width="20%" align="center">{up_link}</td>'
              f'<td width="40%" align="right"> {next_link}</td></tr><tr>'
              f'<td width="40%" align="left" valign="top">{prev[1] if prev else ""} </td>'
              '<td width="20%" align="center"><a accesskey="h" href="index.html">Home</a></td>'
              f'<td width="40%" align="right" valign="top"> {nxt[1] if nxt else ""}</td></tr></table></div>')
    return header, footer


def _body(seed: int, title: str, anchor: str) -> str:
    paragraphs = "".join(f"<p>{_words(seed * 31 + i, 70)}.</p>" for i in range(16))
    entries = "".join(
        f'<dt><span class="term"><code class="parameter">{_words(seed * 7 + i, 1)}.{i}</code></span></dt>'
        f"<dd><p>{_words(seed * 13 + i, 30)}.</p></dd>" for i in range(6))
    code = "\n".join(f'&lt;xsl:param name="{_words(seed + i, 1)}"&gt;{_words(seed * 3 + i, 4)}&lt;/xsl:param&gt;'
                     for i in range(8))
    return (f'<div class="section"><div class="titlepage"><div><div><h2 class="title" style="clear: both">'
            f'<a name="{anchor}"></a>{title}</h2></div></div></div>{paragraphs[: len(paragraphs) // 2]}'
            f'<div class="variablelist"><dl class="variablelist">{entries}</dl></div>'
            f'<pre class="programlisting">{code}</pre>{paragraphs[len(paragraphs) // 2:]}</div>')


def _page(title: str, part: str, body: str, nav: tuple[str, str]) -> str:
    return ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
            f'<title>{title}</title><link rel="stylesheet" type="text/css" href="reference.css">'
            '<meta name="generator" content="DocBook XSL Stylesheets V1.79.2">'
            f'<link rel="home" href="index.html" title="{part}"></head>'
            f'<body bgcolor="white" text="black" link="#0000FF" vlink="#840084" alink="#0000FF">{nav[0]}'
            f"{body}{nav[1]}</body></html>")


def write_site(root: Path, pages: int = DEFAULT_PAGES) -> int:
    """Write the site under ``root``; returns the pages written (``pages``, at least 1 + CHAPTERS)."""
    root.mkdir(parents=True, exist_ok=True)
    sections = max(0, pages - 1 - CHAPTERS)
    per_chapter = [sections // CHAPTERS + (1 if c < sections % CHAPTERS else 0) for c in range(CHAPTERS)]
    book = "DocBook XSL Stylesheets: Generated Reference"
    order: list[tuple[str, str, str | None]] = [("index.html", book, None)]  # (file, title, parent file)
    children: dict[str, list[tuple[str, str]]] = {"index.html": []}
    for c in range(CHAPTERS):
        chapter = (f"ch{c:02d}.html", f"Chapter {c + 1}. {_words(c, 3).title()}")
        order.append((*chapter, "index.html"))
        children["index.html"].append(chapter)
        children[chapter[0]] = []
        for s in range(per_chapter[c]):
            section = (f"ch{c:02d}s{s:02d}.html", f"{c + 1}.{s + 1}. {_words(1000 + c * 97 + s, 3).title()}")
            order.append((*section, chapter[0]))
            children[chapter[0]].append(section)
    titles = {file: title for file, title, _parent in order}
    for n, (file, title, parent) in enumerate(order):
        prev = order[n - 1][:2] if n else None
        nxt = order[n + 1][:2] if n + 1 < len(order) else None
        up = (parent, titles[parent]) if parent else None
        toc = "".join(f'<dt><span class="section"><a href="{f}">{t}</a></span></dt>' for f, t in children.get(file, ()))
        body = (f'<div class="toc"><p><b>Table of Contents</b></p><dl class="toc">{toc}</dl></div>' if toc else "")
        body += _body(n, title, f"id{n:05d}")
        (root / file).write_text(_page(title, book, body, _nav(prev, nxt, up, title, book)), encoding="utf-8")
    return len(order)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=DEFAULT_PAGES)
    args = parser.parse_args(argv)
    written = write_site(args.out, args.pages)
    sizes = [path.stat().st_size for path in args.out.glob("*.html")]
    print(f"{written} pages, {sum(sizes) / len(sizes) / 1024:.1f} KiB of HTML a page, in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

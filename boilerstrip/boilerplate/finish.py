"""The per-record parts of the finishing pass, and the per-site template report.

``clean_record`` cleans one page with a template model (a pure function of record and model), and
``ReportBuilder`` accumulates the template report page by page. The pass itself (one record per URL, the
final model, duplicates, sort, write) is the steps of :mod:`boilerstrip.finishing`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from boilerstrip.fastjson import compact_utf8
from boilerstrip.items import JSON_SEPARATORS, RECORD_FIELDS

from .blocks import (blocks_of_record, cluster_of_url, markdown_of_blocks, render_markdown, render_text, repair_text,
                     site_of_url, structure_hashes)
from .clean import CleanResult, hash_blocks
from .model import TemplateModel
from .params import BoilerplateParams, DuplicateParams
from .source import (SourceChoice, choose_source, extraction_failed, region_blocks_of_record, region_fields, repeats_title,
                     slots_of_record)

__all__ = ["cleaned_fields", "source_fields", "removed_by_reason", "has_trail", "merge_flags", "model_hashes", "clean_record", "mark_duplicate",
           "ReportBuilder", "report_text", "dump_record", "read_records", "REPORT_JSON", "REPORT_TXT"]

REPORT_JSON = "template-report.json"
REPORT_TXT = "template-report.txt"
#: flags this component owns: replaced (not accumulated) each time a page is cleaned again
_OWN_FLAG_PREFIXES = ("boilerplate_", "exact_duplicate", "near_duplicate")
#: flags the duplicates step sets (again on every pass)
_DUPLICATE_FLAGS = ("exact_duplicate", "near_duplicate")
#: removed-block examples kept in the report per block (text is cut to this many characters)
_REPORT_TEXT_CHARS = 160


def merge_flags(old: Iterable[str] | None, new: Iterable[str]) -> list[str]:
    """Other components' flags kept in order, this component's replaced by ``new``."""
    if not isinstance(old, (list, tuple)):
        old = []
    kept = [f for f in old if isinstance(f, str) and not f.startswith(_OWN_FLAG_PREFIXES)]
    return kept + [f for f in new if f not in kept]


def cleaned_fields(result: CleanResult, markdown: bool = True,
                   markdowns: Mapping[tuple[str, str], str] | None = None) -> dict[str, Any]:
    """Record fields derived from a clean: blocks with hash/removed, text, markdown (None when the record
    had none: the extractor's Markdown was switched off), counts. ``markdowns`` (``markdown_of_blocks``)
    are the blocks' own Markdown: the Markdown is rendered with them, and the blocks keep them as "md"."""
    text = render_text(result.kept)
    return {
        "blocks": _blocks_with_markdown(result, markdowns),
        "text": text,
        "markdown": render_markdown(result.kept, markdowns) if markdown else None,
        "content_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "boilerplate_removed_chars": result.removed_chars,
        "boilerplate_removed_blocks": result.removed_blocks,
        "boilerplate_removed_by": removed_by_reason(result.blocks),
    }


def _blocks_with_markdown(result: CleanResult, markdowns: Mapping[tuple[str, str], str] | None) -> list[dict[str, Any]]:
    """The clean's blocks, each with its own Markdown ("md") where ``markdowns`` has it."""
    if not markdowns:
        return result.blocks
    return [{**block, "md": own} if (own := markdowns.get((block["kind"], block["text"]))) is not None else block
            for block in result.blocks]


def removed_by_reason(blocks: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``{reason: {"blocks": n, "chars": n}}`` of the blocks left out (``removed`` set), reasons sorted: the
    lean record's account of what the cross-page stage removed and why, without the blocks themselves."""
    out: dict[str, dict[str, int]] = {}
    for block in blocks:
        reason = block.get("removed")
        if not reason:
            continue
        entry = out.setdefault(str(reason), {"blocks": 0, "chars": 0})
        entry["blocks"] += 1
        entry["chars"] += len(str(block.get("text") or "").strip())
    return dict(sorted(out.items()))


def source_fields(record: Mapping[str, Any], choice: SourceChoice) -> dict[str, Any]:
    """Record fields after a clean with a source choice: ``text``/``markdown``/``content_hash`` from the
    chosen source; ``blocks`` and the ``boilerplate_removed_*`` counts always of the extractor's blocks (so
    cleaning again makes the same choice); ``page_blocks`` with the region's per-block decisions."""
    markdowns = markdown_of_blocks(record)
    fields = cleaned_fields(choice.result, markdown=record.get("markdown") is not None, markdowns=markdowns)
    if choice.result is not choice.extracted:  # (its blocks and counts only: no text rendered for them)
        fields["blocks"] = _blocks_with_markdown(choice.extracted, markdowns)
        fields["boilerplate_removed_chars"] = choice.extracted.removed_chars
        fields["boilerplate_removed_blocks"] = choice.extracted.removed_blocks
        # boilerplate_removed_by stays the chosen source's: why what the text lacks is missing
    headline = _extracted_headline(record)
    if headline and fields["markdown"] is not None and not choice.headline and not fields["markdown"].startswith(headline):
        # the extractor's Markdown opens with the headline it left to ``title``: it stays
        fields["markdown"] = f"{headline}\n\n{fields['markdown']}" if fields["markdown"] else headline
    region = region_fields(record, choice)
    if region is not None:
        fields["page_blocks"] = region
    return fields


def _extracted_headline(record: Mapping[str, Any]) -> str | None:
    """The heading line the record's Markdown opens with when it is not one of its blocks: the headline the
    extractor left out of the text (``title``), an <h1> or a heading that repeats the title."""
    markdown = record.get("markdown")
    if not isinstance(markdown, str) or not markdown.startswith("#"):
        return None
    line = markdown.split("\n", 1)[0]
    level = len(line) - len(line.lstrip("#"))
    heading = line[level:].strip()
    if not heading or level > 6 or line[level : level + 1] != " ":
        return None
    blocks = record.get("blocks")
    first = blocks[0] if isinstance(blocks, list) and blocks and isinstance(blocks[0], Mapping) else {}
    if first.get("kind") == f"h{level}" and heading in (first.get("text"), first.get("md")):
        return None  # a block of the text (kept with the others, or removed as template)
    title = record.get("title")
    if level == 1 or repeats_title(heading, title if isinstance(title, str) else None, BoilerplateParams()):
        return line
    return None


def model_hashes(record: Mapping[str, Any], blocks: list[tuple[str, str]], params: BoilerplateParams) -> set[str]:
    """What a page teaches the model: the hashes of all its blocks (``page_block_hashes``, chrome
    included) and of its extracted blocks, with their structure hashes (pieces, and slots where known)."""
    hashed = hash_blocks(blocks, params)
    hashes = {h for _, _, h, _ in hashed if h}
    slots = slots_of_record(record, params)
    for kind, text, h, _ in hashed:
        hashes.update(structure_hashes(kind, text, slots.get(h or ""), params.normalise_digits))
    region = region_blocks_of_record(record)
    if region:  # the region is cut like the page: mostly the same hashes, counted once per page anyway
        for kind, text, h, _ in hash_blocks([(kind, text) for kind, text, *_ in region], params):
            if h:
                hashes.add(h)
                hashes.update(structure_hashes(kind, text, slots.get(h), params.normalise_digits))
    stored = record.get("page_block_hashes")
    if isinstance(stored, list):
        hashes.update(h for h in stored if isinstance(h, str) and h)
    return hashes


def dump_record(record: Mapping[str, Any], order: list[str] | None = None) -> str:
    """One JSON line, keys in RECORD_FIELDS order then the others sorted: stable bytes for stable data."""
    order = list(RECORD_FIELDS) if order is None else order
    known = set(order)
    keys = [k for k in order if k in record] + sorted(k for k in record if k not in known)
    ordered = {k: record[k] for k in keys}
    fast = compact_utf8(ordered)  # None: a lone surrogate (repaired below) or a value only json writes
    if fast is not None:
        return fast.decode("utf-8")
    return repair_text(json.dumps(ordered, ensure_ascii=False, sort_keys=False, separators=JSON_SEPARATORS))


def read_records(path: str | Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Records of a JSONL file and the numbers of the lines that were not JSON objects (skipped)."""
    records: list[dict[str, Any]] = []
    invalid: list[int] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                invalid.append(number)
                continue
            if isinstance(value, dict):
                records.append(value)
            else:
                invalid.append(number)
    return records, invalid


def _title(record: Mapping[str, Any]) -> str | None:
    title = record.get("title")
    return title if isinstance(title, str) else None


#: the record fields the cleaning works from (``boilerstrip.items.TRAIL_FIELDS``)
_TRAIL = ("blocks", "page_block_hashes", "page_blocks")


def has_trail(record: Mapping[str, Any]) -> bool:
    """Does ``record`` carry the block-by-block trail (any of its fields), so it can be cleaned again? A lean
    record (the default output) does not: its text is already the cleaned one."""
    return any(key in record for key in _TRAIL)


def _as_written(record: Mapping[str, Any], url: str) -> tuple[dict[str, Any], CleanResult, str, str]:
    """A record without its trail, kept as written: its text was cleaned by the pass that wrote it, and
    nothing says which of its paragraphs were template (cleaning its paragraphs again would take the
    site's repeated section headings for template). Its fields are made well-formed; the clean result
    repeats what the record states it removed, for the report."""
    site, cluster = site_of_url(url), cluster_of_url(url)
    out = dict(record)
    text = record.get("text")
    out["text"] = text = repair_text(text) if isinstance(text, str) else ""
    if not isinstance(record.get("content_hash"), str):
        out["content_hash"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    flags = record.get("flags")
    # the duplicates step decides again (as after a clean); the clean's own flags stand, it is not redone
    out["flags"] = [f for f in flags if isinstance(f, str) and f not in _DUPLICATE_FLAGS] if isinstance(flags, list) else []
    out["template_cluster"] = cluster
    out["duplicate_of"] = None
    out["duplicate_similarity"] = None
    removed = record.get("boilerplate_removed_chars")
    removed = removed if isinstance(removed, int) and not isinstance(removed, bool) and removed > 0 else 0
    result = CleanResult(blocks=[], kept=[], removed_chars=removed, removed_blocks=0,
                         total_chars=len(text.strip()) + removed)
    return out, result, site, cluster


def clean_record(record: Mapping[str, Any], url: str, model: TemplateModel, params: BoilerplateParams
                  ) -> tuple[dict[str, Any], CleanResult, str, str]:
    """``record`` cleaned with ``model``: its text from the source :func:`choose_source` picks, the trail
    marked block by block, the counts and flags set; a lean record (no trail) is kept as written."""
    if not has_trail(record):
        return _as_written(record, url)
    site, cluster = site_of_url(url), cluster_of_url(url)
    choice = choose_source(blocks_of_record(record), region_blocks_of_record(record, params), extraction_failed(record),
                           site, cluster, model, params, title=_title(record), slots=slots_of_record(record, params))
    result = choice.result
    out = dict(record)
    out.update(source_fields(record, choice))
    out["template_cluster"] = cluster
    out["duplicate_of"] = None
    out["duplicate_similarity"] = None
    out["flags"] = merge_flags(record.get("flags"), [*result.flags, *([choice.flag] if choice.flag else [])])
    if not out["text"].strip() and isinstance(record.get("confidence"), (int, float)):
        out["confidence"] = 0.0  # the template took all the extractor found: nothing of the page is left
    return out, result, site, cluster


def mark_duplicate(record: Mapping[str, Any], of: str, similarity: float, reason: str) -> dict[str, Any]:
    """The fields of a record kept as a near duplicate of ``of``: ``duplicate_of``, ``duplicate_similarity``
    and the ``reason`` flag (this component's other flags kept)."""
    flags = record.get("flags")
    own = [f for f in flags if isinstance(f, str) and f.startswith(_OWN_FLAG_PREFIXES)] if isinstance(flags, list) else []
    return {"duplicate_of": of, "duplicate_similarity": similarity,
            "flags": merge_flags(flags, [*own, reason])}


class ReportBuilder:
    """Accumulates the template report page by page (small entries only, never the pages' text)."""

    def __init__(self) -> None:
        self.pages: dict[str, list[tuple[str, str, int, int, float]]] = defaultdict(list)
        self.suspicious: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.chars: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.examples: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.count = 0

    def add(self, url: str, site: str, cluster: str, result: CleanResult) -> None:
        self.count += 1
        self.chars[site][0] += result.removed_chars
        self.chars[site][1] += result.total_chars
        # a tuple a page (the report's dict is made when it is built): this lives until the pass ends
        self.pages[site].append((url, cluster, result.total_chars, result.removed_chars,
                                 round(result.removed_share, 4)))
        if result.flags:
            self.suspicious[site].append({"url": url, "flags": list(result.flags)})
        texts = {b["hash"]: (b["kind"], b["text"]) for b in result.blocks if b["removed"]}
        seen: set[tuple[str, str, str, str]] = set()
        for h, reason, n, share in result.removed:
            key = (site, h, reason, cluster if reason.endswith("cluster") else "")
            if key in seen:  # a block repeated within the page counts once
                continue
            seen.add(key)
            entry = self.examples.get(key)
            if entry is None or url < entry["example_url"]:  # the example text: from the smallest URL
                kind, text = texts.get(h, ("", ""))
                removed_from = entry["removed_from"] if entry else 0
                entry = self.examples[key] = {
                    "hash": h, "scope": reason, "cluster": key[3] or None, "kind": kind,
                    "text": " ".join(text.split())[:_REPORT_TEXT_CHARS], "pages_with_block": n,
                    "share_of_pages": share, "removed_from": removed_from, "example_url": url}
            entry["removed_from"] += 1

    def build(self, model: TemplateModel, dropped: list[dict[str, Any]], params: BoilerplateParams,
              dup_params: DuplicateParams, stored_pages: int, marked: list[dict[str, Any]] | None = None
              ) -> dict[str, Any]:
        dropped_by_site: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for entry in dropped:
            dropped_by_site[site_of_url(entry["url"])].append(entry)
        marked_by_site: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for entry in marked or ():
            marked_by_site[site_of_url(entry["url"])].append(entry)
        sites: dict[str, dict[str, Any]] = {}
        for site in sorted(self.pages):
            blocks = sorted((e for k, e in self.examples.items() if k[0] == site),
                            key=lambda e: (-e["removed_from"], e["scope"], e["cluster"] or "", e["hash"]))
            removed_chars, total_chars = self.chars[site]
            sites[site] = {
                "pages": len(self.pages[site]),
                "clusters": {c: model.pages(site, c) for c in model.clusters(site)},
                "model_pages": model.pages(site),
                "distinct_blocks": sum(1 for _ in model.iter_counts(site)),
                "removed_blocks": blocks,
                "removed_share_of_text": round(removed_chars / total_chars, 4) if total_chars else 0.0,
                "pages_detail": [{"url": u, "cluster": c, "chars": n, "removed_chars": r, "removed_share": share}
                                 for u, c, n, r, share in sorted(self.pages[site])],
                "suspicious": sorted(self.suspicious[site], key=lambda p: p["url"]),
                "duplicates": dropped_by_site.get(site, []),
                "near_duplicates_kept": marked_by_site.get(site, []),
            }
        return {
            "report_version": 1,
            "params": dataclasses.asdict(params),
            "duplicate_params": dataclasses.asdict(dup_params),
            "stored_pages_used": stored_pages,
            "pages": self.count,
            "pages_dropped_as_duplicates": len(dropped),
            "pages_marked_as_near_duplicates": len(marked or ()),
            "sites": sites,
        }


def report_text(report: Mapping[str, Any]) -> str:
    lines = [f"boilerstrip template report: {report['pages']} pages, "
             f"{report['pages_dropped_as_duplicates']} dropped as duplicates"]
    for site, info in report["sites"].items():
        lines.append("")
        lines.append(f"== {site}: {info['pages']} pages, {len(info['removed_blocks'])} template blocks, "
                     f"{info['removed_share_of_text']:.1%} of text removed")
        clusters = ", ".join(f"{c} ({n})" for c, n in info["clusters"].items())
        lines.append(f"   clusters: {clusters}")
        for block in info["removed_blocks"][:50]:
            where = block["scope"] + (f" [{block['cluster']}]" if block["cluster"] else "")
            lines.append(f"   - {block['removed_from']:>5} pages  {where:<28} {block['kind']:<5} {block['text']!r}")
        if len(info["removed_blocks"]) > 50:
            lines.append(f"   ... {len(info['removed_blocks']) - 50} more in {REPORT_JSON}")
        worst = sorted(info["pages_detail"], key=lambda p: (-p["removed_share"], p["url"]))[:10]
        if worst:
            lines.append("   most removed:")
            for page in worst:
                lines.append(f"   {page['removed_share']:>7.1%}  {page['url']}")
        for page in info["suspicious"]:
            lines.append(f"   suspicious: {page['url']}  {', '.join(page['flags'])}")
        for dup in info["duplicates"]:
            lines.append(f"   dropped {dup['reason']}: {dup['url']} (of {dup['of']}, similarity {dup['similarity']})")
        for dup in info.get("near_duplicates_kept", ()):
            lines.append(f"   kept, marked {dup['reason']}: {dup['url']} (of {dup['of']}, similarity {dup['similarity']})")
    return "\n".join(lines) + "\n"

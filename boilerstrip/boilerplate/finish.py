"""The deterministic finishing pass over a whole crawl, and the per-site template report.

``finish_records`` rebuilds the template model from every record (the original text of every block is in
the record), cleans every page with that final model, drops duplicate pages with the fixed keep rule and
returns the records sorted by URL: the same set of records gives byte-identical output in any order.
``finish_crawl`` does it file to file (what ``boilerstrip dedup`` and the end of ``boilerstrip crawl`` run).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .blocks import blocks_of_record, cluster_of_url, render_markdown, render_text, site_of_url
from .clean import CleanResult, clean_page, hash_blocks
from .duplicates import find_duplicates
from .model import TemplateModel
from .params import BoilerplateParams, DuplicateParams
from .store import TemplateStore, load_site

__all__ = ["FinishResult", "finish_records", "finish_crawl", "cleaned_fields", "merge_flags", "model_hashes",
           "dump_record", "read_records", "REPORT_JSON", "REPORT_TXT"]

REPORT_JSON = "template-report.json"
REPORT_TXT = "template-report.txt"
#: flags this component owns: replaced (not accumulated) each time a page is cleaned again
_OWN_FLAG_PREFIXES = ("boilerplate_", "exact_duplicate", "near_duplicate")
#: records with these outcomes are not pages: passed through untouched
_NOT_PAGES = ("failed", "filtered")
#: removed-block examples kept in the report per block (text is cut to this many characters)
_REPORT_TEXT_CHARS = 160


@dataclass
class FinishResult:
    records: list[dict[str, Any]]
    dropped: list[dict[str, Any]]  # {"url", "reason", "of", "similarity"}
    report: dict[str, Any]
    invalid_lines: list[int] = field(default_factory=list)


def merge_flags(old: Iterable[str] | None, new: Iterable[str]) -> list[str]:
    kept = [f for f in (old or []) if isinstance(f, str) and not f.startswith(_OWN_FLAG_PREFIXES)]
    return kept + [f for f in new if f not in kept]


def cleaned_fields(result: CleanResult, markdown: bool = True) -> dict[str, Any]:
    """Record fields derived from a clean: blocks with hash/removed, text, markdown (None when the record
    had none: the extractor's Markdown was switched off), counts."""
    text = render_text(result.kept)
    return {
        "blocks": result.blocks,
        "text": text,
        "markdown": render_markdown(result.kept) if markdown else None,
        "content_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "boilerplate_removed_chars": result.removed_chars,
        "boilerplate_removed_blocks": result.removed_blocks,
    }


def model_hashes(record: Mapping[str, Any], blocks: list[tuple[str, str]], params: BoilerplateParams) -> set[str]:
    """What a page teaches the model: the hashes of all its blocks (``page_block_hashes``, chrome
    included) and of its extracted blocks."""
    hashes = {h for _, _, h, _ in hash_blocks(blocks, params) if h}
    stored = record.get("page_block_hashes")
    if isinstance(stored, list):
        hashes.update(h for h in stored if isinstance(h, str) and h)
    return hashes


def _export_order() -> list[str]:
    try:
        from boilerstrip.items import EXPORT_FIELDS
    except ImportError:  # pragma: no cover
        return []
    return list(EXPORT_FIELDS)


def dump_record(record: Mapping[str, Any], order: list[str] | None = None) -> str:
    """One JSON line, keys in EXPORT_FIELDS order then the others sorted: stable bytes for stable data."""
    order = _export_order() if order is None else order
    keys = [k for k in order if k in record] + sorted(k for k in record if k not in set(order))
    return json.dumps({k: record[k] for k in keys}, ensure_ascii=False, sort_keys=False)


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


def _is_page(record: Mapping[str, Any]) -> bool:
    url = record.get("url")
    return isinstance(url, str) and bool(url) and record.get("outcome") not in _NOT_PAGES


def finish_records(
    records: Iterable[Mapping[str, Any]],
    params: BoilerplateParams | None = None,
    dup_params: DuplicateParams | None = None,
    store: TemplateStore | None = None,
    duplicates_enabled: bool = True,
) -> FinishResult:
    params = params or BoilerplateParams()
    dup_params = dup_params or DuplicateParams()
    passthrough: list[dict[str, Any]] = []
    by_url: dict[str, dict[str, Any]] = {}
    for record in records:
        record = dict(record)
        if not _is_page(record):
            passthrough.append(record)
            continue
        url = record["url"]
        # One record per URL; if a URL came twice, keep the record that sorts last (order-independent).
        if url in by_url:
            if dump_record(record, []) <= dump_record(by_url[url], []):
                continue
        by_url[url] = record

    # 1. The final model: every page once, plus stored pages of the same sites not crawled this time.
    model = TemplateModel()
    prepared: dict[str, tuple[str, str, list[tuple[str, str]]]] = {}
    for url in sorted(by_url):
        blocks = blocks_of_record(by_url[url])
        site, cluster = site_of_url(url), cluster_of_url(url)
        prepared[url] = (site, cluster, blocks)
        model.add_page(site, cluster, model_hashes(by_url[url], blocks, params))
    stored_pages = 0
    if store is not None:
        for site in sorted({s for s, _, _ in prepared.values()}):
            stored_pages += load_site(model, store, site, exclude=set(by_url))

    # 2. Clean every page with it.
    cleaned: dict[str, dict[str, Any]] = {}
    results: dict[str, CleanResult] = {}
    for url in sorted(by_url):
        site, cluster, blocks = prepared[url]
        result = clean_page(blocks, site, cluster, model, params)
        results[url] = result
        record = dict(by_url[url])
        record.update(cleaned_fields(result, markdown=record.get("markdown") is not None))
        record["template_cluster"] = cluster
        record["duplicate_of"] = None
        record["flags"] = merge_flags(record.get("flags"), result.flags)
        cleaned[url] = record

    # 3. Duplicate pages, with the fixed keep rule, over the cleaned text.
    dropped: list[dict[str, Any]] = []
    if duplicates_enabled:
        dups = find_duplicates(((u, r["text"]) for u, r in cleaned.items()), dup_params)
        for url in sorted(dups):
            dup = dups[url]
            dropped.append({"url": url, "reason": dup.reason, "of": dup.of, "similarity": dup.similarity})
            del cleaned[url]

    out = [cleaned[u] for u in sorted(cleaned)]
    out += sorted(passthrough, key=lambda r: dump_record(r, []))
    report = build_report(model, results, prepared, dropped, params, dup_params, stored_pages)
    return FinishResult(out, dropped, report)


def build_report(
    model: TemplateModel,
    results: Mapping[str, CleanResult],
    prepared: Mapping[str, tuple[str, str, list[tuple[str, str]]]],
    dropped: list[dict[str, Any]],
    params: BoilerplateParams,
    dup_params: DuplicateParams,
    stored_pages: int = 0,
) -> dict[str, Any]:
    sites: dict[str, dict[str, Any]] = {}
    examples: dict[tuple[str, str, str], dict[str, Any]] = {}
    per_site_pages: dict[str, list[str]] = defaultdict(list)
    for url in sorted(results):
        per_site_pages[prepared[url][0]].append(url)
    dropped_by_site: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in dropped:
        dropped_by_site[site_of_url(entry["url"])].append(entry)
    for site in sorted(per_site_pages):
        urls = per_site_pages[site]
        pages = []
        suspicious = []
        removed_chars = total_chars = 0
        for url in urls:
            result = results[url]
            removed_chars += result.removed_chars
            total_chars += result.total_chars
            pages.append({"url": url, "cluster": prepared[url][1], "chars": result.total_chars,
                          "removed_chars": result.removed_chars, "removed_share": round(result.removed_share, 4)})
            if result.flags:
                suspicious.append({"url": url, "flags": list(result.flags)})
            texts = {b["hash"]: (b["kind"], b["text"]) for b in result.blocks if b["removed"]}
            for h, reason, n, share in result.removed:
                scope = prepared[url][1] if reason.endswith("cluster") else ""
                key = (h, reason, scope)
                entry = examples.get(key)
                if entry is None:
                    kind, text = texts.get(h, ("", ""))
                    entry = examples[key] = {"site": site, "hash": h, "scope": reason, "cluster": scope or None,
                                             "kind": kind, "text": " ".join(text.split())[:_REPORT_TEXT_CHARS],
                                             "pages_with_block": n, "share_of_pages": share, "removed_from": 0}
                entry["removed_from"] += 1
        blocks = sorted((e for e in examples.values() if e["site"] == site),
                        key=lambda e: (-e["removed_from"], e["scope"], e["cluster"] or "", e["hash"]))
        sites[site] = {
            "pages": len(urls),
            "clusters": {c: model.pages(site, c) for c in model.clusters(site)},
            "model_pages": model.pages(site),
            "distinct_blocks": sum(1 for _ in model.iter_counts(site)),
            "removed_blocks": [{k: v for k, v in e.items() if k != "site"} for e in blocks],
            "removed_share_of_text": round(removed_chars / total_chars, 4) if total_chars else 0.0,
            "pages_detail": pages,
            "suspicious": suspicious,
            "duplicates": dropped_by_site.get(site, []),
        }
    return {
        "report_version": 1,
        "params": dataclasses.asdict(params),
        "duplicate_params": dataclasses.asdict(dup_params),
        "stored_pages_used": stored_pages,
        "pages": len(results),
        "pages_dropped_as_duplicates": len(dropped),
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
    return "\n".join(lines) + "\n"


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def finish_crawl(
    in_path: str | Path,
    out_path: str | Path,
    params: BoilerplateParams | None = None,
    report_dir: str | Path | None = None,
    dup_params: DuplicateParams | None = None,
    store: TemplateStore | None = None,
    duplicates_enabled: bool = True,
) -> dict[str, Any]:
    """Apply the final model to a whole crawl file; write ``out_path`` (may equal ``in_path``) and the report.

    Returns a summary: pages in/out, duplicates dropped, invalid lines skipped, report paths.
    """
    records, invalid = read_records(in_path)
    result = finish_records(records, params, dup_params, store=store, duplicates_enabled=duplicates_enabled)
    result.report["invalid_lines"] = invalid
    out_path = Path(out_path)
    _atomic_write(out_path, "".join(dump_record(r) + "\n" for r in result.records))
    summary: dict[str, Any] = {
        "records_in": len(records),
        "records_out": len(result.records),
        "pages": result.report["pages"],
        "dropped_duplicates": len(result.dropped),
        "invalid_lines": len(invalid),
        "out": str(out_path),
    }
    if report_dir is not None:
        report_dir = Path(report_dir)
        _atomic_write(report_dir / REPORT_JSON, json.dumps(result.report, ensure_ascii=False, indent=1) + "\n")
        _atomic_write(report_dir / REPORT_TXT, report_text(result.report))
        summary["report"] = str(report_dir / REPORT_JSON)
    return summary

"""``stats.json`` and the dataset card (``README.md`` with the Hugging Face YAML header) of an export."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .params import ExportParams

__all__ = ["export_stats", "dataset_card", "size_category"]

#: Hugging Face's size_categories buckets (upper bounds, exclusive)
_SIZE_BUCKETS = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                 (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"))


def size_category(n: int) -> str:
    for bound, name in _SIZE_BUCKETS:
        if n < bound:
            return name
    return "n>1B"


def export_stats(summary: Mapping[str, Any], reasons: Mapping[str, int], dropped_sites: Mapping[str, int],
                 counts: Mapping[str, int], params: ExportParams) -> dict[str, Any]:
    sites = {site: {"kept": kept, "excluded": dropped_sites.get(site, 0)}
             for site, kept in summary.get("sites", {}).items()}
    for site, n in dropped_sites.items():
        sites.setdefault(site, {"kept": 0, "excluded": n})
    return {
        "documents": summary.get("documents", 0),
        "words": summary.get("words", 0),
        "excluded": sum(reasons.values()),
        "excluded_by_reason": dict(sorted(reasons.items())),
        "languages": dict(summary.get("languages", {})),
        "sites": dict(sorted(sites.items())),
        "crawls": dict(summary.get("crawls", {})),
        "inputs": list(summary.get("inputs", [])),
        "dates": list(summary.get("dates", [])),
        "shards": list(summary.get("shards", [])),
        "pii_replaced": {"email": counts.get("pii/replaced/email", 0), "ip": counts.get("pii/replaced/ip", 0)},
        "opted_out_included": counts.get("optout/included_opted_out", 0),
        "index_documents": summary.get("index_documents"),
        "invalid_lines": summary.get("invalid_lines", 0),
        "settings": {
            "format": params.format, "shard_size": params.shard_size, "row_group_rows": params.row_group_rows,
            "include_opted_out": params.include_opted_out, "keep_pii": params.keep_pii,
            "filters": params.filters.describe(),
            "near_dedup": {"shingle_words": params.near.shingle_words, "bands": params.near.bands,
                           "rows_per_band": params.near.rows_per_band, "min_jaccard": params.near.min_jaccard},
        },
    }


def _yaml_list(key: str, values: list[str], indent: str = "") -> str:
    if not values:
        return f"{indent}{key}: []\n"
    return f"{indent}{key}:\n" + "".join(f"{indent}- {json.dumps(v)}\n" for v in values)


def dataset_card(stats: Mapping[str, Any], params: ExportParams, name: str = "boilerstrip export") -> str:
    """The card: YAML header (JSON strings are valid YAML scalars) then what a user needs to know."""
    languages = [lang for lang in stats["languages"] if lang != "unknown"]
    fmt = params.format
    header = (
        "---\n"
        f"license: {json.dumps(params.license)}\n"
        + _yaml_list("language", languages)
        + _yaml_list("size_categories", [size_category(stats["documents"])])
        + _yaml_list("task_categories", ["text-generation"])
        + f"pretty_name: {json.dumps(name)}\n"
        + _yaml_list("source_sites", list(stats["sites"]))
        + f"crawl_dates: {json.dumps(' .. '.join(stats['dates']) if stats['dates'] else '')}\n"
        + _yaml_list("filters", params.filters.describe() or ["none"])
        + f"opt_out_policy: {json.dumps('included (--include-opted-out)' if params.include_opted_out else 'excluded')}\n"
        + "configs:\n- config_name: default\n  data_files:\n  - split: train\n"
        + f"    path: {json.dumps(f'data/train-*.{fmt}')}\n"
        + "---\n"
    )
    reasons = stats["excluded_by_reason"]
    lines = [
        f"# {name}", "",
        f"{stats['documents']} documents ({stats['words']} words) exported by boilerstrip from "
        f"{len(stats['crawls'])} crawl(s) of {len(stats['sites'])} site(s); {stats['excluded']} left out "
        "(each in `excluded.jsonl` with its reason; counts in `stats.json`).", "",
        "## Source", "",
        "| Site | Kept | Left out |", "|---|---|---|",
        *(f"| {site} | {c['kept']} | {c['excluded']} |" for site, c in stats["sites"].items()), "",
        f"Crawl dates: {' to '.join(stats['dates']) if stats['dates'] else 'unknown'}. "
        f"Crawls: {', '.join(stats['crawls']) or 'none'}.", "",
        "## License", "",
        f"`{params.license}`: the text remains under the terms of its source sites; check them before use.", "",
        "## Opt-out policy", "",
        ("Pages that opted out of AI training were **included** on request (`--include-opted-out`): "
         f"{stats['opted_out_included']} such rows; their `ai_opt_out` column names the signals."
         if params.include_opted_out else
         "Pages that opted out of AI training (robots.txt `Content-Signal: ai-train=no` or `Content-Usage: "
         "train-ai=n`, `noai` in meta robots or `X-Robots-Tag`, TDMRep reservations) were left out: "
         f"{reasons.get('ai_opt_out', 0)} pages."), "",
        "## Processing", "",
        "- Versions: of a URL in several crawls the newest version is kept (by fetch time; the others are "
        f"`older_version`: {reasons.get('older_version', 0)}); a page a later crawl found removed is left out "
        f"(`removed_later`: {reasons.get('removed_later', 0)}).",
        "- Deduplication across every input: exact (normalised text) and near (MinHash LSH, word "
        f"{params.near.shingle_words}-grams, {params.near.bands} bands of {params.near.rows_per_band} rows); "
        "of a duplicate group the document with the shortest, then smallest URL is kept.",
        f"- Filters: {', '.join(params.filters.describe()) or 'none (quality signals recorded, not applied)'}.",
        ("- PII kept as crawled (`--keep-pii`)." if params.keep_pii else
         f"- Email addresses and public IP addresses replaced by placeholders "
         f"({stats['pii_replaced']['email']} emails, {stats['pii_replaced']['ip']} IPs)."),
        "- Language: py3langid (`language`, `language_score`).", "",
        "## Left out", "",
        "| Reason | Documents |", "|---|---|",
        *(f"| `{reason}` | {n} |" for reason, n in reasons.items()), "",
        "## Languages", "",
        "| Language | Documents |", "|---|---|",
        *(f"| {lang} | {n} |" for lang, n in stats["languages"].items()), "",
        "## Fields", "",
        "`text`, `id` (stable: hash of URL and normalised text), `url`, `date` (fetched at, UTC), `title`, "
        "`site`, `crawl` (source crawl), `language`, `language_score`, `word_count`, `quality` (Gopher "
        "signals, template share, extraction method, flags), `ai_opt_out` (opt-out signals found).", "",
    ]
    return header + "\n" + "\n".join(lines)

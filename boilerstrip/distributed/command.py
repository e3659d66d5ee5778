"""``boilerstrip crawl ... --redis URL --workers N``: the crawl command's distributed path (thin glue)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from boilerstrip.run import apply_settings

__all__ = ["crawl_distributed", "crawl_config"]


def crawl_config(args: argparse.Namespace) -> dict[str, Any]:
    """What every worker needs to build the same crawl: the crawl command's arguments."""
    return {
        "urls": list(args.urls), "profile": args.profile, "max_pages": args.max_pages, "max_depth": args.max_depth,
        "scope": args.scope, "no_sitemaps": bool(args.no_sitemaps), "allow_private": list(args.allow_private or []),
        "settings": list(args.settings or []), "log_level": args.log_level,
    }


def crawl_distributed(args: argparse.Namespace, settings: Any, out: Path, workers: int) -> int:
    # redis and the coordinator load for a --redis crawl only (the CLI imports this module to build its parser)
    import redis

    from boilerstrip.distributed.coordinator import coordinate

    try:
        redis.Redis.from_url(args.redis).ping()
    except (ValueError, redis.RedisError) as exc:
        print(f"boilerstrip crawl: cannot reach {args.redis}: {exc}", file=sys.stderr)
        return 2
    # the finishing pass reads the template counts the workers kept in Redis
    apply_settings(settings, {"BOILERSTRIP_STATE_DIR": args.redis, "BOILERSTRIP_STATE_BACKEND": "boilerstrip.state.RedisState"})
    return coordinate(args.redis, workers, crawl_config(args), out, settings, resume=bool(getattr(args, "resume", False)))

"""``boilerstrip crawl ... --redis URL --workers N``: the crawl command's distributed path (thin glue)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from boilerstrip.run import apply_settings

__all__ = ["crawl_distributed", "crawl_config", "redis_problem"]


def crawl_config(args: argparse.Namespace) -> dict[str, Any]:
    """What every worker needs to build the same crawl: the crawl command's arguments."""
    return {
        "urls": list(args.urls), "profile": args.profile, "max_pages": args.max_pages, "max_depth": args.max_depth,
        "scope": args.scope, "no_sitemaps": bool(args.no_sitemaps), "allow_private": list(args.allow_private or []),
        "settings": list(args.settings or []), "log_level": args.log_level,
    }


def redis_problem(url: str) -> str | None:
    """Why the Redis at ``url`` cannot serve a crawl (a bad URL, nothing listening), or None: asked before
    anything is written (the output's folder included)."""
    # redis loads for a --redis crawl only (the CLI imports this module to build its parser)
    import redis

    try:
        redis.Redis.from_url(url).ping()
    except (ValueError, redis.RedisError) as exc:
        return f"cannot reach {url}: {exc}"
    return None


def crawl_distributed(args: argparse.Namespace, settings: Any, out: Path, workers: int) -> int:
    from boilerstrip.distributed.coordinator import coordinate

    problem = redis_problem(args.redis)  # checked before the output's folder was made; it may have gone since
    if problem is not None:
        print(f"boilerstrip crawl: {problem}", file=sys.stderr)
        return 2
    # the finishing pass reads the template counts the workers kept in Redis
    apply_settings(settings, {"BOILERSTRIP_STATE_DIR": args.redis, "BOILERSTRIP_STATE_BACKEND": "boilerstrip.state.RedisState"})
    return coordinate(args.redis, workers, crawl_config(args), out, settings, resume=bool(getattr(args, "resume", False)))

"""Pure safety rules (no Scrapy, Twisted or Playwright): addresses, URL scope, crawl traps, text repair.

The Scrapy glue lives in ``boilerstrip.downloadermiddlewares.scope``, ``boilerstrip.spidermiddlewares.traps``,
``boilerstrip.extensions.ledger`` and ``boilerstrip.feeds``; these modules only decide.
"""

from boilerstrip.safety.addresses import (
    Origin,
    address_refusal,
    origin_of,
    parse_host_port,
    parse_ip_literal,
)
from boilerstrip.safety.text import repair_text, repair_value
from boilerstrip.safety.traps import TrapParams, TrapState

__all__ = [
    "Origin",
    "address_refusal",
    "origin_of",
    "parse_host_port",
    "parse_ip_literal",
    "repair_text",
    "repair_value",
    "TrapParams",
    "TrapState",
]

"""Scrapy settings of the boilerstrip project.

These are the project's settings: a profile from ``settings_profiles/`` is applied *below* them (only
where a setting is not set here, by the spider or on the command line), so the values here that a
profile may change are listed in ``PROFILE_KEYS`` and kept out of this module on purpose; their
polite defaults live in ``settings_profiles/polite.py``.

Every ``BOILERSTRIP_*`` setting is documented in README.md (a test checks that none is missing).
"""

from boilerstrip import PROJECT_URL, __version__

BOT_NAME = "boilerstrip"
SPIDER_MODULES = ["boilerstrip.spiders"]
NEWSPIDER_MODULE = "boilerstrip.spiders"

# Scrapy 2.19 defaults we rely on, stated so a reader does not have to look them up.
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"

# An honest identity: the product token matches the robots.txt group we obey.
BOILERSTRIP_CONTACT = ""  # e.g. "mailto:crawler-ops@example.org"; appended to the User-Agent when set
USER_AGENT = f"boilerstrip/{__version__} (+{PROJECT_URL})"

# The item fields that reach the JSONL file, in order (the raw HTML never does).
FEED_EXPORT_FIELDS = None  # set from boilerstrip.items.EXPORT_FIELDS by the CLI / spider

# Components are registered here; each has its own BOILERSTRIP_<COMPONENT>_ENABLED setting.
DOWNLOADER_MIDDLEWARES: dict[str, int | None] = {}
SPIDER_MIDDLEWARES: dict[str, int | None] = {}
ITEM_PIPELINES: dict[str, int] = {}
EXTENSIONS: dict[str, int | None] = {
    # Remote-control endpoints off: a crawler must not open a shell on a port.
    "scrapy.extensions.telnet.TelnetConsole": None,
}
TELNETCONSOLE_ENABLED = False

# The profile applied when none is named (see settings_profiles/).
BOILERSTRIP_PROFILE = "polite"

LOG_LEVEL = "INFO"

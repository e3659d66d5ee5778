"""Words of navigation, sign-in, subscription and consent chrome (casefolded word tokens), in one place.

``NAVIGATION_WORDS`` are rarely anything else in a short line; ``WEAK_NAVIGATION_WORDS`` are navigation in a
bar ("Prev | Up | Next") but ordinary words in prose ("back up the log"): they make a line navigation only
when the line, or one of its pieces, has nothing else.
"""

NAVIGATION_WORDS = frozenset((
    "home", "next", "previous", "prev", "menu", "breadcrumb", "breadcrumbs", "sitemap",
    "login", "logout", "signin", "signup", "subscribe", "unsubscribe", "newsletter", "rss",
    "cookie", "cookies", "consent",
))
WEAK_NAVIGATION_WORDS = frozenset((
    "up", "back", "top", "skip", "log", "sign", "register", "account", "share", "follow", "tweet", "accept",
    "in", "out", "to", "content", "main", "all", "more", "page",
))
#: two-word phrases that are navigation as a whole ("Log in"), whatever the words alone are
NAVIGATION_PHRASES = frozenset(("log in", "log out", "sign in", "sign up", "sign out", "skip to", "back to top"))

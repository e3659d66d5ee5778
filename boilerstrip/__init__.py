"""boilerstrip: a polite crawler that returns the real content of every page."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/boilerstrip/boilerstrip"
#: The product token of the User-Agent; robots.txt groups are matched against it.
ROBOTS_TOKEN = "boilerstrip"

__all__ = ["__version__", "PROJECT_URL", "ROBOTS_TOKEN"]

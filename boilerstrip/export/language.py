"""Language identification with py3langid, whose model ships inside the pip package (nothing downloaded)."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["LanguageIdentifier", "unknown_languages"]


class LanguageIdentifier:
    """Uses py3langid's bundled model (loaded once per process, about 2 s) and classifies the first ``max_chars`` of a text."""

    def __init__(self, max_chars: int = 2_000) -> None:
        self.max_chars = max_chars
        self._model = _bundled_model()

    def identify(self, text: str) -> tuple[str | None, float]:
        """(ISO 639-1 code, probability in [0, 1]); (None, 0.0) for a text without letters."""
        sample = " ".join(text[: self.max_chars].split())
        if not any(ch.isalpha() for ch in sample):
            return None, 0.0
        lang, score = self._model.classify(sample)
        return str(lang), round(float(score), 4)


@functools.lru_cache(maxsize=1)
def _bundled_model() -> Any:
    """py3langid's model file from inside the package, loaded once per process (it is read-only)."""
    from py3langid.langid import MODEL_FILE
    from py3langid.langid import LanguageIdentifier as _Identifier

    return _Identifier.from_model_file(MODEL_FILE, norm_probs=True)


def unknown_languages(codes: tuple[str, ...]) -> list[str]:
    """The codes among ``codes`` that py3langid never gives (``--languages english`` for ``en``): a filter on
    them keeps nothing of that language. Loads the model (as the export does anyway)."""
    known = set(_bundled_model().nb_classes)
    return [code for code in codes if code not in known]

"""The export's thresholds, one frozen dataclass each (``boilerstrip export`` maps its options onto them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from boilerstrip.minhash import NearDuplicateRecipe

__all__ = ["ExportParams", "FilterParams", "GopherParams", "NearDedupParams", "FORMATS"]

FORMATS = ("parquet", "jsonl")


@dataclass(frozen=True)
class GopherParams:
    """Gopher's quality rules (Rae et al. 2021, as datatrove's GopherQualityFilter and
    GopherRepetitionFilter apply them to FineWeb): used only with ``--gopher``; the signals are always recorded."""

    # Gopher keeps documents of 50..100,000 words: shorter ones are stubs, longer ones are dumps.
    min_words: int = 50
    max_words: int = 100_000
    # Mean word length outside 3..10 characters: lists of symbols, or tokens glued together.
    min_mean_word_length: float = 3.0
    max_mean_word_length: float = 10.0
    # More than one '#' or ellipsis per ten words: hashtag spam, truncated teasers.
    max_symbol_word_ratio: float = 0.1
    # Over 90% of lines starting with a bullet: a link list or a menu, not prose.
    max_bullet_lines_fraction: float = 0.9
    # Over 30% of lines ending in an ellipsis: teaser pages.
    max_ellipsis_lines_fraction: float = 0.3
    # Under 80% of words with a letter: tables of numbers, code dumps.
    min_alpha_words_fraction: float = 0.8
    # Fewer than 2 of Gopher's English stop words (the, be, to, of, and, that, have, with): not English prose
    # (applied only to documents identified as English).
    min_stop_words: int = 2
    # Repetition: duplicate lines / paragraphs (by count and by characters) and the top 2-, 3-, 4-gram's
    # share of the characters, Gopher's published limits.
    max_duplicate_line_fraction: float = 0.3
    max_duplicate_paragraph_fraction: float = 0.3
    max_duplicate_line_char_fraction: float = 0.2
    max_duplicate_paragraph_char_fraction: float = 0.2
    max_top_2gram_char_fraction: float = 0.2
    max_top_3gram_char_fraction: float = 0.18
    max_top_4gram_char_fraction: float = 0.16


@dataclass(frozen=True)
class FilterParams:
    """What the export leaves out besides duplicates and opted-out pages. By default nothing: the signals
    are recorded on each row and the dataset's user decides."""

    # Documents with fewer words are left out (reason too_few_words); 0 = no minimum.
    min_words: int = 0
    # Keep only these languages (ISO 639-1 codes as py3langid names them); empty = every language.
    languages: tuple[str, ...] = ()
    # Documents whose language score is below this are left out (language_score_too_low); 0 = off.
    # FineWeb keeps English at >= 0.65 with fastText; py3langid's normalised probability is comparable.
    min_language_score: float = 0.0
    # Apply the Gopher rules (GopherParams) and leave out what fails them (reason gopher_<rule>).
    gopher: bool = False
    gopher_params: GopherParams = field(default_factory=GopherParams)

    def __post_init__(self) -> None:
        if self.min_words < 0 or not 0.0 <= self.min_language_score <= 1.0:
            raise ValueError("min_words must be >= 0 and min_language_score in [0, 1]")

    def describe(self) -> list[str]:
        out = []
        if self.min_words:
            out.append(f"min_words={self.min_words}")
        if self.languages:
            out.append("languages=" + ",".join(self.languages))
        if self.min_language_score:
            out.append(f"min_language_score={self.min_language_score}")
        if self.gopher:
            out.append("gopher")
        return out


@dataclass(frozen=True)
class NearDedupParams:
    """MinHash LSH as FineWeb runs it (datatrove MinhashConfig): word 5-grams, 14 bands of 8 rows.
    A pair with Jaccard 0.75 shares a band with probability ~0.77, one at 0.85 ~0.99, one at 0.5 ~0.05."""

    shingle_words: int = 5
    bands: int = 14
    rows_per_band: int = 8
    # MinHash seed: fixed, so signatures in a kept index match the ones a later export computes.
    seed: int = 1
    # After a band collision, also require this estimated Jaccard (0 = any collision is a duplicate, as
    # FineWeb does; the estimate is recorded in excluded.jsonl either way).
    min_jaccard: float = 0.0
    # Texts with fewer words than one shingle are compared exactly only.
    min_words: int = 5

    def __post_init__(self) -> None:
        if self.shingle_words < 1 or self.bands < 1 or self.rows_per_band < 1:
            raise ValueError("shingle_words, bands and rows_per_band must be >= 1")
        if not 0.0 <= self.min_jaccard <= 1.0:
            raise ValueError("min_jaccard must be in [0, 1]")

    @property
    def num_perm(self) -> int:
        return self.bands * self.rows_per_band

    def recipe(self) -> NearDuplicateRecipe:
        """boilerstrip/minhash.py's training recipe with these sizes (the defaults: ``TRAINING_RECIPE``)."""
        return NearDuplicateRecipe(fold_digits_and_accents=True, min_jaccard=self.min_jaccard,
                                   num_perm=self.num_perm, bands=self.bands, shingle_words=self.shingle_words,
                                   min_words=self.min_words, seed=self.seed)


@dataclass(frozen=True)
class ExportParams:
    format: str = "parquet"
    # Documents per shard file. 100,000 FineWeb-sized documents (~3 KB of text each) make ~150 MB of
    # zstd Parquet: small enough to download one, large enough not to make thousands of files.
    shard_size: int = 100_000
    # Rows per Parquet row group: a streaming reader (datasets' streaming mode, pyarrow iter_batches)
    # holds one group at a time; 1,000 rows (~3 MB of text) is datatrove's default batch.
    row_group_rows: int = 1_000
    # zstd level 3: zstd's default, most of the size gain at a fraction of the time of higher levels.
    zstd_level: int = 3
    # Pages that opted out of AI training are left out unless this is set (the CLI warns).
    include_opted_out: bool = False
    # Email and public IP addresses become placeholders unless this is set (FineWeb does the same).
    keep_pii: bool = False
    # Language identification reads at most this many characters of a document: py3langid is linear in
    # the text (its cost dominates the export) and 2,000 characters, a few paragraphs, settle a page's language.
    language_max_chars: int = 2_000
    # The dataset card's license field (the crawled text stays under the source sites' terms).
    license: str = "other"
    # A document whose text is longer is left out (too_long) as soon as it is read, before any step that
    # costs memory in proportion to the text (word lists, n-grams, MinHash shingles: about 40 bytes per
    # character). 2,000,000 characters is over 300,000 words, three times Gopher's own 100,000-word maximum:
    # no web page's main text. It bounds an export's memory: a 128 MiB record cost 4 GB before
    # (issue 30, item 11); now a record costs its line about three times while it is read, then nothing.
    max_text_chars: int = 2_000_000
    filters: FilterParams = field(default_factory=FilterParams)
    near: NearDedupParams = field(default_factory=NearDedupParams)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {self.format!r}")
        if self.shard_size < 1 or self.row_group_rows < 1:
            raise ValueError("shard_size and row_group_rows must be >= 1")
        if self.language_max_chars < 100:
            raise ValueError("language_max_chars must be >= 100")
        if self.max_text_chars < 1:
            raise ValueError("max_text_chars must be >= 1")

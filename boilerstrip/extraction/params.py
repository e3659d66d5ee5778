"""Every threshold of the extractor, in one frozen dataclass.

Names carry unit and direction (``min_text_chars``, ``max_link_density``). Values were set on the public
article benchmark (``benchmarks/extraction_benchmark.py``, 181 pages, sweeps of 2026-11-30 at F1 0.9824-0.9829);
"flat" below means the sweep moved F1 by less than 0.001, so the value rests on the reason given, not on
the benchmark. Fields added for issue 10 (pages that are not articles) were set on the *tuning half* of
WCXB-dev (``benchmarks/extraction_benchmark.py``: 973 of its 1,337 pages, split by a hash of the site; the
364 held-out pages were only scored, never looked at), checked against the article benchmark; "WCXB tuning"
below quotes that half's F1, dev runs of 2026-12-01. The Scrapy pipeline reads these fields from ``BOILERSTRIP_EXTRACTION_PARAMS`` (a few user-level ones
are settings of their own: ``boilerstrip.config.USER_FIELDS``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .bodytext import DEFAULT_EXCLUDE_TAGS, DEFAULT_INCLUDE_TAGS, bodytext_xpath

METHODS = ("auto", "semantic", "density", "bodytext")
COMMENT_MODES = ("drop", "keep")


@dataclass(frozen=True)
class ExtractionParams:
    # --- which rungs run -------------------------------------------------------------------------
    #: "auto" runs the enabled rungs in order (semantic, density, bodytext) and keeps the first accepted;
    #: a rung name runs only that rung.
    method: str = "auto"
    semantic_enabled: bool = True
    density_enabled: bool = True
    bodytext_enabled: bool = True
    #: Tags whose text the body-text XPath keeps / whose descendants it drops (see bodytext_xpath).
    bodytext_include_tags: tuple[str, ...] = DEFAULT_INCLUDE_TAGS
    bodytext_exclude_tags: tuple[str, ...] = DEFAULT_EXCLUDE_TAGS

    # --- parsing --------------------------------------------------------------------------------
    #: Build the tree a browser builds where libxml2's differs: when libxml2 met an end tag it could not
    #: match, the page goes through an HTML5 (WHATWG) tree builder (lexbor, via selectolax) and lxml reads
    #: its well-formed serialisation (see ``parse``). libxml2's own recovery cannot close the <div>s still
    #: open inside an end tag (``<button><div></button>``), so a header button swallows the whole page.
    #: Both sets, 2026-12-01: 11 of 1,518 pages change, all for the better (WCXB-dev +0.003, held-out
    #: +0.008; article benchmark unchanged); False parses with libxml2 alone.
    html5_tree: bool = True

    # --- input limits (hostile input never raises; past a limit the result is empty with a reason) --
    #: Larger inputs are refused ("input_too_large"): real article pages are < 3 MB; 16 MiB bounds time
    #: and memory (lxml trees take ~10x the source) and matches the crawl's download cap.
    max_input_chars: int = 16 * 1024 * 1024  # = the crawl's DOWNLOAD_MAXSIZE
    #: Share of control characters (and U+FFFD in text) in the first 4096 bytes/characters above which
    #: input is binary ("binary_input"): random bytes give ~0.11 control bytes and ~0.5 U+FFFD, HTML ~0.
    max_binary_char_ratio: float = 0.08
    #: Share of U+FFFD in the decoded text above which the result is flagged "replacement_chars".
    max_replacement_char_ratio: float = 0.0
    #: When the page's <noscript> elements hold at least this share of its text, the page is a JavaScript
    #: shell whose no-script rendering is the content (Discourse-style forums), and <noscript> is read;
    #: otherwise it is dropped. WCXB-dev tuning half, 2026-12-01: app shells have 0.84-0.97 of their text
    #: there, every other page (both sets) at most 0.62 (0.42 on articles); 0.75 sits in the gap.
    min_noscript_share_of_page: float = 0.75
    #: A <nav>, <aside> or <footer> holding more than this share of the page's text is an unclosed one that
    #: swallowed the rest of the page, and is read as a <div> (flag "unclosed_chrome"). WCXB-dev tuning
    #: half, 2026-12-01: such pages had 0.9+ of their text inside; real footers and menus stay far below.
    max_chrome_share_of_page: float = 0.6

    # --- budget (a page must not hold the crawl: the ladder's rungs are Python over every node) ------
    #: A parsed page with more elements than this is not extracted: empty, reason ``over_budget``, flag
    #: ``extraction_budget:nodes`` (the crawl records it as ``failed:extraction_budget``). Long real pages (a
    #: long Wikipedia article, a big documentation page) have 10-60 thousand elements; a 9 MiB page of
    #: 120 000 blocks has 240 000: ~4 s in the ladder, and ~50 s more in the per-block stages after it.
    #: 0: no limit.
    max_nodes: int = 100_000
    #: CPU seconds (of the extracting thread) after which no further rung starts: the best result so far,
    #: else the plain-text rung, with the flag ``extraction_budget:cpu``. The ladder takes ~10-50 ms on a
    #: typical page; 2 s is a page 40x the size of a large one. 0: no limit.
    max_cpu_s: float = 2.0

    # --- sanity checks on a rung's result ------------------------------------------------------------
    #: A result shorter than this is refused ("too_short"); when every rung is refused, the longest
    #: short result is still returned ("accepted_short"). 250: teasers and cookie notices are shorter;
    #: flat on the benchmark from 150 to 400.
    min_text_chars: int = 250
    #: ...but no shorter than this: "Loading...", "Page not found" are not a page's content. 30: one
    #: short sentence.
    min_last_resort_chars: int = 30
    #: A result whose text is mostly link text is navigation ("link_density_high"). 0.5 as Readability.
    max_link_density: float = 0.5
    #: The semantic container must hold at least this share of the page's good paragraph text, else it is
    #: a teaser/card ("covers_too_little"). Flat from 0.2 to 0.5; 0.35 keeps a teaser <article> from
    #: beating the real, unmarked story.
    min_semantic_share_of_page: float = 0.35

    # --- confidence (see confidence.py) ------------------------------------------------------------
    #: A result whose estimated F1 (``confidence``) is below this gets a second opinion: the rungs the
    #: ladder did not take and a recall-oriented widening of the winner are scored by the same estimate,
    #: and the most confident is kept (1.0: every page; 0: off). 0.4 from the WCXB-dev tuning half
    #: (2026-12-07: 0.8482 off, 0.8497 at 0.3, 0.8513 at 0.35, 0.8525 at 0.4, 0.8528 at 0.45; held-out
    #: 0.8487 -> 0.8511 at 0.4); at 0.5 the article benchmark falls 0.9814 -> 0.9791, at 0.4 and below no
    #: article page is retried (docs/extraction.md).
    min_confidence_without_retry: float = 0.4
    #: ...when its confidence beats the first result's by at least this much (not swept: 0.05 is about
    #: the spread of the held-out reliability table's upper deciles, the estimate's noise).
    min_retry_confidence_gain: float = 0.05

    # --- blocks ----------------------------------------------------------------------------------------
    #: A block needs this many characters to count as a paragraph when scoring (Readability's 25; flat
    #: from 15 to 40).
    min_paragraph_chars: int = 25
    #: A paragraph whose link text exceeds this share does not count as good text (flat 0.33-0.66).
    max_paragraph_link_density: float = 0.5

    # --- semantic rung ------------------------------------------------------------------------------
    #: A nested semantic container (articleBody inside article inside main) replaces its ancestor when it
    #: holds at least this share of the ancestor's good text. Article benchmark sweep (2026-11-30): 0.6
    #: 0.9811, 0.7 0.9820, 0.8 0.9824, 0.9 0.9820 (lower loses split bodies, higher keeps headers and
    #: related blocks inside <main>). Since then (repeated units, widening, card text kept) the nested
    #: container's units and widening restore split bodies, and WCXB tuning (2026-12-01, article benchmark
    #: in brackets): 0.9 0.8394 (0.9810), 0.8 0.8398 (0.9814), 0.7 0.8404 (0.9810), 0.6 0.8408 (0.9810),
    #: 0.5, 0.45 and 0.4 0.8410 (0.9810); product pages 0.585 at 0.8, 0.592 at 0.45 (a product's
    #: description box inside a <main> full of recommendations). 0.45: the middle of the plateau.
    min_nested_container_share: float = 0.45
    #: Among several side-by-side <article>s, the largest is the story when it holds this share of the
    #: content area and this many times the text of any other (teaser cards are short). Flat.
    min_dominant_article_share: float = 0.3
    min_dominant_article_ratio: float = 2.0
    #: An <article> holding this many other <article>s is a list of cards, not a story ("you may like").
    min_nested_articles_for_list: int = 2

    # --- density rung -------------------------------------------------------------------------------
    #: Readability's weights: class/id vocabulary bonus/malus, and the share of a paragraph's score given
    #: to the grandparent (kept as published).
    class_weight_points: float = 25.0
    grandparent_score_share: float = 0.5
    #: How many ancestors of a paragraph receive its points (Readability's 5; level n >= 2 gets 1/(3n)).
    max_scored_ancestor_levels: int = 5
    #: The density winner must hold at least this share of the page's good paragraph text (else the next
    #: best candidate is taken). Density-only F1: 0 0.9731, 0.1-0.3 0.9779, 0.4 0.9659; 0.2 is mid-plateau.
    min_density_winner_share: float = 0.2
    #: When the density winner is a part of a document (a list, or a block mostly of code), an ancestor of
    #: it (up to ``max_scored_ancestor_levels`` up) that scores at least this share of the winner's score
    #: and holds more good text takes its place (a list of a release note's section won over the notes, a
    #: reference page's synopsis over the page). 0: off. Issue 24, markdown benchmark headings:
    #: python-django-doc 0.957 -> 0.99, docbook-xsl-doc-html 0.943 -> 0.952; the
    #: article benchmark unchanged at 0.9811 (climbing from any winner cost it 0.0003: an article's
    #: wrapper adds its byline and tags).
    min_ancestor_score_share: float = 0.8
    #: Sibling merge: a sibling joins when its score reaches this share of the winner's (Readability 0.2)
    #: or at least ``min_sibling_score_points`` (both flat on the benchmark: 0.1-0.3, 5-20 points).
    min_sibling_score_share: float = 0.2
    min_sibling_score_points: float = 10.0
    #: Elements with the winner's tag and class under its ancestor this many levels up join it (an
    #: article cut into chunks, each in its own wrapper); 0: off. Density-only F1: 0 0.9702, 2 0.9724,
    #: 3 0.9731, 5 0.9742 (same precision); 3 keeps the search near the winner.
    max_cousin_levels: int = 3
    #: A sibling paragraph joins without a score when longer than this and nearly link-free.
    min_sibling_paragraph_chars: int = 80
    max_sibling_paragraph_link_density: float = 0.25
    #: A sibling whose text is at least this share code (<pre> blocks) joins without a score when nearly
    #: link-free: a reference page's synopsis beside its description (DocBook's refsynopsisdiv). 0: off.
    #: Markdown benchmark, 2026-12-03: docbook-xsl-doc-html <pre> kept 0.63 -> 0.98; extraction benchmark
    #: unchanged (WCXB-dev documentation +0.0007).
    min_sibling_code_share: float = 0.5

    # --- repeated units (posts, items, cards) ------------------------------------------------------
    #: The chosen container's first ancestor whose shape (tag and first class token) recurs under its
    #: parent at least this many times with good text makes the recurrences the content (0: off). 2: a
    #: question and one answer is a thread. WCXB tuning, forum pages: off 0.702, on 0.730 (with the
    #: noscript rule); article benchmark 0.9835 -> 0.9812 (side-by-side story blocks now kept).
    min_repeated_units: int = 2
    #: ...when together they hold at least this many times the chosen container's good text (not swept;
    #: 1.5: the other units must add half again, so two teaser cards do not join a long story).
    min_repeated_units_gain: float = 1.5
    #: How many levels above the chosen container the search goes (10: a post body sits 8 levels below
    #: its post card in common forum software; not swept).
    max_repeated_unit_levels: int = 10

    #: A chosen container (with its repeated units) holding less than this share of the page's good text is
    #: widened to its nearest ancestor holding ``min_widened_share_of_page`` of it (0: off). Sweep
    #: (container/widened share: WCXB tuning F1, product F1, article benchmark F1): 0.5/0.8 0.8129 0.574
    #: 0.9763; 0.4/0.8 0.8133 0.577 0.9778; 0.4/0.6 0.8131 0.577 0.9778; 0.3/0.8 0.8125 0.568 0.9812.
    #: 0.3 keeps the article benchmark; the gain elsewhere is small either way.
    min_container_share_of_page: float = 0.3
    min_widened_share_of_page: float = 0.8

    #: A furniture word that also names page structure (_vocab.FRAMEWORK_WORDS: "widget", "cmp",
    #: "sidebar", "rail") whose elements together hold more than this share of the page's prose is the
    #: page's framework vocabulary (a page builder's "elementor-widget-container" on every element, AEM's
    #: "cmp-text"), not furniture: elements named only by such words are not pruned (0: off)...
    max_furniture_word_share_of_page: float = 0.5
    #: ...when those elements are at least this many separate boxes (one sidebar column is still one).
    #: WCXB tuning (with min_link_list_text_ratio 1): off 0.8300, on 0.8325 (held-out 0.8227 -> 0.8253;
    #: article 0.939 -> 0.941, collection 0.569 -> 0.585, listing 0.614 -> 0.624, product and service
    #: -0.001); article benchmark unchanged. Not swept: 0.5 is "most of the page" as elsewhere here;
    #: with every furniture word eligible (not only FRAMEWORK_WORDS) popups and promotion bars were kept.
    #: Every element holding prose counts, nested ones too: a component library wraps the whole page in one
    #: "cmp-container" and each text in a "cmp-text" (counting only the outermost, that was one box).
    #: 2026-12-01: WCXB tuning +0.0010, held-out +0.0005 (7 pages better, 2 worse), article benchmark same.
    min_framework_word_elements: int = 3

    # --- pruning inside the chosen container --------------------------------------------------------------
    #: A boilerplate-vocabulary or chrome element inside the container is kept when it holds more than this
    #: share of the container's text (then it is the article wrapper with an unlucky class name).
    #: Flat from 0.4 to 0.8 on the benchmark; 0.6 leaves room for an unlucky wrapper.
    max_pruned_share_of_container: float = 0.6
    #: Same guard when scoring candidates, relative to the whole body (a <form> or <header> around the
    #: whole page). Sweep: 0.3 0.9804, 0.5 0.9824, 0.7 0.9809. <nav>, <aside>, <footer> and comment
    #: threads have no guard.
    max_pruned_share_of_page: float = 0.5
    #: A furniture-named element ("sidebar", "note" box) inside the container is kept when it is an
    #: in-text box: at least this many characters of paragraph prose, link density at most
    #: ``max_inflow_box_link_density``, and a parent that holds a good paragraph of its own beside it
    #: (DocBook/magazine sidebars set among a section's paragraphs; 0: off). Site benchmark
    #: (debian-handbook, density rung): off F1 0.846, on 0.977; article benchmark: see docs/extraction.md.
    min_inflow_box_chars: int = 200
    #: ...and link density at most this (a related-links box is mostly links; prose has few).
    max_inflow_box_link_density: float = 0.25
    #: A list/div/section/table of two or more blocks inside the container whose text is more than this
    #: share links is dropped. Sweep: 0.25 0.9805, 0.3 0.9823, 0.35 0.9824, 0.4 0.9817.
    max_inner_link_density: float = 0.35
    #: ...unless dropping the link lists leaves less than ``min_text_chars`` and they hold more: then the
    #: lists may be the content (an index page, a listing, a catalogue): the rung's result keeps them with
    #: their link-only items and is refused as "link_list", which, like a "too_short" or
    #: "link_density_high" result, is returned when every rung refuses ("accepted_links"). WCXB tuning:
    #: off 0.8182 (listing 0.540), on 0.8226 (listing 0.571); accepting such results at once instead of as
    #: the last resort scored 0.8174 (a small list beat the later rungs).
    keep_link_list_content: bool = True
    #: A data table is never a link list (``_page.is_data_table``): a table of at least this many rows of
    #: two or more cells (header rows left out) with a column where more than ``min_text_column_share``
    #: of the rows hold a cell of at most ``max_data_cell_link_density`` link text. Its rows' links do
    #: not count in the link density of the table or of what holds it (an API table: a linked name, a
    #: description; a table of products: a linked name, a price). 0: off. Tuned on sphinx-doc, Django,
    #: libpam-doc and WCXB-dev's tables (python-celery-doc held out): see docs/extraction.md.
    min_data_table_rows: int = 2
    #: ...more than half the rows: a navigation table ("Prev | Up | Next" over "title | Home | title")
    #: has at most half its cells in one column as plain text
    min_text_column_share: float = 0.5
    #: ...a cell at most half link text is a cell of text ("`Task` | the task's class")
    max_data_cell_link_density: float = 0.5
    #: ...and, on a page with more text than that, when the lists hold at least this many times the text
    #: left without them (a list page with an introduction: "List of ...", a blog index with a lead), they
    #: are kept and the result accepted (0: off). Sweep (WCXB tuning / held-out / article benchmark): off
    #: 0.8254 / 0.8231 / 0.9812; 6 0.8280 / 0.8231 / 0.9812; 4 0.8287 / 0.8240 / 0.9812; 2 0.8294 / 0.8254 /
    #: 0.9812; 1 0.8313 / 0.8246 / 0.9812; 0.5 0.8326 / 0.8261 / 0.9801; ~0 0.8337 / 0.8255 / 0.9766
    #: (product -0.008). 1: lists at least as long as the rest; lower starts to cost the article benchmark.
    min_link_list_text_ratio: float = 1.0
    #: ...and link lists written as list elements (<ul>, <ol>, <dl>, <table>: a checklist, a table of
    #: chapters), not boxes of links, are kept when together they hold at least this share of the rest of
    #: the container's text (0: off). WCXB tuning / held-out / article benchmark: off 0.8410 / 0.8321 /
    #: 0.9810; 0.25 0.8418 / 0.8323 / 0.9810 (documentation +0.003, product unchanged); 0.1 0.8419 /
    #: 0.8325 / 0.9810 (product -0.0004); 0.01 0.8420 / 0.8327 / 0.9807. A ratio of 0.25 for every link
    #: list, boxes included, scored 0.8439 but cost product pages 0.006.
    min_list_element_text_ratio: float = 0.25
    #: A run of list items or table rows that the link rules dropped, right after a block of at least this
    #: many words ending with a colon ("Many patches were sent for review:"), is part of the sentence that
    #: introduces it, and so is the sentence (0: off); named furniture stays out. Sweep (2026-12-07, WCXB
    #: tuning / held-out / article benchmark): off 0.8534 / 0.8523 / 0.9814; 2 0.8538 / 0.8529 / 0.9814
    #: (collection -0.0009); 4 0.8540 / 0.8528 / 0.9814, no kind lower in either half (documentation +0.003
    #: / +0.002); 6 as 4. Sparing the sentences with a furniture word ("You might also like:") changed
    #: nothing (0.8539 / 0.8528): the rule does without that list.
    min_introduction_words: int = 4
    #: At least this many sibling cards with one tag and class, each a linked title plus a summary of at
    #: most max_teaser_card_chars, are a teaser grid and are dropped (0: off). Sweep: off 0.9824, 3-6
    #: 0.9829 (one "most popular" grid on the benchmark; the pattern is common on the web).
    min_teaser_cards: int = 4
    max_teaser_card_chars: int = 400
    #: A single block whose text is at least this share link text is dropped ("Read more: <a>..</a>").
    #: Sweep: 0.7 0.9826, 0.8 0.9824, 0.9 0.9806; 0.8 keeps sentences with a long link.
    max_block_link_density: float = 0.8
    #: The text of the block around a picture, when this short, is its caption or credit and is dropped
    #: (with keep_captions False). Sweep: off 0.9811, 150 0.9816, 300 0.9824, 400 0.9826.
    max_caption_chars: int = 300
    #: ...except on a card: the picture holder, or one of its nearest ``max_card_levels`` ancestors, is one
    #: of at least ``min_card_siblings`` siblings with its tag and class (a grid of products, features,
    #: team members). Such text still does not count when choosing the container, but is not pruned from
    #: it. WCXB tuning (all pages / held-out; article benchmark): off 0.8345 / 0.8268; 0.9812; 3 and 3
    #: 0.8367 / 0.8289; 0.9814 (listing +0.015, service and product +0.005, collection -0.001); siblings
    #: 2 0.8372 / 0.9811, 4 0.8361; levels 2 0.8367, 5 0.8368. Dropping the caption rule altogether
    #: scored 0.8365 but cost the article benchmark (0.9800) and collection pages (-0.009).
    min_card_siblings: int = 3
    max_card_levels: int = 3
    #: Comment threads under a page (elements named by the comment vocabulary: "comments", "disqus",
    #: "replies"...): "drop" leaves them out whatever their size; "keep" adds every thread to the content,
    #: in page order, with the same pruning inside as the content. One rule for every page: forum posts
    #: that are the page's content are found as repeated units, but posts whose class names them
    #: comments follow this setting too. WCXB-dev's truth
    #: leaves comments under articles out (trafilatura with comments 0.9210, without 0.9264 on its tuning
    #: half's articles), hence "drop". Whatever the setting, the threads of a page holding less than
    #: ``min_text_chars`` of good text outside them are its content (a forum whose posts are named
    #: comments): WCXB tuning forum pages 0.730 -> 0.762, nothing else moved.
    comments: str = "drop"
    #: Keep <figcaption> text (the benchmark's reference bodies never hold it).
    keep_captions: bool = False
    #: A heading among the first blocks that repeats the page's title is dropped (the headline is
    #: metadata); only the first this many blocks are searched.
    max_headline_search_blocks: int = 5
    #: A heading matches the title when it is part of the title ("Title | Site"), or contains the title
    #: and the title is at least this share of it (a one-word title does not match every heading).
    min_headline_match_share: float = 0.6
    #: Keep <h1> headings in the body (the headline is metadata: ``title``).
    keep_h1: bool = False
    #: ...unless the content holds at least this many <h1>: then they are its section headings
    #: (documentation generators number sections with <h1>) and are kept, the headline still dropped
    #: (0: off). Article benchmark unchanged (its pages have one <h1>); sqlite3-doc: see docs/extraction.md.
    min_section_h1s: int = 2

    def __post_init__(self) -> None:
        if self.max_nodes < 0 or self.max_cpu_s < 0:
            raise ValueError("max_nodes and max_cpu_s must be >= 0 (0 = no limit)")
        if self.comments not in COMMENT_MODES:
            raise ValueError(f"comments must be one of {', '.join(COMMENT_MODES)}, not {self.comments!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, not {self.method!r}")
        # tuples keep the dataclass hashable and stop callers mutating the defaults through it
        object.__setattr__(self, "bodytext_include_tags", tuple(self.bodytext_include_tags))
        object.__setattr__(self, "bodytext_exclude_tags", tuple(self.bodytext_exclude_tags))
        bodytext_xpath(self.bodytext_include_tags, self.bodytext_exclude_tags)  # ValueError naming bad tags


#: Named presets (``BOILERSTRIP_EXTRACTION_PRESET``, ``extraction_preset``): field values over the defaults,
#: in the spirit of trafilatura's favor_precision/favor_recall. "balanced" is the tuned defaults above.
#: "precision" and "recall" change only what is pruned inside the container the extractor chose (the
#: choice itself stays the tuned one; "precision" takes no second opinion on a doubtful page, whose tries
#: can only widen), so they trade one for the other without emptying pages. Their
#: precision and recall on both benchmark sets are in docs/extraction.md (extraction_benchmark.py --preset).
EXTRACTION_PRESETS: dict[str, dict[str, object]] = {
    "balanced": {},
    # drops more of the borderline blocks inside the chosen container; the container is chosen as before
    "precision": {
        "min_confidence_without_retry": 0.0,  # no second opinion: its tries are the other rungs and a widening
        "max_block_link_density": 0.6,
        "max_inner_link_density": 0.25,
        "min_link_list_text_ratio": 0.0,
        "min_list_element_text_ratio": 0.0,
        "min_teaser_cards": 3,
        "max_caption_chars": 400,
        "min_introduction_words": 0,
    },
    # keeps more of what the container holds: captions, <h1>s, link-heavy blocks and lists, teaser grids
    "recall": {
        "keep_captions": True,
        "keep_h1": True,
        "max_block_link_density": 0.95,
        "max_inner_link_density": 0.5,
        "min_link_list_text_ratio": 0.5,
        "min_list_element_text_ratio": 0.1,
        "min_teaser_cards": 0,
    },
}


def extraction_preset(name: str) -> ExtractionParams:
    """The params of a named preset (``balanced``, ``precision``, ``recall``); ValueError for another name."""
    if name not in EXTRACTION_PRESETS:
        raise ValueError(f"preset must be one of {', '.join(EXTRACTION_PRESETS)}, not {name!r}")
    return ExtractionParams(**EXTRACTION_PRESETS[name])  # type: ignore[arg-type]

"""Every rule of the extractor that is data: tag sets, class/id vocabularies and regexes.

One copy, compiled once at import. Vocabularies are matched on *words* of class and id tokens (split on
``-``, ``_``, digits and camelCase), so ``comment`` matches ``post-comments`` and ``commentList`` but not
``commentary``. Nothing in here names a site or a URL.
"""

from __future__ import annotations

import re

# --- Tags ------------------------------------------------------------------------------------------

#: Never content, whatever the page: stripped (with their text) before anything is read.
NEVER_CONTENT_TAGS = frozenset(
    """script style noscript template svg math canvas iframe frame frameset object embed applet audio video
    source track picture img map area button input select option optgroup textarea datalist output meter
    progress dialog link meta base head title""".split()
)

#: Page chrome by element: removed unless they hold most of the page's text (some sites wrap the whole
#: page in a <form> or a <header>).
CHROME_TAGS = frozenset("nav aside footer header form menu search fieldset".split())
#: Chrome by declaration, removed whatever their size (a page whose only text is its footer has no content).
NAVIGATION_TAGS = frozenset("nav aside footer".split())

#: Elements that start a new block of text.
BLOCK_TAGS = frozenset(
    """address article aside blockquote body caption center dd details dialog div dl dt fieldset figcaption
    figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main menu nav ol p pre section summary table
    tbody tfoot thead tr td th ul legend""".split()
)

HEADING_TAGS = frozenset("h1 h2 h3 h4 h5 h6".split())
#: A table holding one of these is a layout table (a page's columns, or boxes of a page): its cells are
#: containers, not data cells. Paragraphs, lists, code or a heading in a cell do not make it one: a data
#: table's cell may hold several blocks (a Sphinx table's every cell is a <p>; a recipe's header cells are
#: <h4>); a layout cell holding the page's text is found by its share (LAYOUT_CELL_MIN_SHARE).
LAYOUT_TABLE_CHILD_TAGS = frozenset("table section article main nav aside header footer form".split())
#: Block kinds of a list's items: consecutive blocks of these kinds form one list (an item, term,
#: description or row a block). Read by the extractor and by the cross-page stage.
LIST_ITEM_KINDS = frozenset(("li", "dt", "dd", "tr"))
#: Block elements inside a cell: a table of one row whose cells hold one of these is a page's columns.
CELL_BLOCK_TAGS = frozenset("p div ul ol dl blockquote pre h1 h2 h3 h4 h5 h6".split())
#: A table cell holding blocks and at least this share of the text under the segmented root wraps the page:
#: the table is layout (an old site's two columns, menu and article). A data table's cell, however long,
#: is a part of its page (Sphinx and DocBook manuals: no cell above 0.2 in the markdown benchmark's pages).
LAYOUT_CELL_MIN_SHARE = 0.5
#: role values that declare a table as layout.
LAYOUT_TABLE_ROLES = frozenset(("presentation", "none"))
#: Inline elements holding code: written as code spans in the Markdown (their text stays as it is).
INLINE_CODE_TAGS = frozenset("code tt kbd samp".split())
#: A class token declaring a code block's language: "language-python", "lang-js", "highlight-python"
#: (Sphinx, on a wrapper <div>), "brush:" is SyntaxHighlighter's. Pandoc's "sourceCode python" is read apart.
CODE_LANGUAGE_CLASS_RE = re.compile(r"^(?:language|lang|highlight|brush)[-:]([A-Za-z0-9][\w+#.-]*)$")
#: Attributes declaring a code block's language.
CODE_LANGUAGE_ATTRIBUTES = ("data-lang", "data-language")
#: Declared "languages" that name none (Sphinx's "highlight-default" is whatever the project's default is).
NO_CODE_LANGUAGES = frozenset(("default", "none", "nohighlight", "plain", "plaintext"))
#: Class words of a definition term that is a code signature (Sphinx's "sig sig-object", "descname").
CODE_TERM_WORDS = frozenset(("sig", "signature", "descname", "descclassname"))
#: A link to a fragment of the page inside the element it points at (or a part of it), whose text is at
#: most this many characters and holds no letter or digit, is a permalink anchor ("¶", "#", "§", an icon):
#: it is left out of the text. Three characters cover a glyph with spaces or a two-code-unit emoji.
PERMALINK_MAX_CHARS = 3

#: The block kind an element gives its text (anything else: "p", or the kind of the enclosing block).
KIND_BY_TAG = {
    "li": "li",
    "dt": "dt",
    "dd": "dd",
    "blockquote": "quote",
    "pre": "pre",
    "caption": "caption",
    "figcaption": "figcaption",
    "h1": "h1",
    "h2": "h2",
    "h3": "h3",
    "h4": "h4",
    "h5": "h5",
    "h6": "h6",
}
#: Their classes name the page type ("single-post", "comments-open"), not a part of the page.
PAGE_TAGS = frozenset(("html", "body"))
#: Block owners that are paragraphs themselves: their density points go to their parent.
PARAGRAPH_TAGS = frozenset("p pre li dt dd blockquote h1 h2 h3 h4 h5 h6 tr td th caption figcaption".split())
#: Containers checked for link density inside a chosen container (link lists, link boxes).
LINK_LIST_TAGS = frozenset("ul ol dl div section table nav menu aside p header footer figure".split())
#: Link lists written as lists (see ``min_list_element_text_ratio``), not as boxes of links.
LIST_ELEMENT_TAGS = frozenset("ul ol dl table".split())

#: Semantic containers of the main content, by tag.
SEMANTIC_TAGS = frozenset(("article", "main"))

#: Initial density score per tag (Readability's values).
TAG_PRIOR_SCORE = {
    "div": 5.0,
    "article": 5.0,
    "section": 3.0,
    "main": 3.0,
    "pre": 3.0,
    "td": 3.0,
    "blockquote": 3.0,
    "address": -3.0,
    "ol": -3.0,
    "ul": -3.0,
    "dl": -3.0,
    "dd": -3.0,
    "dt": -3.0,
    "li": -3.0,
    "form": -3.0,
    "h1": -5.0,
    "h2": -5.0,
    "h3": -5.0,
    "h4": -5.0,
    "h5": -5.0,
    "h6": -5.0,
    "th": -5.0,
}

# --- Class / id vocabularies -----------------------------------------------------------------------

#: Splits a class or id token into lower-case words: "post-comments" -> post, comments;
#: "relatedArticles2" -> related, articles.
WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")

#: Class tokens (whole token, lower-cased) for hidden / screen-reader-only text.
HIDDEN_TOKENS = frozenset(
    """hidden hide d-none is-hidden u-hidden invisible sr-only screen-reader-text screen-reader-only
    visually-hidden visuallyhidden element-invisible offscreen hidden-xs-up""".split()
)

#: Words that mark a block as page furniture rather than article text. "cmp" (a consent-management
#: platform's box, "qc-cmp2-container") is only furniture, guarded by size, not a consent banner: it is also
#: the prefix of every component of Adobe's AEM ("cmp-text"), see FRAMEWORK_WORDS. "reviews" (plural: a block of
#: customer reviews under a product; "review" alone may name a review article's body) is furniture. WCXB
#: tuning, 2026-12-01: product pages 0.570 -> 0.585 (held-out half up too), article benchmark unchanged.
BOILERPLATE_WORDS = frozenset(
    """
    share sharing shares sharebar sharer social socials sociallinks
    related recommended recommendations recommend recirc recirculation outbrain taboola zergnet
    newsletter newsletters subscribe subscription subscriptions signup
    promo promotion promoted advert advertisement advertising ads ad adsense adslot dfp sponsor sponsored
    breadcrumb breadcrumbs crumbs
    sidebar sidebars rail widget widgets
    popup modal overlay lightbox dialog popover
    masthead navbar nav navigation menu menus topnav subnav
    footer
    byline byl author authors bio dateline timestamp
    caption captions credit credits
    tags taglist tagcloud keywords topics
    pagination pager paging
    trending popular mostread
    toolbar tools actions
    print email
    skip jump
    login signin register
    gallery carousel slider slideshow

    poll survey feedback rating ratings reactions reviews
    cmp
    disclaimer
    toc
    """.split()
)

#: Furniture words that also name a page's structure: page builders and component libraries put them on
#: every element ("elementor-widget-container", "hs_cos_wrapper_widget", AEM's "cmp-text", "cmp-container")
#: and layouts name their columns after the sidebar ("content-sidebar-wrap", "layout--right-rail"). When
#: their elements hold most of a page's prose they are its framework, not furniture (see
#: ``max_furniture_word_share_of_page``); the other furniture words (a popup, a promotion, a newsletter box)
#: never are.
FRAMEWORK_WORDS = frozenset("widget widgets cmp sidebar sidebars rail".split())

#: Words naming a comment thread. A thread can hold most of a page's text, so, unlike other furniture, it
#: is left out whatever its size.
COMMENT_WORDS = frozenset("comment comments commentlist commentform disqus discussion respond replies".split())

#: Words naming a cookie or consent banner. On a page with little prose (a listing, a product) the banner's
#: text can outweigh the content, so, like a comment thread, it is left out whatever its size.
CONSENT_WORDS = frozenset("cookie cookies consent gdpr onetrust".split())

#: A class token holding one of these words states a page layout or a toggle ("has-sidebar",
#: "comments-open", "no-ads", "menu-active"), not a widget: it never marks an element as furniture.
STATE_WORDS = frozenset("has no with without open opened closed enabled disabled active visible shown toggled".split())

#: Word pairs (adjacent words in one token) that are boilerplate although each word alone is not:
#: "read-more", "more-stories", "also-read", "you-may-like".
BOILERPLATE_PAIRS = frozenset(
    (
        ("read", "more"),
        ("more", "stories"),
        ("more", "articles"),
        ("more", "news"),
        ("also", "read"),
        ("see", "also"),
        ("may", "like"),
        ("might", "like"),
        ("most", "read"),
        ("most", "viewed"),
        ("most", "popular"),
        ("next", "article"),
        ("previous", "article"),
        ("prev", "next"),
        ("about", "author"),
        ("post", "meta"),
        ("entry", "meta"),
        ("article", "meta"),
        ("story", "meta"),
        ("article", "header"),
        ("post", "header"),
        ("entry", "header"),
        ("page", "header"),
        ("site", "header"),
        ("article", "footer"),
        ("entry", "footer"),
        ("post", "footer"),
        ("post", "date"),
        ("publish", "date"),
        ("published", "date"),
        ("article", "date"),
        ("story", "date"),
        ("entry", "date"),
        ("publication", "date"),
        ("article", "info"),
        ("post", "info"),
    )
)

#: A class token holding one of these words is an embedded post quoted by the article ("social-media-embed",
#: "twitter-tweet"), not a share widget: its SOCIAL_WORDS do not count.
EMBED_WORDS = frozenset("embed embedded tweet instagram".split())
SOCIAL_WORDS = frozenset("social socials share sharing".split())

#: Run-together class words ("relatedposts", "sharebuttons", "commentlist") are boilerplate when they are
#: one of these stems followed by one of COMPOUND_TAILS.
BOILERPLATE_STEMS = (
    "related", "share", "sharing", "social", "comment", "comments", "newsletter", "subscribe",
    "promo", "advert", "sidebar", "footer", "breadcrumb", "author", "byline", "sponsor", "recommend",
    "trending", "popular", "navigation", "menu", "widget", "caption",
)
COMPOUND_TAILS = frozenset(
    """s post posts article articles stories story links link title titles box widget list area section block
    bar buttons button icons icon content container wrap wrapper items item module heading header tools
    form info bio name date ed""".split()
)
COMPOUND_RE = re.compile(
    "^(?:" + "|".join(BOILERPLATE_STEMS) + ")(?:" + "|".join(sorted(COMPOUND_TAILS, key=len, reverse=True)) + ")$"
)

#: Words that mark a likely content container (Readability's "positive" vocabulary).
CONTENT_WORDS = frozenset(
    """article articles body content entry hentry main page post story text blog prose copy richtext
    articlebody storybody postbody""".split()
)

#: A single class/id token naming the article body itself ("article-body", "entry-content",
#: "story__text", "articleBody", "post_content"). Used by the semantic rung as the "and the like".
CONTENT_TOKEN_RE = re.compile(
    r"^(?:(?:article|story|post|entry|blog|news|main|page|single|body|rich)[-_]{0,2}"
    r"(?:body|content|contents|text|copy|main|inner|detail|details|article|entry|post|story)"
    r"(?:[-_]{0,2}(?:body|content|text|copy|inner|wrapper|wrap|container|main))?|articlebody|storybody|"
    r"postbody|entrycontent|articletext|storytext|bodytext|body-text|article|story|content-body|"
    r"text-body|content-text|main-content|maincontent|td-post-content|field-body|field-name-body|"
    r"c-entry-content|l-article-body|rte|richtext|rich-text)$",
    re.IGNORECASE,
)

#: Readability-style class weight words for the density rung.
NEGATIVE_WORDS = BOILERPLATE_WORDS | COMMENT_WORDS | CONSENT_WORDS | frozenset(
    """hidden combx contact foot meta outbrain promo scroll shoutbox skyscraper widget teaser card cards
    thumb thumbnail thumbnails list aside header banner""".split()
)
POSITIVE_WORDS = CONTENT_WORDS

# --- Attributes --------------------------------------------------------------------------------------

#: itemprop values that name the article body.
ARTICLE_BODY_ITEMPROPS = frozenset(("articlebody", "reviewbody"))
#: role values that name the main content / never content.
MAIN_ROLES = frozenset(("main", "article"))
#: "tablist" is not among them: accordions put it on the group that holds their panels' text.
CHROME_ROLES = frozenset(
    "navigation banner contentinfo complementary search menu menubar toolbar dialog alertdialog".split()
)
#: The main landmark: class/id furniture words never make it furniture ("main#skip-to-content").
MAIN_LANDMARK_ROLES = frozenset(("main",))
#: Roles of content the reader switches to (a tab's panel): hidden until chosen, but content.
SWITCHED_ROLES = frozenset(("tabpanel",))

#: Titles of a navigation box (a sidebar's "Previous topic", "On this page", a relation bar's "Navigation"),
#: as normalised words (casefolded ``\w`` tokens). Read by the cross-page stage: a heading with one of these
#: titles in the page's furniture, and the link lines under it, are the page's own navigation (they differ
#: on every page, so template removal cannot see them). Bare "Contents" is left out: a chapter's heading.
NAVIGATION_BOX_TITLES = frozenset((
    "previous topic", "next topic", "previous page", "next page", "table of contents", "on this page",
    "in this article", "in this section", "page contents", "contents of this page", "navigation",
    "site navigation", "this page", "quick search", "related topics",
))

#: Images that are icons, not pictures: their neighbouring text is not a caption.
ICON_CLASS_RE = re.compile(r"emoji|icon|avatar|logo|smiley|wp-smiley", re.IGNORECASE)
ICON_MAX_PX = 50

#: The id of a segment that server-side streaming renderers (React 18's streamed Suspense boundaries, as in
#: Next.js) send as ``<div hidden id="S:3">`` at the end of the page, for a script to move into place: it
#: is hidden only until then, and holds the page's content.
STREAMED_SEGMENT_ID_RE = re.compile(r"^S:\d+$")

#: Inline style hiding an element.
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)

# --- Text ------------------------------------------------------------------------------------------

WHITESPACE_RE = re.compile(r"\s+")
TOKEN_RE = re.compile(r"\w+")
#: Control characters libxml2 refuses in a string (everything below 0x20 except tab, LF, CR).
CONTROL_CHARS_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
CONTROL_BYTES_RE = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
#: Lone UTF-16 surrogates, which cannot be encoded to UTF-8.
SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
#: Tags flattened away when a document nests deeper than the parser allows.
FLATTEN_TAGS_RE = re.compile(
    r"</?(?:div|span|section|article|main|font|center|b|i|em|strong|u|small|big|blockquote|table|tbody|tr|td"
    r"|th|ul|ol|li|dl|dd|dt|a|abbr|cite|code|q|s|sub|sup|mark|aside|header|footer|nav|figure)\b[^>]*>",
    re.IGNORECASE,
)
#: Two <br> (written as \x1e while a block is built) with only whitespace between: a paragraph break.
PARAGRAPH_BREAK_RE = re.compile(r"\x1e\s*\x1e")
#: Text at a line start that Markdown would read as a heading, quote, list item or rule.
MARKDOWN_LINE_START_RE = re.compile(r"^(\s*)(?:([#>*+-])|(\d{1,9})([.)]))(?=\s|$)", re.MULTILINE)
COMMA_CHARS = ",\uff0c\u3001\u060c"

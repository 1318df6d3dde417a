"""Model replies as HTML: Markdown rendered on the server by markdown-it, then sanitised by nh3.

Raw HTML in a reply is never passed through: markdown-it escapes it (``html`` off), so a
``<script>`` a model wrote shows as text. The sanitiser then keeps only the tags Markdown
produces and links to ``http``, ``https`` and ``mailto`` (no images: a remote image would
make the page call out to a host the model chose).
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = frozenset(
    {
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code", "pre",
        "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)


@lru_cache(maxsize=4096)
def render_markdown(text: str) -> str:
    """``text`` (Markdown from a model) as sanitised HTML; cached, since replays render the same texts again."""
    html = _MARKDOWN.render(text)
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
    )

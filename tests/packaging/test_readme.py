"""The README: short (the details live in the documentation site, docs/), and every relative link it
has names a file of the repository, so that its links work on GitHub as in a checkout."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 250

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
PYTHON_EXAMPLE = """\
```python
from dialectic import Debate
result = Debate.from_config("debate-config.json").run_sync("Design a rate limiter")
print(result.solution)
```"""


def readme_text() -> str:
    return README.read_text(encoding="utf-8")


def relative_links(text: str) -> list[str]:
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = LINK.findall(prose) + REFERENCE.findall(prose)
    return [t for t in targets if not re.match(r"^([a-z][a-z0-9+.-]*:|//|#)", t, re.IGNORECASE)]


def test_the_readme_is_at_most_250_lines() -> None:
    lines = readme_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move the details to docs/ (at most {MAX_LINES})"


def test_every_relative_link_in_the_readme_names_an_existing_file() -> None:
    links = relative_links(readme_text())
    assert links, "the README links to no page of docs/"
    missing = [link for link in links if not (ROOT / unquote(link.split("#", 1)[0])).exists()]
    assert missing == [], f"README.md links to files that do not exist: {missing}"


def test_the_readme_links_every_page_of_the_site() -> None:
    linked = {Path(link.split("#", 1)[0]).as_posix() for link in relative_links(readme_text())}
    pages = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), f"pages of docs/ the README does not link to: {sorted(pages - linked)}"


def test_the_readme_shows_the_python_example_as_written() -> None:
    assert PYTHON_EXAMPLE in readme_text()


def test_the_link_finder_skips_urls_anchors_and_code() -> None:
    text = (
        "[a](docs/a.md) [b](docs/b.md#part) [c](https://example.com/x.md) [d](#local) ![e](img/e.png)\n"
        "`[f](not/a/link.md)`\n```sh\n[g](nor/this.md)\n```\n[h]: docs/h.md\n"
    )
    assert relative_links(text) == ["docs/a.md", "docs/b.md#part", "img/e.png", "docs/h.md"]

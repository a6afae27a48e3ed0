"""The built-in demo hidden-web site: a book-shop search form over generated records.

Users have no hidden-web site on a fresh machine, so hwnoise ships one. ``DemoSite`` builds a
small SQLite catalogue from a seeded RNG and a vocabulary of invented words (no copied data),
serves a search form and its result pages on 127.0.0.1, and knows which text of each result
page is its records (``gold_text``). Result pages carry what real sites carry around records:
a cookie notice, header with logo and account links, navigation, breadcrumbs, a sidebar of
facet links with counts, text ads that read like records (one even sits among the results),
"related searches" built from the query, pagination, "recently viewed" items and a footer.
Three record layouts (list, table, grid; chosen by the category or the ``view`` field) keep
the task from being trivial. Every page is a pure function of the seed and the URL.

Gold text (``gold_text``) is the records' text as a browser shows it: one field a line in page
order, a blank line between records, "" for a page without records. The vocabulary comes from
``generate_vocabulary(seed)``; the reference copy ``data/demo_vocabulary.json`` (seed 0) is
read as package data ``hwnoise.data`` when that is importable and matches, and generated
otherwise (same result, a few milliseconds). ``python -m hwnoise.demo_site`` serves the site
until Ctrl-C; ``--write-vocabulary FILE`` rewrites the reference copy.

::

    with DemoSite(seed=0) as site:          # starts the server
        html = requests.get(site.form_url).text
        for values in site.value_sets(100):
            ...  # submit the form with values; site.gold_text(url) is the records' text
"""
from __future__ import annotations

import html as _html
import itertools
import json
import random
import sqlite3
import sys
import threading
import zlib
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from hwnoise.errors import HwnoiseError
from hwnoise.text import tokenize

__all__ = ["DemoSite", "DemoSiteError", "generate_vocabulary", "load_vocabulary",
           "write_vocabulary", "generate_records", "PER_PAGE", "LAYOUTS"]

#: Version of the generator: bump it when generate_vocabulary or the records change.
VOCABULARY_VERSION = 1
VOCABULARY_FILE = "demo_vocabulary.json"
PER_PAGE = 20
LAYOUTS = ("list", "table", "grid")
SORTS = {"relevance": "Relevance", "year": "Newest first", "price": "Lowest price"}
VIEWS = {"": "Automatic", "list": "List", "table": "Table", "grid": "Grid"}
_CONSONANTS = "b c d f g h k l m n p r s t v w z br dr gr pl st tr th sh".split()
_VOWELS = "a e i o u a e i o ea ou".split()
_CODAS = ["", "", "", "", "", "n", "r", "l", "s", "m", "nd", "st"]
_FUNCTION_WORDS = "the of and a in with for on from to at by".split()
#: Syllable strings an invented word must not contain (real words that would read badly).
_AVOID = ("bum", "ass", "sex", "cum", "tit", "fag", "nig", "dic", "fuc", "shit", "pis", "rap", "cunt")


class DemoSiteError(HwnoiseError):
    """A URL or parameter the demo site cannot answer (names the URL)."""


# ---------------------------------------------------------------------------------------------
# vocabulary and records


def _syllables(rng: random.Random) -> list[str]:
    syl = sorted({c + v + k for c in _CONSONANTS for v in _VOWELS for k in _CODAS
                  if not any(a in c + v + k for a in _AVOID)})
    rng.shuffle(syl)
    return sorted(syl[:140], key=len)


def _make_words(rng: random.Random, syl: list[str], n: int, parts: tuple[int, int],
                taken: set[str]) -> list[str]:
    """``n`` new words of ``parts`` syllables (short syllables more often), none seen before."""
    out: list[str] = []
    short = syl[: len(syl) // 2]
    while len(out) < n:
        k = rng.randint(*parts)
        w = "".join(rng.choice(short if j or rng.random() < 0.6 else syl) for j in range(k))
        if 3 <= len(w) <= 10 and w not in taken and not any(a in w for a in _AVOID):
            taken.add(w)
            out.append(w)
    return out


def generate_vocabulary(seed: int = 0) -> dict[str, Any]:
    """Invent the site's words from syllables with a seeded RNG (reproducible, copied from nowhere).

    ``words`` are ranked: records draw them with Zipf weights, so early words are common
    keywords and late ones rare; ``unused`` words appear in no record (searches with no results).
    """
    rng = random.Random(f"hwnoise-demo-vocabulary-{seed}")
    syl = _syllables(rng)
    taken: set[str] = set(_FUNCTION_WORDS)
    cap = str.capitalize
    return {
        "seed": seed,
        "version": VOCABULARY_VERSION,
        "syllables": syl,
        "words": _make_words(rng, syl, 1200, (1, 3), taken),
        "unused": _make_words(rng, syl, 60, (2, 3), taken),
        "given_names": [cap(w) for w in _make_words(rng, syl, 120, (2, 2), taken)],
        "surnames": [cap(w) for w in _make_words(rng, syl, 200, (2, 3), taken)],
        "categories": [cap(w) for w in _make_words(rng, syl, 9, (2, 2), taken)],
        "publishers": [cap(w) + " " + rng.choice(["Press", "House", "Books", "& Sons"])
                       for w in _make_words(rng, syl, 24, (2, 3), taken)],
        "shops": [cap(w) for w in _make_words(rng, syl, 16, (2, 3), taken)],
        "site_name": cap(_make_words(rng, syl, 1, (3, 3), taken)[0]) + " Books",
    }


def load_vocabulary(seed: int = 0) -> dict[str, Any]:
    """The shipped vocabulary (package data ``hwnoise.data``) when it matches, else generated."""
    try:
        from importlib.resources import files
        text = (files("hwnoise.data") / VOCABULARY_FILE).read_text(encoding="utf-8")
        vocab = json.loads(text)
        if vocab.get("seed") == seed and vocab.get("version") == VOCABULARY_VERSION:
            return vocab
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, OSError, ValueError):
        pass
    return generate_vocabulary(seed)


def write_vocabulary(path: str | Path, seed: int = 0) -> Path:
    """Write the generated vocabulary as JSON (the reference copy in ``data/``)."""
    path = Path(path)
    vocab = generate_vocabulary(seed)
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in vocab.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return path


def _zipf_weights(n: int, s: float = 0.9) -> list[float]:
    """Cumulative Zipf weights (rank i drawn with probability ~ 1/i^s), for ``cum_weights``."""
    return list(itertools.accumulate(1.0 / (i + 1) ** s for i in range(n)))


def _sentence(rng: random.Random, words: list[str], weights: list[float]) -> str:
    n = rng.randint(6, 13)
    picked = rng.choices(words, cum_weights=weights, k=n)
    out = []
    for i, w in enumerate(picked):
        out.append(w)
        if 0 < i < n - 1 and rng.random() < 0.3:
            out.append(rng.choice(_FUNCTION_WORDS))
    return out[0].capitalize() + " " + " ".join(out[1:]) + "."


def _title(rng: random.Random, words: list[str], weights: list[float]) -> str:
    picked = list(dict.fromkeys(rng.choices(words, cum_weights=weights, k=rng.randint(1, 4))))
    if rng.random() < 0.35:
        picked.insert(0, "the")
    if len(picked) > 2 and rng.random() < 0.3:
        picked.insert(len(picked) - 1, rng.choice(["of", "and", "in"]))
    small = {"of", "and", "in"}
    return " ".join(w if (i and w in small) else w.capitalize() for i, w in enumerate(picked))


def generate_records(vocab: dict[str, Any], n: int, seed: int) -> list[dict[str, Any]]:
    """The catalogue: ``n`` books with title, author, category, year, price, publisher, description."""
    rng = random.Random(f"hwnoise-demo-records-{seed}")
    words = vocab["words"]
    weights = _zipf_weights(len(words))
    cats = vocab["categories"]
    cat_weights = _zipf_weights(len(cats), 0.6)
    authors = [f"{rng.choice(vocab['given_names'])} {rng.choice(vocab['surnames'])}"
               for _ in range(max(20, n // 6))]
    records = []
    for i in range(1, n + 1):
        desc = " ".join(_sentence(rng, words, weights) for _ in range(rng.randint(1, 3)))
        records.append({
            "id": i,
            "title": _title(rng, words, weights),
            "author": rng.choice(authors),
            "category": rng.choices(cats, cum_weights=cat_weights)[0],
            "year": rng.randint(1952, 2024),
            "price": rng.randint(299, 6999) / 100,
            "publisher": rng.choice(vocab["publishers"]),
            "description": desc,
        })
    return records


def _slug(name: str) -> str:
    return name.lower()


def _stable_rng(*parts: Any) -> random.Random:
    """An RNG seeded by the page's parameters: the same URL renders the same bytes."""
    return random.Random(zlib.crc32(json.dumps(parts, sort_keys=True).encode("utf-8")))


# ---------------------------------------------------------------------------------------------
# the site


class DemoSite:
    """The demo search site: generated SQLite catalogue, HTML pages, gold text of result pages."""

    def __init__(self, seed: int = 0, records: int = 3000, db_path: str | Path | None = None):
        self.seed = seed
        self.vocab = load_vocabulary(seed)
        self.records = generate_records(self.vocab, records, seed)
        self.by_id = {r["id"]: r for r in self.records}
        self.categories = {_slug(c): c for c in self.vocab["categories"]}
        self.site_name = self.vocab["site_name"]
        self._lock = threading.Lock()
        self._db = self._build_db(db_path)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url: str | None = None

    # -- data -----------------------------------------------------------------------------
    def _build_db(self, db_path: str | Path | None) -> sqlite3.Connection:
        db = sqlite3.connect(str(db_path) if db_path else ":memory:", check_same_thread=False)
        db.executescript(
            "DROP TABLE IF EXISTS book;"
            "CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT, author TEXT, category TEXT,"
            " cat TEXT, year INTEGER, price REAL, publisher TEXT, description TEXT, words TEXT);"
        )
        db.executemany(
            "INSERT INTO book VALUES (?,?,?,?,?,?,?,?,?,?)",
            [(r["id"], r["title"], r["author"], r["category"], _slug(r["category"]), r["year"],
              r["price"], r["publisher"], r["description"],
              " " + " ".join(tokenize(f"{r['title']} {r['author']} {r['description']}")) + " ")
             for r in self.records])
        db.commit()
        return db

    def search(self, q: str = "", cat: str = "", year: int | None = None,
               sort: str = "relevance") -> list[dict[str, Any]]:
        """Every record matching all keywords (whole words of title, author, description)."""
        terms = tokenize(q)
        sql, args = "SELECT id FROM book WHERE 1=1", []
        for t in terms:
            sql += " AND words LIKE ?"
            args.append(f"% {t} %")
        if cat:
            sql += " AND cat = ?"
            args.append(cat)
        if year is not None:
            sql += " AND year >= ?"
            args.append(year)
        with self._lock:
            ids = [row[0] for row in self._db.execute(sql + " ORDER BY id", args)]
        hits = [self.by_id[i] for i in ids]
        if sort == "year":
            hits.sort(key=lambda r: (-r["year"], r["id"]))
        elif sort == "price":
            hits.sort(key=lambda r: (r["price"], r["id"]))
        elif terms:
            def score(r: dict) -> tuple:
                title = tokenize(r["title"])
                return (-sum(3 * title.count(t) for t in terms), r["id"])
            hits.sort(key=score)
        return hits

    def facet_counts(self, hits: list[dict]) -> list[tuple[str, int]]:
        counts = {c: 0 for c in self.vocab["categories"]}
        for r in hits:
            counts[r["category"]] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    # -- parameters -----------------------------------------------------------------------
    @staticmethod
    def _params(url_or_params: str | Mapping[str, Any]) -> tuple[str, dict[str, str]]:
        if isinstance(url_or_params, Mapping):
            return "/search", {str(k): "" if v is None else str(v) for k, v in url_or_params.items()}
        parts = urlsplit(url_or_params)
        query = parse_qs(parts.query, keep_blank_values=True)
        return parts.path or "/", {k: v[0] for k, v in query.items()}

    def _query(self, p: dict[str, str]) -> dict[str, Any]:
        """The normalised search behind a parameter dict (what both page and gold read)."""
        q = " ".join(p.get("q", "").split())
        cat = p.get("cat", "").strip().lower()
        if cat and cat not in self.categories:
            cat = ""
        error = None
        year = None
        ytxt = p.get("year", "").strip()
        if ytxt:
            if ytxt.isdigit() and len(ytxt) == 4:
                year = int(ytxt)
            else:
                error = f"“{ytxt}” is not a year: please enter four digits, for example 1990."
        sort = p.get("sort", "relevance")
        sort = sort if sort in SORTS else "relevance"
        view = p.get("view", "")
        if view not in LAYOUTS:
            view = LAYOUTS[(list(self.categories).index(cat) % 3)] if cat else "list"
        try:
            page = max(1, int(p.get("page", "1")))
        except ValueError:
            page = 1
        hits = [] if error else self.search(q, cat, year, sort)
        pages = max(1, -(-len(hits) // PER_PAGE))
        page = min(page, pages)
        shown = hits[(page - 1) * PER_PAGE: page * PER_PAGE]
        return {"q": q, "cat": cat, "year": year, "ytxt": ytxt, "sort": sort, "layout": view,
                "view": p.get("view", "") if p.get("view", "") in LAYOUTS else "",
                "page": page, "pages": pages, "hits": hits, "shown": shown, "error": error}

    # -- records: the fields a layout shows, in page order (the gold) ---------------------
    @staticmethod
    def _snippet(r: dict) -> str:
        return r["description"].split(". ")[0].rstrip(".") + "."

    def record_fields(self, r: dict, layout: str, with_category: bool) -> list[str]:
        """The texts one record shows in ``layout``, in page order."""
        price = f"${r['price']:.2f}"
        if layout == "table":
            out = [r["title"], self._snippet(r), r["author"]]
            if with_category:
                out.append(r["category"])
            return out + [str(r["year"]), price]
        if layout == "grid":
            return [r["title"], r["author"], self._snippet(r), price]
        return [r["title"], f"by {r['author']}", f"{r['category']} · {r['year']} · {r['publisher']}",
                r["description"], price]

    def gold_text(self, url_or_params: str | Mapping[str, Any]) -> str:
        """The text of the records of a result page, as shown: one field a line, a blank line
        between records, records in page order ("" for a page without records)."""
        path, p = self._params(url_or_params)
        if path.rstrip("/") != "/search":
            raise DemoSiteError(f"{url_or_params}: not a result page of the demo site (/search)")
        s = self._query(p)
        blocks = ["\n".join(self.record_fields(r, s["layout"], not s["cat"])) for r in s["shown"]]
        return "\n\n".join(blocks)

    def gold_records(self, url_or_params: str | Mapping[str, Any]) -> list[list[str]]:
        """The records of a result page as gold records: one list per record holding the XPath
        (browser form, ``/body[1]/...``) of the element its template wraps it in (class
        ``record``), in page order; sponsored entries are not records."""
        from lxml import html as lxml_html

        from hwnoise.features.record_gold import element_xpath

        path, p = self._params(url_or_params)
        if path.rstrip("/") != "/search":
            raise DemoSiteError(f"{url_or_params}: not a result page of the demo site (/search)")
        root = lxml_html.document_fromstring(self._result_page(p))
        return [[element_xpath(el)] for el in root.iter()
                if isinstance(el.tag, str) and "record" in (el.get("class") or "").split()]

    def value_sets(self, n: int = 100, seed: int = 0) -> list[dict[str, str]]:
        """``n`` different value sets for the form (field name → value) with a mix of result
        counts: many (common keywords, whole categories), few (rare keywords), none."""
        rng = random.Random(f"hwnoise-demo-values-{self.seed}-{seed}")
        words = self.vocab["words"]
        cats = list(self.categories)
        out: list[dict[str, str]] = []
        seen: set[tuple] = set()
        attempts = 0
        while len(out) < n and attempts < 100 * n:
            attempts += 1
            kind = rng.random()
            v = {"q": "", "cat": "", "year": "", "sort": "relevance", "view": ""}
            if kind < 0.12:      # nothing found: a word no record has, or a rare word + category
                v["q"] = rng.choice(self.vocab["unused"])
                if rng.random() < 0.5:
                    v["cat"] = rng.choice(cats)
            elif kind < 0.45:    # common keyword (many results)
                v["q"] = rng.choice(words[:40])
            elif kind < 0.70:    # rarer keyword (a few results)
                v["q"] = rng.choice(words[150:900])
            elif kind < 0.85:    # browse a category
                v["cat"] = rng.choice(cats)
            else:                # two keywords
                v["q"] = f"{rng.choice(words[:30])} {rng.choice(words[:200])}"
            if v["q"] and rng.random() < 0.35:
                v["cat"] = rng.choice(cats)
            if rng.random() < 0.25:
                v["year"] = str(rng.randint(1960, 2015))
            if rng.random() < 0.2:
                v["sort"] = rng.choice(["year", "price"])
            if rng.random() < 0.2:
                v["view"] = rng.choice(LAYOUTS)
            key = tuple(sorted(v.items()))
            if key not in seen:
                seen.add(key)
                out.append(v)
        return out

    # -- pages ----------------------------------------------------------------------------
    def render(self, url: str) -> tuple[int, str, bytes]:
        """(status, content type, body) of a URL path with query: what the server sends."""
        path, p = self._params(url)
        if path == "/":
            return 200, "text/html; charset=utf-8", self._form_page().encode("utf-8")
        if path.rstrip("/") == "/search":
            return 200, "text/html; charset=utf-8", self._result_page(p).encode("utf-8")
        if path == "/robots.txt":
            return 200, "text/plain; charset=utf-8", b"User-agent: *\nAllow: /\n"
        if path.startswith("/book/") and path[6:].isdigit() and int(path[6:]) in self.by_id:
            return 200, "text/html; charset=utf-8", self._book_page(self.by_id[int(path[6:])]).encode()
        return 404, "text/html; charset=utf-8", self._not_found(path).encode("utf-8")

    def _shell(self, title: str, body: str, rng: random.Random, q: str = "") -> str:
        e = _html.escape
        nav = "".join(f'<li><a href="{h}">{t}</a></li>' for h, t in [
            ("/", "Home"), ("/search?sort=year", "New arrivals"), ("/search?sort=price", "Bargains"),
            ("/gifts", "Gift cards"), ("/events", "Events"), ("/help", "Help")])
        shops = self.vocab["shops"]
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{e(title)} – {e(self.site_name)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font-family:sans-serif;margin:0}} .ad{{background:#fffbe6}} .grid{{display:flex;flex-wrap:wrap}}</style>
<script>window.dataLayer=window.dataLayer||[];dataLayer.push({{"page":"search"}});</script>
</head>
<body>
<div class="cookie-notice" id="cookies">
<p>We use cookies to remember your searches and your basket, and to show offers that suit you. By using {e(self.site_name)} you agree to our <a href="/cookies">cookie policy</a>.</p>
<button type="button">Accept</button>
</div>
<header class="site-header">
<div class="wrap">
<a class="logo" href="/"><img src="/static/logo.png" alt="" width="120" height="40"><span>{e(self.site_name)}</span></a>
<span class="tagline">Rare and new books since {1950 + self.seed % 40}</span>
<form class="quick-search" action="/search" method="get"><input type="text" name="q" value="{e(q)}" aria-label="Search"><button type="submit">Go</button></form>
<ul class="account"><li><a href="/login">Sign in</a></li><li><a href="/register">Create an account</a></li><li><a href="/basket">Basket (0)</a></li></ul>
</div>
</header>
<nav class="main-nav"><ul>{nav}</ul></nav>
<div class="mobile-menu" hidden><ul>{nav}</ul></div>
{body}
<footer class="site-footer">
<div class="cols">
<div><h5>About us</h5><ul><li><a href="/about">Our story</a></li><li><a href="/jobs">Jobs</a></li><li><a href="/press">Press</a></li></ul></div>
<div><h5>Customer service</h5><ul><li><a href="/help/delivery">Delivery</a></li><li><a href="/help/returns">Returns</a></li><li><a href="/contact">Contact us</a></li></ul></div>
<div><h5>Partners</h5><ul><li><a href="/partners">{e(rng.choice(shops))} Outlet</a></li><li><a href="/affiliates">Affiliates</a></li></ul></div>
</div>
<p class="newsletter">Sign up for our newsletter and get new titles, author events and exclusive offers every week, straight to your inbox.</p>
<p class="legal">© {2001 + self.seed % 20}–2026 {e(self.site_name)} Ltd. All prices include VAT. Delivery charges apply to orders under $25. Registered office: 12 {e(rng.choice(self.vocab['surnames']))} Street.</p>
</footer>
<script>document.getElementById("cookies").querySelector("button").onclick=function(){{this.parentNode.remove()}};</script>
</body>
</html>
"""

    def _form_page(self) -> str:
        e = _html.escape
        cats = "".join(f'<option value="{_slug(c)}">{e(c)}</option>' for c in self.vocab["categories"])
        sorts = "".join(f'<option value="{k}">{v}</option>' for k, v in SORTS.items())
        views = "".join(f'<option value="{k}">{v}</option>' for k, v in VIEWS.items())
        body = f"""<main class="search-page">
<h1>Search the catalogue</h1>
<p class="intro">Find books by title, author or subject among {len(self.records)} titles.</p>
<form id="search" action="/search" method="get">
<p><label for="q">Keywords</label> <input type="text" id="q" name="q" size="40"></p>
<p><label for="cat">Category</label> <select id="cat" name="cat"><option value="" selected>All categories</option>{cats}</select></p>
<p><label for="year">Published in or after</label> <input type="text" id="year" name="year" size="4" maxlength="4" placeholder="1990"></p>
<p><label for="sort">Sort by</label> <select id="sort" name="sort">{sorts}</select></p>
<p><label for="view">Display</label> <select id="view" name="view">{views}</select></p>
<input type="hidden" name="src" value="advanced">
<p><button type="submit">Search</button></p>
</form>
</main>
"""
        return self._shell("Advanced search", body, _stable_rng(self.seed, "form"))

    def _ad(self, rng: random.Random, q: str, cls: str) -> str:
        """A text ad that reads like a record: title link, description, shop address."""
        e = _html.escape
        words = self.vocab["words"]
        shop = rng.choice(self.vocab["shops"])
        kw = q.split()[0] if q else rng.choice(words[:50])
        title = rng.choice([f"{kw.capitalize()} books at {shop}", f"Cheap {kw} titles – {shop}",
                            f"{shop}: {kw} and more"])
        w = rng.sample(words[:300], 5)
        desc = (f"{w[0].capitalize()} {w[1]} and {w[2]} {w[3]} from $4.99. Free delivery on "
                f"{kw} orders over $25, {w[4]} included.")
        return (f'<div class="{cls}"><span class="ad-label">Sponsored</span>'
                f'<a href="https://www.{shop.lower()}.example/?ref=qb" rel="nofollow">{e(title)}</a>'
                f'<p>{e(desc)}</p><span class="ad-url">www.{shop.lower()}.example</span></div>')

    def _related(self, rng: random.Random, s: dict) -> str:
        e = _html.escape
        base = s["q"].split()[0] if s["q"] else rng.choice(self.vocab["words"][:30])
        extra = rng.sample(self.vocab["words"][:200], 6)
        items = "".join(f'<li><a href="/search?{urlencode({"q": f"{base} {x}"})}">{e(base)} {e(x)}</a></li>'
                        for x in extra)  # related searches repeat the query term
        return f'<div class="related"><h3>Related searches</h3><ul>{items}</ul></div>'

    def _recent(self, rng: random.Random, exclude: set[int], layout: str) -> str:
        e = _html.escape
        picks = [r for r in rng.sample(self.records, 8) if r["id"] not in exclude][:rng.randint(3, 5)]
        if layout == "grid":
            items = "".join(f'<div class="mini"><a href="/book/{r["id"]}">{e(r["title"])}</a>'
                            f'<div>{e(r["author"])}</div><div class="price">${r["price"]:.2f}</div></div>'
                            for r in picks)
        else:
            items = "".join(f'<li><a href="/book/{r["id"]}">{e(r["title"])}</a> '
                            f'<span class="price">${r["price"]:.2f}</span></li>' for r in picks)
            items = f"<ul>{items}</ul>"
        return f'<div class="box recent"><h4>Recently viewed</h4>{items}</div>'

    def _sidebar(self, rng: random.Random, s: dict, hits: list[dict]) -> str:
        e = _html.escape
        base = {k: v for k, v in (("q", s["q"]), ("year", s["ytxt"])) if v}
        cats = "".join(
            f'<li><a href="/search?{urlencode({**base, "cat": _slug(c)})}">{e(c)}</a> '
            f'<span class="n">({n})</span></li>'
            for c, n in self.facet_counts(hits if hits else self.records))
        decades: dict[int, int] = {}
        for r in hits:
            decades[r["year"] // 10 * 10] = decades.get(r["year"] // 10 * 10, 0) + 1
        dec = "".join(f'<li><a href="/search?{urlencode({**base, "year": d})}">{d}s</a> ({n})</li>'
                      for d, n in sorted(decades.items(), reverse=True))
        dec_box = f'<div class="box"><h4>Published</h4><ul>{dec}</ul></div>' if dec else ""
        return (f'<aside class="filters"><div class="box"><h4>Categories</h4><ul>{cats}</ul></div>'
                f'{dec_box}{self._ad(rng, s["q"], "ad side-ad")}</aside>')

    def _pager(self, s: dict, p: dict[str, str]) -> str:
        if s["pages"] <= 1:
            return ""
        keep = {k: v for k, v in p.items() if k != "page"}
        def link(n: int, text: str) -> str:
            return f'<a href="/search?{urlencode({**keep, "page": n})}">{text}</a>'
        parts = []
        if s["page"] > 1:
            parts.append(link(s["page"] - 1, "« Previous"))
        for n in range(max(1, s["page"] - 3), min(s["pages"], s["page"] + 4) + 1):
            parts.append(f"<strong>{n}</strong>" if n == s["page"] else link(n, str(n)))
        if s["page"] < s["pages"]:
            parts.append(link(s["page"] + 1, "Next »"))
        return f'<div class="pager">{" ".join(parts)}</div>'

    # One template per layout: the record's fields (escaped) into its markup.
    @staticmethod
    def _list_record(f: list[str], href: str, r: dict) -> str:
        return (f'<li class="record"><div class="item"><div class="info">'
                f'<h3><a href="{href}">{f[0]}</a></h3><p class="by">{f[1]}</p><p class="meta">{f[2]}</p>'
                f'<p class="description">{f[3]}</p></div>'
                f'<div class="buy"><p class="price">{f[4]}</p></div></div></li>')

    @staticmethod
    def _table_record(f: list[str], href: str, r: dict) -> str:
        cells = "".join(f"<td>{x}</td>" for x in f[2:-1])
        return (f'<tr class="record"><td class="title"><a href="{href}">{f[0]}</a><br>'
                f'<small>{f[1]}</small></td>{cells}<td class="price">{f[-1]}</td></tr>')

    @staticmethod
    def _grid_record(f: list[str], href: str, r: dict) -> str:
        return (f'<div class="cell record"><div class="card">'
                f'<a class="cover" href="{href}"><img src="/covers/{r["id"]}.jpg" alt=""></a>'
                f'<div class="card-body"><h4><a href="{href}">{f[0]}</a></h4>'
                f'<div class="author">{f[1]}</div><div class="snippet">{f[2]}</div></div>'
                f'<div class="price">{f[3]}</div></div></div>')

    def _records_html(self, s: dict, rng: random.Random) -> str:
        """The records of a result page in its layout, with now and then a sponsored entry
        among them that looks like one more record."""
        e, nl = _html.escape, "\n"
        layout, with_cat = s["layout"], not s["cat"]
        template = {"list": self._list_record, "table": self._table_record,
                    "grid": self._grid_record}[layout]
        shown = s["shown"]
        ad_at = rng.randint(2, 5) if len(shown) > 6 and rng.random() < 0.5 else -1
        rows = []
        for i, r in enumerate(shown):
            fields = [e(x) for x in self.record_fields(r, layout, with_cat)]
            rows.append(template(fields, f"/book/{r['id']}", r))
            if i == ad_at:
                ad = self._ad(rng, s["q"], "ad inline-ad")
                rows.append({"table": f'<tr class="sponsored"><td colspan="6">{ad}</td></tr>',
                             "grid": f'<div class="cell sponsored">{ad}</div>',
                             "list": f'<li class="sponsored">{ad}</li>'}[layout])
        if layout == "table":
            head = "".join(f"<th>{h}</th>" for h in
                           ["Title", "Author"] + (["Category"] if with_cat else []) + ["Year", "Price"])
            return (f'<div class="table-wrap"><table class="results"><thead><tr>{head}</tr></thead>'
                    f'<tbody>{nl.join(rows)}</tbody></table></div>')
        if layout == "grid":
            return f'<section class="hits"><div class="grid results">{nl.join(rows)}</div></section>'
        return (f'<section class="hits"><ol class="results" start="{(s["page"] - 1) * PER_PAGE + 1}">'
                f'{nl.join(rows)}</ol></section>')

    def _result_page(self, p: dict[str, str]) -> str:
        e = _html.escape
        s = self._query(p)
        rng = _stable_rng(self.seed, sorted(p.items()))
        q, hits, shown = s["q"], s["hits"], s["shown"]
        where = f" in {e(self.categories[s['cat']])}" if s["cat"] else ""
        what = f"“{e(q)}”" if q else "all titles"
        crumbs = (f'<div class="breadcrumbs"><a href="/">Home</a> › <a href="/">Search</a> › '
                  f'<span>{e(q) if q else e(self.categories.get(s["cat"], "All titles"))}</span></div>')
        if s["error"]:
            main = (f'<h1>Search results</h1><p class="error">{e(s["error"])}</p>'
                    f'<p><a href="/">Back to the search form</a></p>')
        elif not hits:
            popular = "".join(f'<li><a href="/search?{urlencode({"q": w})}">{e(w)}</a></li>'
                              for w in rng.sample(self.vocab["words"][:60], 5))
            main = (f'<h1>Search results</h1><div class="no-results"><p>No results for {what}{where}.</p>'
                    f'<ul class="tips"><li>Check the spelling of your keywords.</li>'
                    f'<li>Try fewer or more general words.</li><li>Search all categories.</li></ul></div>'
                    f'<div class="popular"><h3>Popular searches</h3><ul>{popular}</ul></div>'
                    f'{self._recent(rng, set(), "list")}')
        else:
            first = (s["page"] - 1) * PER_PAGE + 1
            sorts = " | ".join(f"<strong>{v}</strong>" if k == s["sort"] else
                               f'<a href="/search?{urlencode({**p, "sort": k, "page": 1})}">{v}</a>'
                               for k, v in SORTS.items())
            top_ad = self._ad(rng, q, "ad top-ad") if rng.random() < 0.6 else ""
            last = first + len(shown) - 1
            main = (f'<h1>Search results</h1>'
                    f'<p class="summary">Showing {first}–{last} of {len(hits)} results for {what}{where}</p>'
                    f'<div class="sort">Sort by: {sorts}</div>{top_ad}'
                    f'{self._records_html(s, rng)}{self._pager(s, p)}{self._related(rng, s)}')
        exclude = {r["id"] for r in shown}
        right = (f'<aside class="extras">{self._recent(rng, exclude, s["layout"])}'
                 f'{self._ad(rng, q, "ad side-ad")}</aside>') if hits else ""
        left = self._sidebar(rng, s, hits)
        main = f'<main class="results-page">{main}</main>'
        if s["layout"] == "table":     # each template arranges the columns its own way
            body = f'{crumbs}<div class="content">{main}{left}{right}</div>'
        elif s["layout"] == "grid":
            body = (f'{crumbs}<div class="content"><div class="col-main">{main}</div>'
                    f'<div class="col-side">{left}{right}</div></div>')
        else:
            body = f'{crumbs}<div class="content">{left}{main}{right}</div>'
        title = f"{q} – Search" if q else "Search"
        return self._shell(title, body, rng, q)

    def _book_page(self, r: dict) -> str:
        e = _html.escape
        body = (f'<main class="book"><h1>{e(r["title"])}</h1><p>by {e(r["author"])}</p>'
                f'<p>{e(r["category"])} · {r["year"]} · {e(r["publisher"])}</p><p>{e(r["description"])}</p>'
                f'<p class="price">${r["price"]:.2f}</p></main>')
        return self._shell(r["title"], body, _stable_rng(self.seed, "book", r["id"]))

    def _not_found(self, path: str) -> str:
        body = (f'<main class="not-found"><h1>Page not found</h1><p>Sorry, there is no page at '
                f'{_html.escape(path)}.</p><p><a href="/">Search the catalogue</a></p></main>')
        return self._shell("Page not found", body, _stable_rng(self.seed, "404"))

    # -- server ---------------------------------------------------------------------------
    @property
    def form_url(self) -> str:
        """The URL of the search form page (the site must be started)."""
        if not self.base_url:
            raise DemoSiteError("the demo site is not started: call start() first")
        return self.base_url + "/"

    def start(self, port: int = 0) -> str:
        """Serve the site on 127.0.0.1 (a free port unless ``port`` is given) from a daemon
        thread; return the base URL, e.g. ``http://127.0.0.1:41234``."""
        if self._server:
            return self.base_url  # type: ignore[return-value]
        site = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "DemoSite/1"
            sys_version = ""

            def _send(self, head_only: bool) -> None:
                try:
                    status, ctype, body = site.render(self.path)
                except Exception as exc:  # noqa: BLE001 - a bug must still answer, not hang up
                    status, ctype = 500, "text/plain; charset=utf-8"
                    body = f"demo site error on {self.path}: {exc!r}\n".encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head_only:
                    self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                self._send(False)

            def do_HEAD(self) -> None:  # noqa: N802
                self._send(True)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        except OSError as exc:  # the port taken, or one below 1024 without the right
            raise DemoSiteError(f"127.0.0.1:{port}: cannot serve the demo site there ({exc.strerror or exc}); "
                                "give another port, or 0 for a free one") from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="hwnoise-demo-site",
                                        daemon=True)
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self.base_url

    def stop(self) -> None:
        """Stop the server (the catalogue stays usable for gold_text)."""
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            self.base_url = None

    def __enter__(self) -> "DemoSite":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """``python -m hwnoise.demo_site``: serve the site until Ctrl-C, or write the vocabulary."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m hwnoise.demo_site", description=main.__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--records", type=int, default=3000)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--write-vocabulary", metavar="FILE",
                    help="write the generated vocabulary (data/demo_vocabulary.json) and exit")
    args = ap.parse_args(argv)
    if args.write_vocabulary:
        print(write_vocabulary(args.write_vocabulary, args.seed))
        return 0
    serve(args.seed, args.records, args.port)
    return 0


def serve(seed: int = 0, records: int = 3000, port: int = 0) -> None:
    """Serve the site on 127.0.0.1 until Ctrl-C (or SIGTERM), its form page's URL on stdout, so
    that ``hwnoise collect --form URL`` can be tried on it from another shell."""
    import signal
    import time

    def _stop(signum, frame):  # SIGTERM ends it as Ctrl-C does: the server closed, exit 0
        raise KeyboardInterrupt

    site = DemoSite(seed, records)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        site.start(port)
        print(site.form_url, flush=True)
        words = "\\n".join(site.vocab["words"][:3])  # common words of its catalogue
        print(f"demo site at {site.form_url} (seed {seed}, {records} records); Ctrl-C stops it. "
              f"Collect from it in another shell:\n  printf 'q\\n{words}\\n' > values.csv\n"
              f"  hwnoise collect --form {site.form_url} --values values.csv --allow-private "
              "--delay 0 --into demo-crawl", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        site.stop()
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    raise SystemExit(main())

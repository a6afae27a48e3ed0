"""How the extracted text is laid out: is a paragraph of the gold one line of the output?

    python bench/text_layout.py --work /tmp/layout                     # readability, cleaneval, big9
    python bench/text_layout.py --work /tmp/layout --only readability --limit 30

The shipped ``general`` model labels each page (``hwnoise.extractors.model.label_with_model``);
its content text is joined two ways from the same labels: *one text node a line* (how
``text_from_labels`` joined them before session 32: a link inside a sentence broke it into
three lines) and *as laid out* (``text_from_labels`` now: a space within a block, a newline where
a block begins or ends or a ``<br>`` stands). trafilatura's own text of the page is the reference.

For each gold paragraph of at least ``--min-words`` words (a line of the gold: readability's
blocks of ``expected.html``, CleanEval's ``<p>`` blocks, big9's lines), *found* means its words
stand in a row somewhere in the output (lines joined), *whole* that they stand in a row inside
one output line. Printed per source: paragraphs, found, whole among the found, and lines of
output per 100 words. The words, and so every text F1 of the README, are the same both ways
(tests/test_extractors.py); only where lines break differs.

Then ``--markdown``'s text of the same labels (``markdown_from_labels``): the pages whose Markdown,
read back by a CommonMark parser (markdown-it-py, the test extra, with GitHub's tables), gives the
words of the plain text exactly, and the milliseconds a page it takes to write.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "datasets"
SOURCES = ("readability", "cleaneval", "big9")


def one_a_line(walk, labels) -> str:
    """The content text as before session 32: each kept text node its own line."""
    keep = np.asarray(labels) == "N"
    return "\n".join(t for node, t in walk.segments if 0 <= node < len(keep) and keep[node] and t)


def paragraph_counts(text: str, paragraphs: list[list[str]]) -> tuple[int, int]:
    """``(found, whole)``: gold paragraphs whose words stand in a row in ``text`` / in one line."""
    from hwnoise.text import tokenize

    lines = [" " + " ".join(tokenize(line)) + " " for line in text.split("\n")]
    everything = " " + " ".join(tokenize(text)) + " "
    found = whole = 0
    for para in paragraphs:
        needle = " " + " ".join(para) + " "
        if needle in everything:
            found += 1
            whole += any(needle in line for line in lines)
    return found, whole


def gold_paragraphs(gold: str, min_words: int) -> list[list[str]]:
    from hwnoise.text import tokenize

    return [w for w in (tokenize(line) for line in gold.splitlines()) if len(w) >= min_words]


def markdown_words(md, markdown: str) -> list[str]:
    """The words of ``markdown`` as a CommonMark parser (``md``) renders it."""
    import lxml.html

    from hwnoise.text import tokenize

    html = md.render(markdown)
    return tokenize(" ".join(lxml.html.fromstring(f"<div>{html}</div>").itertext())) if html.strip() else []


def measure(pages, min_words: int, md=None) -> tuple[dict[str, list[float]], list[float]]:
    """Per way of joining: [paragraphs, found, whole, lines, words] summed over ``pages``; and for
    Markdown [pages, pages whose words it gives back (with ``md``, a CommonMark parser), seconds]."""
    from hwnoise.extractors.base import markdown_from_labels, text_from_labels
    from hwnoise.extractors.model import label_with_model, load_model, run_extractor
    from hwnoise.text import tokenize

    model = load_model("general")
    sums = {way: [0, 0, 0, 0, 0] for way in ("one text node a line", "as laid out", "trafilatura")}
    marked = [0, 0, 0.0]
    for page in pages:
        gold = page.read_gold()
        paras = gold_paragraphs(gold or "", min_words)
        if not paras:
            continue
        html = page.read_html()
        walk, labels = label_with_model(model, html, http_charset=page.http_charset)
        texts = {"one text node a line": one_a_line(walk, labels),
                 "as laid out": text_from_labels(walk, labels),
                 "trafilatura": run_extractor("trafilatura", html, page.http_charset) or ""}
        start = time.perf_counter()
        markdown = markdown_from_labels(walk, labels)
        marked[2] += time.perf_counter() - start
        marked[0] += 1
        if md is not None:
            marked[1] += markdown_words(md, markdown) == tokenize(texts["as laid out"])
        for way, text in texts.items():
            found, whole = paragraph_counts(text, paras)
            s = sums[way]
            s[0] += len(paras)
            s[1] += found
            s[2] += whole
            s[3] += sum(1 for line in text.split("\n") if line.strip())
            s[4] += len(tokenize(text))
    return sums, marked


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared datasets folder")
    ap.add_argument("--work", type=Path, default=Path("/tmp/hwnoise-text-layout"),
                    help="where the sources are imported (made once, reused)")
    ap.add_argument("--only", nargs="*", default=list(SOURCES), choices=SOURCES)
    ap.add_argument("--limit", type=int, default=0, help="pages of each source at most (0: all)")
    ap.add_argument("--min-words", type=int, default=8, help="a gold paragraph's words at least")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from compare import ensure

    from hwnoise.dataset import Dataset

    try:
        import markdown_it

        md = markdown_it.MarkdownIt("commonmark").enable("table")
    except ImportError:  # the test extra is not installed: Markdown is timed, not read back
        md = None
    print(f"{'source':<12} {'way':<21} {'paragraphs':>10} {'found':>7} {'whole (of found)':>17} "
          f"{'lines / 100 words':>18}")
    marks = {}
    for src in args.only:
        pages = [p for d in ensure(src, args.data, args.work, None) for p in Dataset(d).pages()]
        if args.limit:
            pages = pages[:args.limit]
        sums, marks[src] = measure(pages, args.min_words, md)
        for way, (paras, found, whole, lines, words) in sums.items():
            print(f"{src:<12} {way:<21} {paras:>10} {found:>7} {whole / max(found, 1):>17.3f} "
                  f"{100 * lines / max(words, 1):>18.1f}", flush=True)
    for src, (n, same, seconds) in marks.items():
        back = f"{same} of {n} pages give back the text's words" if md is not None else \
            "not read back (pip install markdown-it-py)"
        print(f"{src:<12} --markdown: {back}; {1000 * seconds / max(n, 1):.1f} ms a page to write")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

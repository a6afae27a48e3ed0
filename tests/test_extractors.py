"""Node labels → text, the external adapters on a small page, the registry, ``hwnoise extract``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hwnoise.extractors import external
from hwnoise.extractors.base import ExtractorError, Method, text_from_labels
from hwnoise.extractors.registry import METHODS, available_methods, get_method
from hwnoise.features.labels import label_page
from hwnoise.features.walk import walk_page
from hwnoise.text import text_scores, tokenize

CHROMIUM = "/usr/bin/chromium"

PARAS = [
    "The river rose by two metres overnight and the old stone bridge was closed to traffic.",
    "Engineers from the county inspected the arches at dawn and found fresh cracks in the piers.",
    "Residents of the lower town were told to move their cars and to keep away from the banks.",
    "The council said the bridge would stay closed until the water fell and a full survey was done.",
    "Farmers upstream reported flooded fields, drowned fences and sheep stranded on small islands.",
]
# jusText keeps paragraphs of more than about 200 characters: make each three sentences long
PARAS = [p + " " + PARAS[(i + 2) % len(PARAS)] + " " + PARAS[(i + 3) % len(PARAS)]
         for i, p in enumerate(PARAS)]
ARTICLE_HTML = (
    "<html><head><title>River rises</title><meta charset='utf-8'></head><body>"
    "<div class='menu'><a href='/'>Home</a> <a href='/news'>News</a> <a href='/sport'>Sport</a>"
    " <a href='/weather'>Weather</a></div>"
    "<article><h1>River rises, bridge closed</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAS)
    + "</article><div class='footer'><a href='/terms'>Terms of use</a> "
    "<a href='/cookies'>Cookie settings</a></div></body></html>"
)
GOLD = "River rises, bridge closed\n" + "\n".join(PARAS)


def test_text_from_labels_gives_each_content_nodes_own_text_in_document_order():
    html = "<html><body><div>a1 <b>b2</b> a3<p>p4</p></div><p>q5</p></body></html>"
    walk = walk_page(html)
    tags = walk.rows["tag"].tolist()
    assert tags == ["body", "div", "b", "p", "p"]
    labels = np.array(["S", "N", "S", "N", "S"], dtype=object)
    # div's own text (a1, a3) and its p; not b's text, not the other p
    assert tokenize(text_from_labels(walk, labels)) == ["a1", "a3", "p4"]
    assert text_from_labels(walk, np.array(["N"] * 5, dtype=object)).split() == \
        ["a1", "b2", "a3", "p4", "q5"]
    assert text_from_labels(walk, np.array(["S"] * 5, dtype=object)) == ""


LAYOUT_HTML = (
    "<html><body><div class='menu'><a href='/'>Home</a> <a href='/n'>News</a></div>"
    "<p>A new <a href='/r'>report</a> by <b>Stanford</b> calls it <i>into</i> question.</p>"
    "<p>Line one<br>line two</p>"
    "<div>Before <span>the list</span><ul><li>first <em>item</em></li><li>second</li></ul>"
    "after the list<p></p>after an empty block</div>"
    "<table><tr><td>cell <b>one</b></td><td>cell two</td></tr></table></body></html>")


def test_text_from_labels_lays_the_text_out_as_a_browser_does():
    # as innerText: inline elements (a link, <b>, <i>) stay inside their paragraph's line; a
    # paragraph, an empty one too, is set off by a blank line; another block that begins or ends,
    # and <br>, start a new line; the cells of a row stand on one line, a tab apart
    walk = walk_page(LAYOUT_HTML)
    tags = walk.column("tag")
    labels = np.array(["S" if t == "a" and k < 4 else "N" for k, t in enumerate(tags)], dtype=object)
    labels[tags.index("div")] = "S"  # the menu
    assert text_from_labels(walk, labels) == (
        "A new report by Stanford calls it into question.\n\n"
        "Line one\nline two\n\n"
        "Before the list\nfirst item\nsecond\nafter the list\n\nafter an empty block\n"
        "cell one\tcell two")
    # a noise link inside a paragraph leaves the paragraph one line
    labels[[k for k, t in enumerate(tags) if t == "a"][-1]] = "S"
    assert text_from_labels(walk, labels).split("\n")[0] == "A new by Stanford calls it into question."


#: Pages whose text Chromium's innerText gives as text_from_labels lays it out (no style sheet,
#: so every element shows as HTML's defaults say; whitespace between inline elements as written;
#: no <pre>, whose spaces the walk collapses)
INNER_TEXT_PAGES = [
    LAYOUT_HTML,
    "<html><body><h1>Head</h1><p>p one <b>bold</b></p><div>div a</div><div>div b<br>after br</div>"
    "<p>p two</p><ul><li>i1</li><li>i2 <a href='#'>link</a></li></ul><table><tr><th>A</th><th>B</th></tr>"
    "<tr><td>1</td><td>2 <i>x</i></td></tr></table><blockquote>q</blockquote>"
    "<section><div><p>deep p</p></div></section>tail</body></html>",
    "<html><body><article><h2>Results for oak</h2><ol><li><h3><a href='/1'>Oak chair</a></h3><p>Solid oak, "
    "hand made.</p><span>$120</span></li><li><h3><a href='/2'>Oak table</a></h3><p>Six seats.</p>"
    "<span>$640</span></li></ol><p>Page 1 of 3<br><br>Next</p></article><footer>Terms<br>Privacy</footer>"
    "<dl><dt>Term</dt><dd>Its meaning</dd></dl><table><caption>Prices</caption><thead><tr><th>Item</th>"
    "<th>Price</th></tr></thead><tbody><tr><td>Chair</td><td>$5</td></tr></tbody></table></body></html>",
]  # (not a block inside a cell: there innerText puts the cell's tab after the block's blank line)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_the_layout_is_chromiums_inner_text():
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            shown = []
            for html in INNER_TEXT_PAGES:
                page.set_content(html)
                shown.append(page.evaluate("document.body.innerText"))
        finally:
            browser.close()
    for html, inner in zip(INNER_TEXT_PAGES, shown):
        walk = walk_page(html)
        assert text_from_labels(walk, np.array(["N"] * len(walk.column("tag")), dtype=object)) == inner


def test_text_from_labels_keeps_the_words_of_one_text_node_a_line():
    # the layout changes only the whitespace between text nodes: the words, so every text
    # score, are those of the text nodes one a line, whichever nodes are content
    walk = walk_page(LAYOUT_HTML)
    rng = np.random.default_rng(7)
    for _ in range(50):
        labels = np.where(rng.random(len(walk.column("tag"))) < 0.5, "N", "S").astype(object)
        one_a_line = "\n".join(t for n, t in walk.segments if labels[n] == "N")
        assert tokenize(text_from_labels(walk, labels)) == tokenize(one_a_line)


def test_gold_labels_extract_the_gold_text():
    walk = walk_page(ARTICLE_HTML)
    labels = label_page(walk, GOLD)
    text = text_from_labels(walk, labels)
    # label and extraction agree by construction: the gold's labels give back the gold's words
    assert text_scores(text, GOLD) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    # and every node labelled content contributes exactly its own text
    own = {n: t for n, t in walk.segments}
    for node in np.flatnonzero(labels == "N"):
        if node in own:
            assert own[node] in text


@pytest.mark.parametrize("name", ["trafilatura", "readability", "justext", "resiliparse"])
def test_external_adapters_on_a_small_page(name):
    if name not in external.available():
        pytest.skip(f"{name} is not installed")
    method = get_method(name)
    assert isinstance(method, Method) and not method.needs_training
    text = method.extract_html(ARTICLE_HTML.encode("utf-8"))
    assert isinstance(text, str)
    assert "Engineers from the county" in " ".join(text.split())
    assert "Cookie settings" not in text
    assert text_scores(text, GOLD)["recall"] > 0.7
    assert method.failures == 0


def test_adapters_never_crash_on_a_bad_page_and_count_it():
    if "readability" not in external.available():
        pytest.skip("readability-lxml is not installed")
    method = get_method("readability")
    assert method.extract_html(b"") == ""  # lxml: "Document is empty"
    assert method.failures == 1 and "empty" in method.last_error.lower()
    for name in external.available():
        m = get_method(name)
        for bad in (b"", b"\x00\xff\xfe\x00", b"<html><body><p>unclosed <b><i>"):
            assert isinstance(m.extract_html(bad), str)


def test_adapters_decode_like_a_browser():
    if "resiliparse" not in external.available():
        pytest.skip("resiliparse is not installed")
    page = "<html><body><article><p>Caf\u00e9 cr\u00e8me brûlée, na\u00efve fa\u00e7ade, and more words " \
           "to make a paragraph long enough for any extractor to keep it as content.</p></article>" \
           "</body></html>"
    text = get_method("resiliparse").extract_html(page.encode("cp1252"), http_charset="windows-1252")
    assert "Café crème" in text


def test_a_page_nested_past_the_parsers_depth_reaches_resiliparse_as_the_walk_reads_it(monkeypatch):
    """60,000 unclosed <div>s: resiliparse's time grows with the square of the depth (this page
    took 80 s, one of 300,000 never ended, in ``hwnoise extract`` through the general model's
    stacked extractors); it now gets the page flattened, once, by the walk (``PageWalk.flattened``)."""
    from hwnoise.extractors.base import as_walked
    from hwnoise.extractors.model import run_extractor
    from hwnoise.features.walk import MAX_DEPTH, parse_html

    deep = "<html><body>" + "<div>" * 60_000 + "the words deep inside" + "</div>" * 60_000 + "</body></html>"
    walk = walk_page(deep.encode())
    root, too_deep = parse_html(walk.flattened)
    assert not too_deep and max(len(list(el.iterancestors())) for el in root.iter()) <= MAX_DEPTH + 2
    assert "the words deep inside" in "".join(root.itertext())
    assert as_walked(deep.encode(), "utf-8", walk) == (walk.flattened, None)
    page = b"<html><body><div><p>shallow</p></div></body></html>"
    shallow = walk_page(page)
    assert shallow.flattened is None and as_walked(page, "utf-8", shallow) == (page, "utf-8")
    assert as_walked(page, "utf-8", None) == (page, "utf-8")
    if "resiliparse" in external.available():
        from resiliparse.extract import html2text

        seen = []
        real = html2text.extract_plain_text

        def spy(html, **options):
            seen.append(html)
            return real(html, **options)

        monkeypatch.setattr(html2text, "extract_plain_text", spy)
        deeper = "<html><body>" + "<div>" * 3_000 + "the words deep inside" + "</div>" * 3_000 + "</body></html>"
        walk = walk_page(deeper.encode())
        assert "the words deep inside" in run_extractor("resiliparse", deeper.encode(), walk=walk)
        assert seen == [walk.flattened]  # the stacker hands resiliparse the page as walked


@pytest.mark.skipif("resiliparse" not in external.available(), reason="resiliparse not installed")
def test_a_page_past_the_walks_cap_reaches_the_extractors_cut_as_the_walk_cut_it():
    """The walk cuts a page at ``limits.MAX_PAGE_CHARS`` (the last tag before 32 MiB), but the
    stacked extractors (trafilatura, resiliparse...) were handed the whole page: a 50 MB page
    took minutes and gigabytes in them, and their text held words no node of the walk has. They
    read it cut as the walk does, with and without the walk given. A page just over the cap, of
    a repeated script block (cheap to parse), with words past the cap."""
    from hwnoise.extractors.model import run_extractor
    from hwnoise.features.limits import MAX_PAGE_CHARS

    block = "<script>" + "var x = 1;\n" * 40_000 + "</script>\n"
    html = ("<html><body><p>The head of the page, kept.</p>" + block * (MAX_PAGE_CHARS // len(block) + 1)
            + "<p>The tail past the cap.</p></body></html>").encode()
    assert len(html) > MAX_PAGE_CHARS
    walk = walk_page(html)
    assert [t for _, t in walk.segments] == ["The head of the page, kept."]
    assert run_extractor("resiliparse", html, walk=walk) == "The head of the page, kept."
    assert get_method("resiliparse").extract_html(html.decode()) == "The head of the page, kept."


@pytest.mark.parametrize("name", ["nce", "isotonic", "webstemmer"])
def test_a_page_past_the_walks_cap_reaches_nce_isotonic_and_webstemmer_cut(tmp_path, monkeypatch, name):
    """As the external extractors (above), the methods that read a page's markup beside its walk
    read it cut as the walk cuts it (``base.capped_page``): NCE took its page title from the
    whole page, so a title past the cap, in no node of the walk, was in its text. A small cap
    (20,000 characters; the run cap with it, as the walk reads a page no longer than the run
    cap as it is), a page of the dataset past it with its title and words beyond the cap."""
    from test_evaluate import make_dataset

    from hwnoise.dataset import Dataset
    from hwnoise.extractors.base import capped_page, walk_of
    from hwnoise.features import limits

    monkeypatch.setattr(limits, "MAX_PAGE_CHARS", 20_000)
    monkeypatch.setattr(limits, "MAX_TEXT_RUN", 20_000)
    ds = Dataset(make_dataset(tmp_path, "books.example", pages=6))
    pages = list(ds.pages())
    html = pages[0].read_html().decode().replace("<title>", "<x-t>").replace("</title>", "</x-t>")
    html = html.replace("</body>", "<div class=pad><p>filler words here</p></div>\n" * 600
                        + "<title>Zanzibar title past the cap</title><p>Quixotic words past the cap.</p></body>")
    assert len(html) > limits.MAX_PAGE_CHARS
    ds.write_page(pages[0].id, html.encode())
    big = next(p for p in ds.pages() if p.id == pages[0].id)
    assert "Zanzibar" not in capped_page(big.read_html(), big.http_charset)
    walk = walk_of(big, keep_tree=True)
    assert not any("Quixotic" in t or "Zanzibar" in t for _, t in walk.segments)
    method = get_method(name)
    if method.needs_training:
        method.fit(pages[1:])
    for given in (None, walk, walk_of(big)):
        text = method.extract(big, given)
        assert text and "Quixotic" not in text and "Zanzibar" not in text, (given, text[-200:])


def test_alltext_is_every_visible_word():
    m = get_method("alltext")
    text = m.extract_html(ARTICLE_HTML)
    for word in ("Home", "Engineers", "Cookie"):
        assert word in text
    assert "River rises\n" not in text.split("Home")[0]  # the <title> is not shown in the body
    walk = walk_page(ARTICLE_HTML)
    assert (m.node_labels(None, walk) == "N").all()


def test_registry():
    assert {"model", "cetd", "alltext", "trafilatura", "readability", "justext", "resiliparse",
            "sitelevel", "isotonic", "webstemmer", "nce"} <= set(METHODS)
    with pytest.raises(ExtractorError, match="unknown method 'nope'"):
        get_method("nope")
    names = available_methods()
    assert {"model", "cetd", "alltext"} <= set(names)
    assert get_method("cetd").name == "cetd" and get_method("model").needs_training
    for name, target in METHODS.items():
        module = target.partition(":")[0]
        try:
            __import__(module)
        except ModuleNotFoundError:
            with pytest.raises(ExtractorError, match="not implemented"):
                get_method(name)


def test_extract_command_with_a_saved_model(tmp_path, monkeypatch, capsys):
    from hwnoise.cli import main
    from hwnoise.extractors.model import extract_with_model
    from hwnoise.training.model import NoiseModel

    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "key"))
    # train on three pages of one "site", each with its own article
    import pandas as pd

    frames = []
    for k in range(3):
        html = ARTICLE_HTML.replace("River", f"Stream{k}")
        walk = walk_page(html)
        rows = walk.rows.copy()
        rows["label"] = label_page(walk, GOLD.replace("River", f"Stream{k}"))
        frames.append(rows)
    model = NoiseModel("j48").fit(pd.concat(frames, ignore_index=True))
    model.save(tmp_path / "model")
    page = tmp_path / "page.html"
    page.write_bytes(ARTICLE_HTML.encode("utf-8"))
    expected = extract_with_model(model, page.read_bytes())
    assert text_scores(expected, GOLD)["f1"] > 0.95
    assert main(["extract", "--model", str(tmp_path / "model"), str(page)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == expected.strip()
    assert main(["extract", "--model", str(tmp_path / "model"), str(tmp_path / "missing.html")]) == 1
    assert "missing.html" in capsys.readouterr().err


def test_stacking_shares_and_a_stacked_model(tmp_path, monkeypatch):
    from hwnoise.extractors.model import ModelMethod, extract_with_model
    from hwnoise.features.assembly import stack_share
    from hwnoise.training.model import NoiseModel

    html = "<html><body><div><p>alpha beta</p><p>gamma delta</p></div><p>menu words</p></body></html>"
    walk = walk_page(html)
    assert walk.rows["tag"].tolist() == ["body", "div", "p", "p", "p"]
    share = stack_share(walk, "alpha beta gamma")
    # p1 kept whole, p2 half, menu nothing; div: 3 of its 4 subtree words; body: 3 of 6
    assert share.tolist() == pytest.approx([0.5, 0.75, 1.0, 0.5, 0.0])
    if "trafilatura" not in external.available():
        pytest.skip("trafilatura is not installed")
    monkeypatch.setenv("HWNOISE_KEY_FILE", str(tmp_path / "key"))
    walk = walk_page(ARTICLE_HTML)
    rows = walk.rows.assign(label=label_page(walk, GOLD))
    method = ModelMethod(stack="trafilatura")
    assert method.features[-1] == "stack_trafilatura"
    method.fit_rows(rows.assign(stack_trafilatura=stack_share(walk, get_method("trafilatura")
                                                              .extract_html(ARTICLE_HTML))))
    method.model.save(tmp_path / "m")
    loaded = NoiseModel.load(tmp_path / "m")
    text = extract_with_model(loaded, ARTICLE_HTML)  # runs trafilatura for the stacked column
    assert text_scores(text, GOLD)["f1"] > 0.95


def test_context_features_read_the_parent_and_grandparent():
    import pandas as pd

    from hwnoise.extractors.model import ModelMethod
    from hwnoise.features.assembly import add_context

    rows = pd.DataFrame({"parent": [-1, 0, 1, 1], "ctd": [1.0, 2.0, 3.0, 4.0]})
    out = add_context(rows, ["ctd", "ctx_parent_ctd", "ctx_grand_ctd", "ctx_parent_missing"])
    assert out["ctx_parent_ctd"].tolist() == [1.0, 1.0, 2.0, 2.0]  # body is its own parent
    assert out["ctx_grand_ctd"].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert out["ctx_parent_missing"].isna().all()
    # a subset of a page's rows (the thesis split): parents are node ids, absent ones unknown
    sub = pd.DataFrame({"node": [0, 2, 3], "parent": [-1, 1, 1], "ctd": [1.0, 3.0, 4.0]})
    out = add_context(sub, ["ctx_parent_ctd"])
    assert out["ctx_parent_ctd"].tolist()[0] == 1.0 and out["ctx_parent_ctd"].isna().tolist() == [False, True, True]
    full = rows.assign(node=[0, 1, 2, 3])
    assert add_context(full, ["ctx_grand_ctd"])["ctx_grand_ctd"].tolist() == [1.0, 1.0, 1.0, 1.0]
    m = ModelMethod(context=True)
    assert "ctx_parent_link_density" in m.features and "ctd" in m.features


def test_page_char_f1_and_inner_threshold():
    import pandas as pd

    from hwnoise.extractors.model import ModelMethod
    from hwnoise.training.threshold import THRESHOLDS, inner_threshold, page_char_f1

    def labels_at_threshold(model, rows, t):
        model.threshold = t
        return model.predict(rows)

    df = pd.DataFrame({"own_chars": [10, 10, 5, 0], "label": ["N", "S", "N", "S"],
                       "page": ["a", "a", "b", "b"]})
    # page a: 10 of 10 content chars kept, 10 noise chars too (F1 2/3 at 0.3); page b: all right
    got = page_char_f1(df, np.array([0.9, 0.4, 0.6, 0.9]), [0.3, 0.5, 0.7])
    assert np.allclose(got, [(2 / 3 + 1) / 2, 1.0, 0.5])
    # six sites where content is x > 0.3: the inner CV, on these rows only, picks a threshold
    rng = np.random.default_rng(0)
    n = 1200
    x = rng.random(n)
    rows = pd.DataFrame({"ctd": x, "density_sum": rng.random(n), "own_chars": rng.integers(1, 50, n),
                         "label": np.where(x > 0.3, "N", "S"), "site": [f"s{i % 6}" for i in range(n)],
                         "page": [f"p{i % 24}" for i in range(n)]})
    t = inner_threshold(rows, lambda: ModelMethod(classifier="gb", features="ctd,density_sum")._fresh())
    assert t in THRESHOLDS
    m = ModelMethod(classifier="gb", features="ctd,density_sum", threshold="inner").fit_rows(rows)
    assert m.threshold in THRESHOLDS
    labels = labels_at_threshold(m.model, rows, 0.0)
    assert (labels == "N").all()
    assert (labels_at_threshold(m.model, rows, 1.01) == "S").all()
    assert (labels_at_threshold(m.model, rows, 0.5) == rows["label"].to_numpy()).mean() > 0.95

"""Records: gold records as XPaths (import nexteval / plain), node labels from them, records
grouped from labels, the record metric, MDR, the record level of evaluate, extract --records."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hwnoise.cli import main
from hwnoise.dataset import Dataset
from hwnoise.extractors.base import walk_of
from hwnoise.extractors.mdr import K, T, mdr_records
from hwnoise.extractors.records import (GroupingOptions, drop_thin, drop_unsure, page_records, record_rows, region_conf,
                                        row_xpaths)
from hwnoise.features.importers import ImportFormatError, import_dataset
from hwnoise.features.columns import CONTENT, NOISE
from hwnoise.features.labels import page_labels
from hwnoise.features.record_gold import normalize_xpath, resolve_records
from hwnoise.features.walk import walk_page
from hwnoise.training.record_metrics import mean_record_scores, record_scores

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "nexteval"

NAV = "<div id=nav><a href=/>Home</a> <a href=/about>About us</a> <a href=/help>Help</a></div>"
FOOT = "<div class=foot><p>Copyright 2026 Example Books. All rights reserved.</p></div>"


def listing(seed: int, n: int = 5, hidden: bool = True) -> str:
    """A result page: nav, a table of n records (tbody as Chromium writes it), a hidden
    record, a footer."""
    rows = "".join(
        f"<tr><td><a href=/b/{seed}{k}>Book title {seed} {k} volume</a></td>"
        f"<td><span>Author {k} Name{seed}</span> <b>{10 + k}.99</b></td></tr>" for k in range(n))
    extra = (f"<tr style='display: none'><td><a href=/x>Hidden title {seed}</a></td>"
             f"<td><span>Hidden author</span> <b>1.00</b></td></tr>") if hidden else ""
    return (f"<html><head><title>Results {seed}</title></head><body>{NAV}"
            f"<div class=main><h2>Search results</h2><table><tbody>{rows}{extra}</tbody></table></div>"
            f"{FOOT}</body></html>")


def gold_of(n: int = 5, hidden: bool = True) -> list[list[str]]:
    base = "/body[1]/div[2]/table[1]/tbody[1]"
    out = [[f"{base}/tr[{k + 1}]"] for k in range(n)]
    if hidden:
        out.append([f"{base}/tr[{n + 1}]"])
    return out


@pytest.fixture
def nexteval_src(tmp_path) -> Path:
    src = tmp_path / "src"
    (src / "html").mkdir(parents=True)
    (src / "groundTruth").mkdir()
    for k, n in ((1, 5), (2, 6), (3, 4), (4, 5)):
        (src / "html" / f"{k}.html").write_text(listing(k, n), encoding="utf-8")
        (src / "groundTruth" / f"{k}.json").write_text(json.dumps(gold_of(n)), encoding="utf-8")
    return src


def test_xpaths_resolve_to_walker_rows_and_label_record_subtrees():
    html = listing(1, 5).encode()
    walk = walk_page(html)
    gold = resolve_records(html, gold_of(5), n_rows=len(walk.rows))
    assert gold.records == 6 and gold.xpaths == 6
    assert gold.unresolved == 1 and gold.hidden == 1 and len(gold.rows) == 5
    labels = page_labels(walk, None, html=html, records=gold_of(5))
    rows = walk.rows
    content = set(rows.loc[labels == "N", "xpath"])
    assert "/html/body/div[2]/table[1]/tbody[1]/tr[3]/td[2]/b[1]" in content
    assert not any(x.startswith("/html/body/div[1]") for x in content)  # nav is noise
    assert "/html/body/div[2]/table[1]/tbody[1]" not in content     # the records' parent too
    # gold records beat gold text (one place of precedence)
    assert (page_labels(walk, "Home About us Help", html=html, records=gold_of(5)) == labels).all()
    assert normalize_xpath("/html/body/div[2]/TABLE") == "/body[1]/div[2]/table[1]"


def test_import_nexteval_writes_records_gold_text_and_counts(nexteval_src, tmp_path, capsys):
    assert main(["import", "nexteval", str(nexteval_src), "--into", str(tmp_path / "out"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "nexteval: html/1.html: 1 of 6 record XPaths name no shown element (1 hidden" in err
    assert "nexteval: 4 page(s) with gold records, 24 records, 4 of 24 XPaths unresolved" in err
    ds = Dataset(tmp_path / "out" / "nexteval")
    pages = list(ds.pages())
    assert [p.submission["name"] for p in pages] == ["1", "2", "3", "4"]
    assert len({p.site for p in pages}) == 4                   # every page its own site
    p = pages[0]
    assert p.read_records() == gold_of(5)
    assert p.submission["unresolved"] == 1 and p.submission["hidden"] == 1
    blocks = p.read_gold().split("\n\n")
    assert len(blocks) == 5 and blocks[0].startswith("Book title 1 0 volume Author 0 Name1")
    assert "Hidden" not in p.read_gold() and "Home" not in p.read_gold()
    # features label the nodes from the records, not by aligning text
    assert main(["features", str(ds.path), "--no-progress"]) == 0
    df = ds.read_features(["page", "xpath", "label"])
    one = df[df.page == p.id]
    lab = dict(zip(one.xpath, one.label))
    assert lab["/html/body/div[2]/table[1]/tbody[1]/tr[1]/td[1]/a[1]"] == "N"
    assert lab["/html/body/div[2]/h2[1]"] == "S" and lab["/html/body/div[1]/a[1]"] == "S"


def test_import_nexteval_errors(tmp_path, nexteval_src):
    with pytest.raises(ImportFormatError, match="groundTruth"):
        import_dataset("nexteval", tmp_path, tmp_path / "o", progress=False)
    (nexteval_src / "groundTruth" / "2.json").write_text("{\"a\": 1}", encoding="utf-8")
    with pytest.raises(ImportFormatError, match="2.json: expected a JSON list of records"):
        import_dataset("nexteval", nexteval_src, tmp_path / "o", progress=False)


def test_import_plain_reads_optional_records(tmp_path, capsys):
    """``records/NAME.json`` in a plain folder is gold as NEXT-EVAL's is: node gold, the gold
    text when ``gold/NAME.txt`` gives none, its XPaths counted and the unresolved reported."""
    src = tmp_path / "plain"
    (src / "html").mkdir(parents=True)
    (src / "records").mkdir()
    (src / "gold").mkdir()
    (src / "html" / "a.html").write_text(listing(1, 3), encoding="utf-8")
    (src / "html" / "b.html").write_text(listing(2, 3, hidden=False), encoding="utf-8")
    (src / "html" / "c.html").write_text(listing(3, 3, hidden=False), encoding="utf-8")
    (src / "records" / "a.json").write_text(json.dumps(gold_of(3)), encoding="utf-8")
    (src / "records" / "c.json").write_text(json.dumps(gold_of(3, hidden=False)), encoding="utf-8")
    (src / "gold" / "c.txt").write_text("Search results", encoding="utf-8")  # its own gold text stays
    (ds_path,) = import_dataset("plain", src, tmp_path / "out", progress=False)
    err = capsys.readouterr().err
    assert "plain: html/a.html: 1 of 4 record XPaths name no shown element (1 hidden" in err
    assert "2 page(s) with gold records, 7 records, 1 of 7 XPaths unresolved" in err
    ds = Dataset(ds_path)
    by = {p.submission["name"]: p for p in ds.pages()}
    assert by["a"].read_records() == gold_of(3) and by["b"].read_records() is None
    a = by["a"]
    assert a.submission["has_gold"] and (a.submission["xpaths"], a.submission["unresolved"]) == (4, 1)
    blocks = a.read_gold().split("\n\n")
    assert len(blocks) == 3 and blocks[2].startswith("Book title 1 2 volume") and "Hidden" not in a.read_gold()
    assert not by["b"].submission["has_gold"] and "records" not in by["b"].submission
    assert by["c"].read_gold() == "Search results" and by["c"].submission["records"] == 3


def test_records_files_in_any_unicode_json_and_a_clear_error_otherwise(tmp_path):
    """A records file saved as UTF-16 or UTF-32 (as JSON allows) reads as its UTF-8 twin; bytes
    that are no Unicode text are one line naming the file, not a traceback."""
    src = tmp_path / "plain"
    (src / "html").mkdir(parents=True)
    (src / "records").mkdir()
    for enc in ("utf-8", "utf-8-sig", "utf-16", "utf-32"):
        name = enc.replace("-", "")
        (src / "html" / f"{name}.html").write_text(listing(1, 3, hidden=False), encoding="utf-8")
        (src / "records" / f"{name}.json").write_bytes(json.dumps(gold_of(3, hidden=False)).encode(enc))
    (ds_path,) = import_dataset("plain", src, tmp_path / "out", progress=False)
    pages = list(Dataset(ds_path).pages())
    assert len(pages) == 4 and all(p.read_records() == gold_of(3, hidden=False) for p in pages)
    assert all(p.submission["records"] == 3 and p.submission["has_gold"] for p in pages)
    (src / "records" / "utf8.json").write_bytes(b'[["/body[1]"] \xff]')
    with pytest.raises(ImportFormatError, match=r"utf8\.json: not JSON text in UTF-8, UTF-16 or UTF-32"):
        import_dataset("plain", src, tmp_path / "out2", progress=False)


def test_record_metric_partial_credit_one_to_one():
    gold = [["/a"], ["/b"], ["/c", "/d"]]
    assert record_scores(gold, gold)["record_f1"] == 1.0
    s = record_scores([["/a"], ["/c"], ["/a", "/b"]], gold)
    # /a-/a 1, /c-{c,d} 0.5, {a,b}-/b 0.5 (one to one: /a cannot be used twice)
    assert s["record_precision"] == pytest.approx(2 / 3) and s["record_recall"] == pytest.approx(2 / 3)
    assert record_scores([], gold)["record_f1"] == 0.0 and record_scores([], [])["record_f1"] == 1.0
    m = mean_record_scores([record_scores(gold, gold), record_scores([], gold)])
    assert m["record_f1"] == 0.5 and m["record_pages"] == 2
    assert m["record_f1_se"] == pytest.approx(0.5)  # pages at 1 and 0: s.d. 0.707 over sqrt(2)


def test_text_map_keys_as_the_paper_walks_text_nodes():
    import lxml.html

    from hwnoise.features.record_gold import text_xpaths

    html = ("<html><head><title>T</title><style>p{}</style></head><body>"
            "<ul><li><div>one</div></li><li>two<b>bold</b> tail</li><li>\xa0 </li>"
            "<li style='display:none'>hidden</li><li><!-- c -->after comment</li></ul>"
            "<script>var x = 1</script><p><i>in</i></p><p>x</p></body></html>")
    keys = text_xpaths(lxml.html.fromstring(html))
    assert keys == sorted(["/head[1]/title[1]", "/body[1]/ul[1]/li[1]/div[1]", "/body[1]/ul[1]/li[2]",
                           "/body[1]/ul[1]/li[2]/b[1]", "/body[1]/ul[1]/li[4]", "/body[1]/ul[1]/li[5]",
                           "/body[1]/p[1]/i[1]", "/body[1]/p[2]"])
    # the paper's trim: a text of U+00A0 and spaces is blank (li[3]); script and style hold none


def test_paper_metric_expands_records_to_their_text():
    from hwnoise.training.record_metrics import expand_records

    keys = sorted(["/body[1]/ul[1]/li[1]/div[1]", "/body[1]/ul[1]/li[1]/div[1]/b[1]",
                   "/body[1]/ul[1]/li[2]/div[1]"] + [f"/body[1]/ul[1]/li[{k}]" for k in range(10, 12)])
    gold = [["/body[1]/ul[1]/li[2]"], ["/body[1]/ul[1]/li[1]/div[1]"]]
    pred = [["/body[1]/ul[1]/li[1]"], ["/body[1]/ul[1]/li[2]/div[1]"]]     # each one level off
    assert record_scores(pred, gold)["record_f1"] == 0.0                   # the elements differ
    assert record_scores(pred, gold, keys)["record_f1"] == 1.0             # the text is the same
    # a string prefix, as the paper's code tests it; the closing bracket keeps li[10] out of li[1]
    (li1,) = expand_records([["/body[1]/ul[1]/li[1]"]], keys)
    assert {keys[i] for i in li1} == {"/body[1]/ul[1]/li[1]/div[1]", "/body[1]/ul[1]/li[1]/div[1]/b[1]"}
    # two records without text match fully (overlap of empty sets is 1); half the text, half
    assert record_scores([["/x[1]"]], [["/y[1]"]], keys)["record_f1"] == 1.0
    half = record_scores([["/body[1]/ul[1]/li[1]/div[1]/b[1]"]], [["/body[1]/ul[1]/li[1]/div[1]"]], keys)
    assert half["record_f1"] == pytest.approx(0.5)


def _labels_for(walk, xpaths_content):
    xs = walk.rows["xpath"].tolist()
    last = np.asarray(walk.last)
    lab = np.full(len(xs), "S", dtype=object)
    for i, x in enumerate(xs):
        if x in xpaths_content:
            lab[i:last[i] + 1] = "N"
    return lab


def test_grouping_repairs_over_inclusion_and_fragments():
    html = listing(1, 5, hidden=False).encode()
    walk = walk_page(html)
    xp = row_xpaths(html, len(walk.rows))
    gold = [[x] for x in (g[0] for g in gold_of(5, hidden=False))]
    t = "/html/body/div[2]/table[1]/tbody[1]"
    exact = _labels_for(walk, {f"{t}/tr[{k}]" for k in range(1, 6)})
    whole = _labels_for(walk, {t})                                   # tbody labelled content
    cells = _labels_for(walk, {f"{t}/tr[{k}]/td[{c}]" for k in range(1, 6) for c in (1, 2)})
    for lab in (exact, whole, cells):
        recs = [[xp[r] for r in rec] for rec in record_rows(walk, lab)]
        assert record_scores(recs, gold)["record_f1"] == 1.0, recs


def test_generalized_records_of_two_rows():
    """Records of two consecutive rows (title row, details row) separated by spacer rows."""
    body = "".join(f"<tr><td><a href=/{k}>Title {k} here</a></td></tr><tr><td>Details of item {k} text</td></tr>"
                   "<tr><td><hr></td></tr>" for k in range(4))
    html = f"<html><body>{NAV}<table><tbody>{body}</tbody></table></body></html>".encode()
    walk = walk_page(html)
    t = "/html/body/table[1]/tbody[1]"
    lab = _labels_for(walk, {f"{t}/tr[{3 * k + j}]" for k in range(4) for j in (1, 2)})
    recs = record_rows(walk, lab)
    assert len(recs) == 4 and all(len(r) == 2 for r in recs)


def test_a_lone_message_is_no_record_but_a_lone_result_is():
    """A "no results" page: its notice labelled content gives no record; a page with one
    structured result keeps it (the demo site's two kinds of page)."""
    notice = ("<html><body><main><h1>Search results</h1><div class='no-results'>"
              "<p>No results for “plosbor” in Valsim.</p></div></main></body></html>").encode()
    walk = walk_page(notice)
    lab = _labels_for(walk, {"/html/body/main[1]/div[1]/p[1]"})
    assert (lab == "N").sum() == 1 and record_rows(walk, lab) == []
    # the rule, not the labels, drops it
    assert len(record_rows(walk, lab, options=GroupingOptions(min_fields=1))) == 1
    one = ("<html><body><main><ol class='results'><li><a href='/b/1'>The tea of the valley</a> "
           "<span>by Ann Bold</span> <span>2024</span> <span>$12.50</span></li></ol></main></body></html>").encode()
    walk = walk_page(one)
    lab = _labels_for(walk, {"/html/body/main[1]/ol[1]/li[1]"})
    assert [[walk.rows["tag"][r] for r in rec] for rec in record_rows(walk, lab)] == [["li"]]


def test_a_table_with_column_headers_gives_its_rows_as_records_even_one():
    """A result table whose header names its columns: each body row is a record, its cells its
    fields, also on a page with one result, where the row's cells are the only alike siblings
    (they were four records of one field each when the table was labelled content whole). A
    table without a header (a grid of cards, one a cell) keeps its cells as records."""
    head = "<thead><tr><th>Title</th><th>Author</th><th>Year</th><th>Price</th></tr></thead>"
    row = ("<tr><td><a href='/b/{k}'>The tea of the valley {k}</a><br><small>A story of leaves</small></td>"
           "<td>Ann Bold</td><td>20{k:02d}</td><td>$12.50</td></tr>")
    for n in (1, 3):
        html = (f"<html><body>{NAV}<main><table class='results'>{head}<tbody>"
                + "".join(row.format(k=k) for k in range(n)) + "</tbody></table></main></body></html>").encode()
        walk = walk_page(html)
        for content in ("/html/body/main[1]/table[1]", "/html/body/main[1]/table[1]/tbody[1]"):
            recs = record_rows(walk, _labels_for(walk, {content}))
            assert [[walk.rows["tag"][r] for r in rec] for rec in recs] == [["tr"]] * n, (n, content)
    card = "<td><a href='/p/{k}'><img src='/i/{k}.jpg' alt=''>Oak chair model {k}</a><span>$4{k}.00</span></td>"
    grid = (f"<html><body>{NAV}<main><table><tr>" + "".join(card.format(k=k) for k in range(4))
            + "</tr></table></main></body></html>").encode()
    walk = walk_page(grid)
    recs = record_rows(walk, _labels_for(walk, {"/html/body/main[1]/table[1]"}))
    assert [[walk.rows["tag"][r] for r in rec] for rec in recs] == [["td"]] * 4


def test_a_table_body_without_body_rows_stays_as_it_is():
    from hwnoise.extractors.records import _table_rows

    html = (b"<html><body><table><tbody><tr><th>Title</th><th>Year</th></tr></tbody>"
            b"<tbody><tr><td>The tea of the valley</td><td>2024</td></tr></tbody></table></body></html>")
    walk = walk_page(html)
    tags = walk.rows["tag"].tolist()
    head, body = [i for i, t in enumerate(tags) if t == "tbody"]
    row = [i for i, t in enumerate(tags) if t == "tr"][1]
    assert _table_rows(walk, [[head]]) == [[head]]      # it holds the header only: kept
    assert _table_rows(walk, [[body]]) == [[row]]       # it holds the rows: they are the records


def test_mdr_finds_the_data_region_with_the_published_settings():
    assert (K, T) == (10, 0.3)
    html = listing(1, 6, hidden=False).encode()
    walk = walk_page(html)
    xs = walk.rows["xpath"].tolist()
    recs = [[xs[r] for r in rec] for rec in mdr_records(walk)]
    want = [[f"/html/body/div[2]/table[1]/tbody[1]/tr[{k}]"] for k in range(1, 7)]
    assert all(w in recs for w in want)


def test_evaluate_reports_a_record_level_and_extract_records(nexteval_src, tmp_path, capsys):
    (ds_path,) = import_dataset("nexteval", nexteval_src, tmp_path / "d", progress=False)
    out = tmp_path / "ev"
    assert main(["evaluate", str(ds_path), "--methods", "model,mdr,cetd", "--protocol", "cross-site",
                 "--preset", "thesis", "-k", "2", "--no-figures", "--out", str(out)]) == 0
    res = {r["method"]: r for r in json.loads((out / "report.json").read_text())["results"]}
    for m in ("model", "mdr", "cetd"):
        assert 0.0 <= res[m]["record_f1"] <= 1.0 and res[m]["record_pages"] == 4
        assert 0.0 <= res[m]["element_record_f1"] <= res[m]["record_f1"]
    assert res["mdr"]["record_recall"] > 0.5
    assert res["model"]["record_f1"] > 0.7 and res["model"]["content_f1"] > 0.9
    assert "record" in (out / "report.md").read_text()
    # a trained model writes records as JSON lines
    model_dir = tmp_path / "m"
    assert main(["train", str(ds_path), "--preset", "thesis", "--out", str(model_dir), "--no-tree"]) == 0
    page = tmp_path / "new.html"
    page.write_text(listing(9, 4, hidden=False), encoding="utf-8")
    capsys.readouterr()
    assert main(["extract", str(page), "--model", str(model_dir), "--records"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 4 and lines[0]["page"] == "new.html" and lines[0]["record"] == 1
    assert lines[0]["xpath"] == "/body[1]/div[2]/table[1]/tbody[1]/tr[1]"
    assert "Book title 9 0 volume" in lines[0]["text"]
    assert {"xpath", "text"} <= set(lines[0]["fields"][0])


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/datasets/nexteval not present")
def test_real_nexteval_pages_resolve_and_group():
    for pid in ("111", "65"):
        html = (SHARED / "html" / f"{pid}.html").read_bytes()
        records = json.loads((SHARED / "groundTruth" / f"{pid}.json").read_text())
        walk = walk_page(html)
        gold = resolve_records(html, records, n_rows=len(walk.rows))
        found = gold.xpaths - gold.unresolved + gold.hidden   # exists in the parsed tree
        assert found == gold.xpaths, pid                      # every XPath names an element
        labels = page_labels(walk, None, html=html, records=records)
        if gold.unresolved == 0:
            recs = page_records(html, walk, labels)
            g = [[normalize_xpath(x) for x in r] for r in records]
            assert record_scores([r.xpaths for r in recs], g)["record_f1"] > 0.9, pid
            _, keys = row_xpaths(html, len(walk.rows), text_keys=True)
            assert record_scores([r.xpaths for r in recs], g, keys)["record_f1"] > 0.9, pid


def test_external_methods_pickle_for_the_process_pool():
    """evaluate sends methods to worker processes: the adapters must pickle and still work."""
    import pickle

    from hwnoise.extractors.external import available
    from hwnoise.extractors.registry import get_method

    html = listing(3, 4, hidden=False)
    for name in available():
        method = pickle.loads(pickle.dumps(get_method(name)))
        assert isinstance(method.extract_html(html), str), name


def _cards(n: int, wrap: bool = False) -> str:
    """n result cards in a list: title link, author, price; with ``wrap`` each li holds one div
    with all of its text (``li > div``, a single-child chain)."""
    def card(k: int) -> str:
        body = (f"<a href=/b/{k}>The long title of book number {k}</a><span>by Author {k}</span>"
                f"<span>${10 + k}.50</span>")
        return f"<li><div class=card>{body}</div></li>" if wrap else f"<li>{body}</li>"
    return "<ul class=results>" + "".join(card(k) for k in range(n)) + "</ul>"


def _tags(walk, recs):
    return [[walk.rows["tag"][r] for r in rec] for rec in recs]


def test_snapping_makes_whole_records_of_fragments():
    """The model labels only the title of each card (most of its text): each li is a record, whole."""
    html = f"<html><body>{NAV}<main>{_cards(5)}</main>{FOOT}</body></html>".encode()
    walk = walk_page(html)
    u = "/html/body/main[1]/ul[1]"
    lab = _labels_for(walk, {f"{u}/li[{k}]/a[1]" for k in range(1, 6)})
    recs = record_rows(walk, lab)
    assert _tags(walk, recs) == [["li"]] * 5
    xs = walk.rows["xpath"].tolist()
    assert [xs[r[0]] for r in recs] == [f"{u}/li[{k}]" for k in range(1, 6)]
    # the labels alone: a level off
    assert _tags(walk, record_rows(walk, lab, options=GroupingOptions(snap=False))) == [["a"]] * 5


def test_level_of_a_single_child_chain_is_the_repeated_element_or_decisive_labels():
    """The default (``outer``, chosen by NEXT-EVAL's page-grouped folds) names the repeated
    element of a single-child chain; ``labels`` follows labels that name an inner one."""
    from hwnoise.extractors.records import chain_members, level
    from hwnoise.features.record_struct import record_groups

    html = f"<html><body>{NAV}<main>{_cards(4, wrap=True)}</main>{FOOT}</body></html>".encode()
    walk = walk_page(html)
    rows = walk.rows
    parent, chars, last = rows["parent"].to_numpy(), rows["chars"].to_numpy(), np.asarray(walk.last)
    xs = rows["xpath"].tolist()
    li, div = xs.index("/html/body/main[1]/ul[1]/li[2]"), xs.index("/html/body/main[1]/ul[1]/li[2]/div[1]")
    assert chain_members(div, parent, chars, last) == [li, div] == chain_members(li, parent, chars, last)
    _, is_rec = record_groups(parent, rows["tag"].tolist(), last)
    assert level(div, parent, chars, last, is_rec) == li  # the li's are the alike siblings
    u = "/html/body/main[1]/ul[1]"
    inner = _labels_for(walk, {f"{u}/li[{k}]/div[1]" for k in range(1, 5)})  # labels say: the div
    assert _tags(walk, record_rows(walk, inner, options=GroupingOptions(level_rule="labels"))) == [["div"]] * 4
    assert _tags(walk, record_rows(walk, inner)) == [["li"]] * 4
    titles = _labels_for(walk, {f"{u}/li[{k}]/div[1]/a[1]" for k in range(1, 5)})  # labels undecided
    assert _tags(walk, record_rows(walk, titles, options=GroupingOptions(level_rule="labels"))) == [["li"]] * 4
    assert _tags(walk, record_rows(walk, titles)) == [["li"]] * 4


def test_an_article_on_the_chain_is_the_record():
    """The default level rule (``article``): on a single-child chain an ``<article>`` at or below
    the repeated element is the record (HTML's element for a self-contained item: NEXT-EVAL's gold
    names it on 5 of the 6 pages where ``outer`` and it differ); ``outer`` keeps the repeated one."""
    cards = "".join(f'<li><article><h3><a href="/p/{k}">Product {k} title</a></h3>'
                    f"<p>Price {k}.99 and a short description of it</p></article></li>" for k in range(4))
    html = f"<html><body>{NAV}<main><ul>{cards}</ul></main>{FOOT}</body></html>".encode()
    walk = walk_page(html)
    u = "/html/body/main[1]/ul[1]"
    lab = _labels_for(walk, {f"{u}/li[{k}]" for k in range(1, 5)})
    assert _tags(walk, record_rows(walk, lab)) == [["article"]] * 4
    assert _tags(walk, record_rows(walk, lab, options=GroupingOptions(level_rule="outer"))) == [["li"]] * 4
    lab = _labels_for(walk, {f"{u}/li[{k}]/article[1]" for k in range(1, 5)})  # labels on the inner one
    assert _tags(walk, record_rows(walk, lab)) == [["article"]] * 4
    assert _tags(walk, record_rows(walk, lab, options=GroupingOptions(level_rule="outer"))) == [["li"]] * 4


def test_small_regions_beside_the_main_one_are_dropped_and_records_are_not_cut():
    facets = "<ul class=facets>" + "".join(f"<li><a href=/f/{c}>{c}</a></li>" for c in ("Red", "Blue", "Green")) + "</ul>"
    html = f"<html><body>{NAV}<aside>{facets}</aside><main>{_cards(6)}</main>{FOOT}</body></html>".encode()
    walk = walk_page(html)
    xs = walk.rows["xpath"].tolist()
    lab = _labels_for(walk, {"/html/body/aside[1]/ul[1]"} | {f"/html/body/main[1]/ul[1]/li[{k}]" for k in range(1, 7)})
    main = [xs[r[0]] for r in record_rows(walk, lab)]
    assert main == [f"/html/body/main[1]/ul[1]/li[{k}]" for k in range(1, 7)]  # whole cards, no facets
    # the filter, not the grouping, drops them
    assert len(record_rows(walk, lab, options=GroupingOptions(min_rel=0, rich_fields=0))) == 9


def test_regions_the_model_doubts_are_dropped_and_small_confident_ones_kept():
    """The region filter reads the model's content probability where it is given: a second list
    as large as the results (not dropped by size) goes when the model doubts it; small facets
    go by size unless the model is sure of them (``keep_conf``); without probabilities (gold
    labels) every region counts as sure."""
    facets = "<ul class=facets>" + "".join(f"<li><a href=/f/{c}>{c}</a></li>" for c in ("Red", "Blue", "Green")) + "</ul>"
    html = (f"<html><body>{NAV}<aside>{facets}</aside><main>{_cards(6)}</main>"
            f"<div class=related>{_cards(4)}</div>{FOOT}</body></html>").encode()
    walk = walk_page(html)
    xs = walk.rows["xpath"].tolist()
    main_ = {f"/html/body/main[1]/ul[1]/li[{k}]" for k in range(1, 7)}
    related = {f"/html/body/div[2]/ul[1]/li[{k}]" for k in range(1, 5)}
    lab = _labels_for(walk, {"/html/body/aside[1]/ul[1]"} | main_ | related)
    proba = np.where(lab == "N", 0.9, 0.05)
    at = np.asarray([x.startswith("/html/body/div[2]/") for x in xs])
    proba[at & (lab == "N")] = 0.2   # the model doubts the related list

    def heads(recs):
        return {xs[r[0]] for r in recs}

    assert heads(record_rows(walk, lab)) == main_ | related            # no probabilities: size alone
    assert heads(record_rows(walk, lab, proba)) == main_                # the doubted list goes
    assert heads(record_rows(walk, lab, proba, options=GroupingOptions(min_conf=0, rel_conf=0))) == main_ | related
    # the relative filter alone: 0.2 is under 0.4 x the results' 0.9
    assert heads(record_rows(walk, lab, proba, options=GroupingOptions(min_conf=0))) == main_
    assert heads(drop_unsure(walk, record_rows(walk, lab, proba, options=GroupingOptions(min_conf=0, rel_conf=0)),
                             proba, 0.2)) == main_ | related  # 0.2 >= 0.2 x 0.9: kept
    assert drop_unsure(walk, record_rows(walk, lab), None) == record_rows(walk, lab)  # no probabilities
    facets_at = np.asarray([x.startswith("/html/body/aside[1]/") for x in xs])
    sure = proba.copy()
    sure[facets_at & (lab == "N")] = 0.97
    # confident facets kept
    assert len(heads(record_rows(walk, lab, sure, options=GroupingOptions(keep_conf=0.9, rich_fields=0))) - main_) == 3
    assert heads(record_rows(walk, lab, sure)) == main_                 # by default size still drops them
    assert region_conf([int(np.flatnonzero(at)[0])], proba, walk.rows["own_chars"].to_numpy(),
                       np.asarray(walk.last)) == pytest.approx(0.2)


def test_the_model_gives_labels_and_probabilities_in_one_call(nexteval_src, tmp_path):
    """``node_predictions``: the labels ``node_labels`` gives and the content probability the
    records read, which agrees with them (the threshold decides each label)."""
    from hwnoise.extractors.model import ModelMethod

    (ds_path,) = import_dataset("nexteval", nexteval_src, tmp_path / "d", progress=False)
    pages = list(Dataset(ds_path).pages())
    m = ModelMethod(preset="thesis").fit(pages[:3])
    page = pages[3]
    walk = walk_of(page)
    labels, proba = m.node_predictions(page, walk)
    assert (labels == m.node_labels(page, walk)).all() and len(proba) == len(labels)
    assert ((proba >= 0) & (proba <= 1)).all()
    thr = m.model.threshold if m.model.threshold is not None else 0.5
    assert ((proba > thr) <= (labels == "N")).all() and ((proba < thr) <= (labels == "S")).all()
    assert m.node_predictions(page, walk, proba=False)[1] is None
    # a bare page (extract --records): the same labels as label_with_model, and probabilities
    from hwnoise.extractors.model import label_with_model, label_with_proba

    html = listing(9, 4, hidden=False)
    w1, lab1 = label_with_model(m.model, html)
    w2, lab2, p2 = label_with_proba(m.model, html)
    assert (lab1 == lab2).all() and len(p2) == len(w2.rows) == len(lab2)
    assert ((p2 > thr) <= (lab2 == "N")).all()


def test_extract_records_defaults_to_the_shipped_records_model(tmp_path, capsys):
    """``extract --records`` without --model uses the shipped ``records`` model (the records
    preset trained on NEXT-EVAL's record gold), which finds every record of a result page no
    dataset holds, and says which model it used."""
    from hwnoise.extractors.model import load_model

    model = load_model("records")
    assert model.spec.preset == "records" and "rs_main_share" in model.features
    assert model.spec.content_from == "records"  # its content: the records grouped from its labels
    assert set(model.trained_on) == {"nexteval"}
    page = tmp_path / "results.html"
    page.write_text(listing(7, 12, hidden=False), encoding="utf-8")
    gold = gold_of(12, hidden=False)

    def records(*model_args: str) -> tuple[list[list[str]], str]:
        capsys.readouterr()
        assert main(["extract", str(page), "--records", *model_args]) == 0
        got = capsys.readouterr()
        return [[json.loads(x)["xpath"]] for x in got.out.splitlines()], got.err

    default, err = records()
    assert "12 records in 1 page(s) (model records)" in err
    assert default == records("--model", "records")[0]
    assert record_scores(default, gold)["record_f1"] == 1.0
    assert "(model general)" in records("--model", "general")[1]
    from hwnoise import extract_records  # the Python API gives the same records

    got = extract_records(html=page.read_bytes(), page="results.html")
    assert [[r["xpath"]] for r in got] == default and got[0]["page"] == "results.html"


def test_extract_records_of_many_pages_in_processes_skips_what_is_not_html(tmp_path, capsys):
    """``extract --records`` over a folder: every page's records as JSON lines in input order,
    the same with two worker processes, a file that is not HTML skipped (exit status 1)."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for k, n in ((1, 6), (2, 9), (3, 4)):
        (crawl / f"r{k}.html").write_text(listing(k, n, hidden=False), encoding="utf-8")
    (crawl / "r4.html").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))

    def run(*extra: str) -> tuple[int, list[dict], str]:
        capsys.readouterr()
        code = main(["extract", str(crawl), "--records", *extra])
        out, err = capsys.readouterr()
        return code, [json.loads(x) for x in out.splitlines()], err

    code, lines, err = run()
    assert code == 1 and "r4.html" in err and "19 records in 3 page(s), 1 skipped" in err
    by_page: dict[str, list[dict]] = {}
    for x in lines:
        by_page.setdefault(x["page"], []).append(x)
    assert list(by_page) == ["r1.html", "r2.html", "r3.html"]
    for (name, recs), n in zip(by_page.items(), (6, 9, 4)):
        assert [r["record"] for r in recs] == list(range(1, n + 1))
        assert record_scores([[r["xpath"]] for r in recs], gold_of(n, hidden=False))["record_f1"] == 1.0
    assert run("--workers", "2")[:2] == (1, lines)
    # a dataset folder: each page walked with the dataset's query, the same records
    ds = Dataset.create(tmp_path / "ds", name="ds", source="test")
    for k, n in ((1, 6), (2, 9), (3, 4)):
        ds.write_page(f"r{k}", listing(k, n, hidden=False).encode())
    capsys.readouterr()
    assert main(["extract", str(ds.path), "--records"]) == 0
    got = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["page"], x["xpath"], x["text"]) for x in got] == \
        [(x["page"].removesuffix(".html"), x["xpath"], x["text"]) for x in lines]


def test_content_from_records_is_the_records_whole_and_nothing_else():
    """``records_content`` of ``record_rows``: the rows of the records grouped from the labels are content (a
    card whose title alone was labelled content, whole), content outside them (the nav) is not;
    a page without records keeps its labels."""
    from hwnoise.extractors.records import records_content

    def content_in_records(walk, labels):
        return records_content(walk, labels, record_rows(walk, labels))

    html = f"<html><body>{NAV}<main>{_cards(5)}</main>{FOOT}</body></html>".encode()
    walk = walk_page(html)
    u = "/html/body/main[1]/ul[1]"
    lab = _labels_for(walk, {f"{u}/li[{k}]/a[1]" for k in range(1, 6)} | {"/html/body/div[1]"})
    got = content_in_records(walk, lab)
    xs = walk.rows["xpath"].tolist()
    want = np.asarray(["N" if x.startswith(f"{u}/li[") else "S" for x in xs], dtype=object)
    assert (got == want).all()
    assert (lab[xs.index("/html/body/div[1]")] == "N") and got[xs.index("/html/body/div[1]")] == "S"
    nav_only = _labels_for(walk, {"/html/body/div[1]/a[1]"})  # one link: no record
    assert record_rows(walk, nav_only) == [] and (content_in_records(walk, nav_only) == nav_only).all()


def test_the_records_preset_takes_its_content_from_the_records(tmp_path):
    """The records preset's spec says content_from="records", kept through model.json; the
    option --content-from sets it on any preset; a spec without the key reads as "nodes"."""
    import argparse

    from hwnoise.commands._model_options import add_model_options, model_options
    from hwnoise.training.spec import ModelSpec, SpecError, preset_spec, resolve_preset

    assert preset_spec("records").content_from == "records"
    assert {preset_spec(p).content_from for p in ("thesis", "site", "general")} == {"nodes"}
    assert ModelSpec.from_dict({"preset": "general"}).content_from == "nodes"
    with pytest.raises(SpecError, match="content_from"):
        ModelSpec.from_dict({"content_from": "tables"})
    ap = argparse.ArgumentParser()
    add_model_options(ap)
    opts = model_options(ap.parse_args(["--preset", "general", "--content-from", "records"]))
    assert resolve_preset(preset_spec("general"), 3, {k: v for k, v in opts.items() if k != "preset"}
                          ).content_from == "records"


def test_records_the_page_hides_come_too_marked_hidden(tmp_path, capsys):
    """Results paginated in the browser (hidden items of the shown list) and a collapsed list at
    the same tag path are records, marked hidden, in document order, with their fields; a hidden
    copy of a shown record, a hidden item of another shape and a hidden menu elsewhere are not.
    ``hidden=False`` and ``extract --shown-only`` leave them all out."""
    from hwnoise.extractors.records import record_json

    def item(k: int, style: str = "") -> str:
        return (f"<li{style}><a href=/b/{k}>The long title of book number {k}</a><span>by Author {k}</span>"
                f"<span>${10 + k}.50</span></li>")

    hide = " style='display: none'"
    html = (f"<html><body>{NAV}<ul class=menu{hide}><li><a href=/x>Menu entry</a></li></ul><main>"
            f"<ol class=results>{''.join(item(k) for k in range(4))}{item(4, hide)}{item(5, hide)}"
            f"{item(0, hide)}<li{hide}><em>Loading</em></li></ol>"
            f"<ol class=results{hide}>{item(6)}{item(7)}</ol></main>{FOOT}</body></html>").encode()
    walk = walk_page(html)
    lab = _labels_for(walk, {f"/html/body/main[1]/ol[1]/li[{k}]" for k in range(1, 5)})
    shown = page_records(html, walk, lab, hidden=False)
    assert [r.xpaths for r in shown] == [[f"/body[1]/main[1]/ol[1]/li[{k}]"] for k in range(1, 5)]
    got = page_records(html, walk, lab)
    assert [r.xpaths[0] for r in got] == (
        [f"/body[1]/main[1]/ol[1]/li[{k}]" for k in range(1, 7)] + ["/body[1]/main[1]/ol[2]/li[1]",
                                                                    "/body[1]/main[1]/ol[2]/li[2]"])
    assert [r.hidden for r in got] == [False] * 4 + [True] * 4 and all(r.rows == [] for r in got[4:])
    assert got[4].text == "The long title of book number 4 by Author 4 $14.50"
    assert got[4].fields[0] == {"xpath": "/body[1]/main[1]/ol[1]/li[5]/a[1]", "text": "The long title of book number 4"}
    assert record_json("p", 5, got[4])["hidden"] is True and "hidden" not in record_json("p", 1, got[0])
    # the hidden records score as gold that lists them (NEXT-EVAL's does)
    gold = [[r.xpaths[0]] for r in got]
    assert record_scores([r.xpaths for r in shown], gold)["record_recall"] == 0.5
    page = tmp_path / "results.html"
    page.write_bytes(html)
    for flags, n in (((), 8), (("--shown-only",), 4)):
        capsys.readouterr()
        assert main(["extract", str(page), "--records", *flags]) == 0
        got = capsys.readouterr()
        lines = [json.loads(x) for x in got.out.splitlines()]
        assert len(lines) == n and sum(x.get("hidden", False) for x in lines) == n - 4
        assert (f"{n} records (4 of them hidden by their pages) in 1 page(s)" in got.err) == (n == 8)
    # a tag with a prefix on the path (no XPath names it) is matched all the same
    odd = html.replace(b"<main>", b"<main><fb:results>").replace(b"</main>", b"</fb:results></main>")
    walk = walk_page(odd)
    lab = _labels_for(walk, {f"/html/body/main[1]/fb:results[1]/ol[1]/li[{k}]" for k in range(1, 5)})
    assert [r.hidden for r in page_records(odd, walk, lab)] == [False] * 4 + [True] * 4
    assert main(["extract", str(page), "--shown-only"]) != 0  # only with --records
    assert "--shown-only goes with --records" in capsys.readouterr().err


def test_grouping_options_from_a_dict_name_an_unknown_knob():
    from hwnoise.extractors.records import GroupingOptions

    assert GroupingOptions.from_dict({"min_rel": 0, "snap": False}) == GroupingOptions(min_rel=0, snap=False)
    with pytest.raises(ValueError, match=r"unknown grouping option\(s\) 'min_rell'; the options are min_repeat"):
        GroupingOptions.from_dict({"min_rell": 0})


def _grouped_counting_reads(monkeypatch, html: bytes, content: set) -> tuple[list, list, int]:
    """``record_rows`` of ``html`` labelled content at the ``content`` tags: the records, the rows'
    tags and how many array elements the grouping's numpy operations read (its arrays made by
    ``np.asarray`` count the elements each ufunc takes in)."""
    import types

    import hwnoise.extractors.records as records

    read = [0]

    class Counted(np.ndarray):
        def __array_ufunc__(self, ufunc, method, *inputs, **kw):
            read[0] += sum(x.size for x in inputs if isinstance(x, np.ndarray))
            plain = [x.view(np.ndarray) if isinstance(x, Counted) else x for x in inputs]
            return getattr(ufunc, method)(*plain, **kw)

    counted_np = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    counted_np.asarray = lambda *a, **k: np.asarray(*a, **k).view(Counted)
    walk = walk_page(html)
    tags = walk.rows["tag"].tolist()
    labels = np.array([CONTENT if t in content else NOISE for t in tags], dtype=object)
    with monkeypatch.context() as m:
        m.setattr(records, "np", counted_np)
        recs = records.record_rows(walk, labels)
    return recs, tags, read[0]


def _items(n: int) -> str:
    return "".join(f"<li><a href=/x{i}>Item {i} title</a> <span>price {i}</span></li>" for i in range(n))


def test_grouping_a_long_list_reads_each_record_a_bounded_number_of_times(monkeypatch):
    """Each candidate record looked for the content roots inside it among all of the page's
    (a comparison per root: a list of 100,000 results made 10^10); they are found by bisection
    in the sorted roots now. The records are the list's items, as before."""
    n = 3000
    html = f"<html><body><ul>{_items(n)}</ul></body></html>".encode()
    recs, tags, read = _grouped_counting_reads(monkeypatch, html, {"li", "a", "span"})
    assert len(recs) == n and all(tags[r[0]] == "li" for r in recs)
    assert read < 100 * len(tags)        # was 18 million for 9,000 rows: every root per record


def test_records_from_labels_beside_a_long_snapped_list_are_checked_by_bisection(monkeypatch):
    """Each record the labels give was compared with every row of the records snapped to the
    page's structure, to drop those holding one (4,000 of each: 96 million reads for 24,000
    rows); the snapped rows are sorted once and looked up by bisection."""
    n = 2000
    html = (f"<html><body><ul>{_items(n)}</ul><div>"
            + "".join(f"<h3>Heading {i}</h3><p>Para {i} words words</p><b>x{i}</b>" for i in range(n))
            + "</div></body></html>").encode()
    recs, tags, read = _grouped_counting_reads(monkeypatch, html, {"li", "a", "span", "h3", "p", "b"})
    assert sum(tags[r[0]] == "li" for r in recs) == n and len(recs) == 2 * n
    assert read < 100 * len(tags)        # was 24 million for 12,000 rows


def test_a_region_of_one_text_records_beside_records_with_fields_goes():
    """``drop_thin``: a list of links labelled content (each record one text element, a menu or a
    list of popular searches) goes when another region's records hold several fields each (the
    cards: a title, an author, a price); alone on the page, or with ``rich_fields`` 0, it stays."""
    links = "<ul class=popular>" + "".join(
        f"<li><a href=/s/{k}>A popular search for topic {k}</a></li>" for k in range(8)) + "</ul>"
    html = f"<html><body>{NAV}<main>{_cards(6)}</main><div class=more>{links}</div>{FOOT}</body></html>".encode()
    walk = walk_page(html)
    xs = walk.rows["xpath"].tolist()
    cards = {f"/html/body/main[1]/ul[1]/li[{k}]" for k in range(1, 7)}
    popular = {f"/html/body/div[2]/ul[1]/li[{k}]" for k in range(1, 9)}
    lab = _labels_for(walk, cards | popular)

    def heads(recs):
        return {xs[r[0]] for r in recs}

    assert heads(record_rows(walk, lab)) == cards                        # the links go
    assert heads(record_rows(walk, lab, options=GroupingOptions(rich_fields=0))) == cards | popular
    assert heads(drop_thin(walk, record_rows(walk, lab, options=GroupingOptions(rich_fields=0)), 4)) == cards | popular
    only = _labels_for(walk, popular)                                     # no rich region: kept
    assert heads(record_rows(walk, only)) == popular


#: Snapping as before session 34 (each of its three steps off).
_SNAP_BEFORE = dict(box_fields=0, drop_boxes=False, thin_cut=0, thin_cut_any=False)


def _xps(walk, recs):
    xs = walk.rows["xpath"].tolist()
    return [xs[r[0]] for r in recs]


def test_a_card_whose_text_is_a_column_of_one_text_fields_is_one_record():
    """Cards whose body is a column of alike one-text field divs (a description, a duration, two
    links): with ``box_fields`` the fields do not make the card a region (a column of lists), so
    each card is a record, not each of its fields."""
    def card(k: int) -> str:
        fields = (f"<div><span>A long description of course number {k} for parents</span></div>"
                  f"<div><span>Duration: {k + 2} weeks</span></div><div><span>Caregiver {k}</span></div>"
                  f"<div><span>Daily routine {k}</span></div>")
        return f"<div class=card><div class=body>{fields}</div></div>"
    html = (f"<html><body>{NAV}<main><div class=list>{''.join(card(k) for k in range(4))}</div></main>"
            f"{FOOT}</body></html>").encode()
    walk = walk_page(html)
    u = "/html/body/main[1]/div[1]"
    lab = _labels_for(walk, {f"{u}/div[{k}]/div[1]" for k in range(1, 5)})  # the labels name each card's body
    assert len(record_rows(walk, lab, options=GroupingOptions(**_SNAP_BEFORE))) == 16  # each field a record
    want = [f"{u}/div[{k}]" for k in range(1, 5)]
    assert _xps(walk, record_rows(walk, lab, options=GroupingOptions(**{**_SNAP_BEFORE, "box_fields": 3}))) == want
    assert _xps(walk, record_rows(walk, lab)) == want  # the default: box_fields 3


def test_a_member_that_is_a_list_of_rich_records_gives_its_records():
    """Three alike siblings, the third holding a list of six rich records (a title, an author, a
    price each): with ``drop_boxes`` that member is no record and its six items are, beside the
    other two members."""
    def item(k: int) -> str:
        return f"<li><a href=/p/{k}>Product title {k}</a><span>Seller {k}</span><b>{k}.99</b></li>"
    one = "<div class=slot><ul>{}</ul></div>"
    html = (f"<html><body>{NAV}<main><div class=list>{one.format(item(0))}{one.format(item(1))}"
            f"{one.format(''.join(item(k) for k in range(2, 8)))}</div></main>{FOOT}</body></html>").encode()
    walk = walk_page(html)
    u = "/html/body/main[1]/div[1]"
    items = {f"{u}/div[{k}]/ul[1]/li[1]" for k in (1, 2)} | {f"{u}/div[3]/ul[1]/li[{k}]" for k in range(1, 7)}
    lab = _labels_for(walk, items)
    before = {**_SNAP_BEFORE, "box_fields": 3}
    assert _xps(walk, record_rows(walk, lab, options=GroupingOptions(**before))) == [
        f"{u}/div[{k}]" for k in range(1, 4)]  # the list of six one record
    want = [f"{u}/div[1]", f"{u}/div[2]"] + [f"{u}/div[3]/ul[1]/li[{k}]" for k in range(1, 7)]
    assert _xps(walk, record_rows(walk, lab, options=GroupingOptions(**{**before, "drop_boxes": True}))) == want
    assert _xps(walk, record_rows(walk, lab)) == want  # the default: drop_boxes


def test_a_list_of_one_text_fields_does_not_cut_a_record_the_labels_give_whole():
    """A record labelled whole whose text is three alike one-text lines: with ``thin_cut`` and
    ``thin_cut_any`` (any content root; off by default: an article's paragraphs would no longer cut
    a root the model over-includes, tests/test_spec.py) the lines are its fields, not three records."""
    lines = "".join(f"<div><span>Line {k} of the featured offer, exotic destinations</span></div>"
                    for k in range(3))
    html = (f"<html><body>{NAV}<main><section><div class=inner>{lines}</div></section></main>"
            f"{FOOT}</body></html>").encode()
    walk = walk_page(html)
    sec = "/html/body/main[1]/section[1]"
    lab = _labels_for(walk, {sec})
    assert len(record_rows(walk, lab, options=GroupingOptions(thin_cut=0))) == 3
    assert len(record_rows(walk, lab)) == 3  # the default: a lone root is not kept whole by thin_cut
    assert _xps(walk, record_rows(walk, lab, options=GroupingOptions(thin_cut_any=True))) == [sec]

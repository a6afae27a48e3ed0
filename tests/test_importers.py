"""Importers of the shared datasets, the `hwnoise import` command and the L3S label agreement.

Tests marked ``datasets`` read ../shared/datasets and are skipped when it is absent. Small
datasets are imported whole (once per module) and checked against their README's counts.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hwnoise.dataset import Dataset, page_id
from hwnoise.features.importers import FORMATS, ImportFormatError, decode_text, import_dataset
from hwnoise.features.importers import cleaneval as cleaneval_fmt
from hwnoise.features.importers import dragnet as dragnet_fmt
from hwnoise.features.importers import l3s as l3s_fmt
from hwnoise.features.importers import readability as readability_fmt

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
needs_data = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/datasets not present")


def _imported(tmp_path_factory, fmt: str, limit: int | None = None) -> list[Path]:
    if not (SHARED / fmt).is_dir():
        pytest.skip(f"{SHARED / fmt} not present")
    into = tmp_path_factory.mktemp(fmt)
    return import_dataset(fmt, SHARED / fmt, into, limit=limit, progress=False)


def _counts(paths: list[Path]) -> tuple[int, int]:
    pages = sum(len(list((p / "pages").glob("*.html"))) for p in paths)
    gold = sum(len(list((p / "gold").glob("*.txt"))) for p in paths)
    return pages, gold


def _by_source(ds: Dataset, source: str):
    for page in ds.pages():
        if page.submission.get("source") == source:
            return page
    raise AssertionError(f"no page from {source} in {ds.path}")


# -- whole imports, once per module ---------------------------------------------------------

@pytest.fixture(scope="module")
def big9(tmp_path_factory):
    return _imported(tmp_path_factory, "big9")


@pytest.fixture(scope="module")
def cleaneval(tmp_path_factory):
    return _imported(tmp_path_factory, "cleaneval")


@pytest.fixture(scope="module")
def dragnet(tmp_path_factory):
    return _imported(tmp_path_factory, "dragnet")


@pytest.fixture(scope="module")
def l3s(tmp_path_factory):
    return _imported(tmp_path_factory, "l3s")


@pytest.fixture(scope="module")
def readability(tmp_path_factory):
    return _imported(tmp_path_factory, "readability")


@pytest.fixture(scope="module")
def wcxb(tmp_path_factory):
    return _imported(tmp_path_factory, "wcxb")


@pytest.fixture(scope="module")
def swde(tmp_path_factory):
    return _imported(tmp_path_factory, "swde")


@pytest.mark.datasets
@needs_data
def test_big9_one_dataset_per_site_year_with_query_submissions(big9):
    assert len(big9) == 36  # 9 sites x 4 years
    assert _counts(big9) == (360, 360)
    for path in big9:
        ds = Dataset(path)
        assert ds.meta["format"] == "big9" and len(ds.page_ids()) == 10
        assert len({p.site for p in ds.pages()}) == 1
    ds = Dataset(next(p for p in big9 if p.name == "big9-forbes-2005"))
    page = _by_source(ds, "big5-05/html/amd (1).htm")
    assert page.site == "Forbes"
    assert page.fields == [{"name": "q", "value": "amd", "label": "Search"}]
    assert page.id == page_id(page.submission["method"], page.submission["url"], page.fields)
    assert page.read_html() == (SHARED / "big9/big5-05/html/amd (1).htm").read_bytes()
    terms = {(t["term"], t["kind"]): t["submissions"] for t in ds.query()}
    assert page.id in terms[("amd", "value")]


@pytest.mark.datasets
@needs_data
def test_big9_gold_decodes_cp1252_and_utf8(big9):
    ds = Dataset(next(p for p in big9 if p.name.endswith("-2005") and
                      any("pope" in s["source"] for s in Dataset(p).submissions())))
    pope = _by_source(ds, "big5-05/html/pope.htm" if (SHARED / "big9/big5-05/html/pope.htm").exists()
                      else "big5-05/html/pope.html")
    assert "\ufffd" in pope.read_gold()  # README: valid UTF-8 with one U+FFFD
    raw_cp1252 = [p for p in sorted((SHARED / "big9/big5-05/gold").glob("*.txt"))
                  if b"\x92" in p.read_bytes()][0]
    folder = Dataset([p for p in big9 if any(s["source"] == f"big5-05/html/{raw_cp1252.stem}.htm"
                                             for s in Dataset(p).submissions())][0])
    gold = _by_source(folder, f"big5-05/html/{raw_cp1252.stem}.htm").read_gold()
    assert "\u2019" in gold and "\ufffd" not in gold


@pytest.mark.datasets
@needs_data
def test_cleaneval_gold_drops_url_line_and_markers(cleaneval):
    assert len(cleaneval) == 1
    assert _counts(cleaneval) == (299, 299)  # 58 dev + 241 final, all with gold
    ds = Dataset(cleaneval[0])
    p32 = _by_source(ds, "cleaneval-dev/input/32.html")
    assert p32.read_gold() == ""  # its gold holds only the URL line
    p1 = _by_source(ds, "cleaneval-dev/input/1.html")
    raw = cleaneval_fmt.decode_text((SHARED / "cleaneval/cleaneval-dev/GoldStandard/1-cleaned.txt").read_bytes())
    assert raw.lstrip().startswith("URL:") and "<p>" in raw.lower()
    gold = p1.read_gold()
    assert not gold.startswith("URL:") and "URL: " not in gold.split("\n")[0]
    assert "<p>" not in gold.lower() and "<h>" not in gold.lower() and "<l>" not in gold.lower()
    assert p1.submission["url"].startswith("http") and p1.site and "." in p1.site
    assert p1.read_html().lstrip().lower().startswith(b"<text")  # bytes as they are


def test_cleaneval_gold_rules_on_a_made_up_file():
    raw = (b"\xef\xbb\xbfURL: http://example.org/x.html\r\n\r\n   <h>A Heading\r\n   <P>First para\r\n"
           b"   wrapped on.\r\n   <l>item <whatever> kept\r\n")
    assert cleaneval_fmt.gold_text(raw) == "A Heading\nFirst para wrapped on.\nitem <whatever> kept"


@pytest.mark.datasets
@needs_data
def test_dragnet_gold_leaves_comments_out(dragnet):
    assert _counts(dragnet) == (180, 180)
    ds = Dataset(dragnet[0])
    withcomments = sum(dragnet_fmt.split_gold(p.read_bytes())[1] is not None
                       for p in (SHARED / "dragnet/Corrected").glob("*.txt"))
    assert withcomments == 59  # README figure
    for root in ("271", "437"):  # the two misspelled delimiters of the sample
        page = _by_source(ds, f"HTML/{root}.html")
        gold = page.read_gold()
        raw = dragnet_fmt.decode_text((SHARED / f"dragnet/Corrected/{root}.html.corrected.txt").read_bytes())
        assert "COMMENTS" in raw and "COMMENTS" not in gold and "%^&" not in gold
        assert len(gold) < len(raw) and raw.startswith(gold[:200])
    assert "Reblogged this on BECK TECH NEWS" not in _by_source(ds, "HTML/271.html").read_gold()


def test_dragnet_delimiter_variants():
    for delim in (b"!@#$%^&*()  COMMENTS", b"!@#$%^&*() COMMENTS\r", b"!@ $%^&*()  COMMENTS",
                  b"#$%^&*()\tCOMMENTS "):
        main, comments = dragnet_fmt.split_gold(b"Title\n\nBody text.\n" + delim + b"\nme: first!\n")
        assert main == "Title\n\nBody text." and comments == "me: first!"
    assert dragnet_fmt.split_gold(b"No comments here\n")[1] is None


@pytest.mark.datasets
@needs_data
def test_l3s_gold_innermost_label_and_blocks(l3s):
    assert _counts(l3s) == (196, 196)
    ds = Dataset(l3s[0])
    uuid = "16334064-8cc1-4ec6-ba74-e8c976c18913"
    page = _by_source(ds, f"L3S-GN1-20100130203947-00001/original/{uuid}.html")
    gold = page.read_gold()
    # the copyright line is a sel3 span inside a sel2 span: innermost label wins, not gold
    assert "Copyright PA Sport 2008" not in gold
    ann = (SHARED / f"l3s/L3S-GN1-20100130203947-00001/annotated/{uuid}.html").read_bytes()
    assert b"Copyright PA Sport 2008" in ann
    assert gold.count("\n") >= 5  # spans kept apart as blocks
    assert page.url.startswith("http") and page.site and page.http_charset == "utf-8"
    assert page.read_html() == (SHARED / f"l3s/L3S-GN1-20100130203947-00001/original/{uuid}.html").read_bytes()


def test_l3s_gold_on_a_made_up_annotated_page():
    ann = (b"<html><head><style>.x-nc-sel1{}</style><title>T</title></head><body>"
           b"<div><span class='x-nc-sel0'>Menu Home</span></div>"
           b"<h1><span class='x-nc-sel1'>Made-up headline</span></h1>"
           b"<span class='x-nc-sel2'>Body one <span class='x-nc-sel0'>Advert here</span> body two</span>"
           b"<span class='x-nc-sel2'><p><span class='x-nc-sel2'>Nested once</span></p></span>"
           b"<ul><li><span class='x-nc-sel4'>Related story</span></li></ul>"
           b"<script>var x = 'x-nc-sel2';</script></body></html>")
    assert l3s_fmt.gold_text(ann) == "Made-up headline\nBody one\nbody two\nNested once"
    words, content = l3s_fmt.labelled_words(ann)
    assert words[:2] == ["menu", "home"] and not content[:2].any()
    assert dict(zip(words, content))["advert"] == False  # noqa: E712
    assert dict(zip(words, content))["nested"] == True  # noqa: E712


@pytest.mark.datasets
@needs_data
def test_readability_gold_blocks(readability):
    assert _counts(readability) == (106, 106)
    ds = Dataset(readability[0])
    page = _by_source(ds, "test/test-pages/001/source.html")
    gold = page.read_gold()
    lines = gold.splitlines()
    assert lines[0].startswith("So finally you're testing your frontend JavaScript code? Great!")
    assert lines[0].endswith("That's where code coverage might help.")  # one <p>, one line
    assert len(lines) > 20 and "readability-page-1" not in gold
    assert page.http_charset == "utf-8"
    sites = {p.site for p in ds.pages()}
    assert "rtl" in sites  # rtl-1 ... rtl-4 share a site


def test_readability_block_text():
    html = b"<div id='readability-page-1'><h2>Head</h2><p>One <b>bold</b>\n  word</p><ul><li>a</li><li>b</li></ul></div>"
    assert readability_fmt.block_text(html) == "Head\nOne bold word\na\nb"


@pytest.mark.datasets
@needs_data
def test_wcxb_one_dataset_per_page_type(wcxb):
    names = {p.name for p in wcxb}
    assert names == {f"wcxb-{t}" for t in ("listing", "collection", "forum", "product", "article",
                                            "service", "documentation")}
    assert _counts(wcxb) == (398, 382)  # 16 pages have no main_content (subset.tsv)
    forum = Dataset(next(p for p in wcxb if p.name == "wcxb-forum"))
    assert forum.meta["page_type"] == "forum" and "forum" in forum.meta["notes"]
    assert len(forum.page_ids()) == 113
    p4802 = _by_source(forum, "dev/html/4802.html.gz")
    assert p4802.read_gold() is None  # no main_content key
    page = next(iter(forum.pages()))
    assert page.read_html().lstrip()[:1] == b"<"  # gunzipped
    assert page.site and "/" not in page.site


@pytest.mark.datasets
@needs_data
def test_swde_gold_values_and_simulated_submissions(swde):
    assert sorted(p.name for p in swde) == ["swde-booksamillion", "swde-christianbook"]
    assert _counts(swde) == (209, 209)
    cb = Dataset(next(p for p in swde if p.name == "swde-christianbook"))
    assert "simulated" in cb.meta["notes"] and cb.meta["submissions_simulated"] is True
    page = _by_source(cb, "book/book-christianbook(2000)/0117.htm")
    gold = page.read_gold().splitlines()
    assert gold[0] == "Growing Up Yanomamo: Missionary Adventures in the Amazon Rainforest"  # &nbsp; decoded
    assert "&nbsp;" not in page.read_gold() and "<NULL>" not in page.read_gold()
    assert len(gold) >= 5 and any(v.isdigit() and len(v) == 13 for v in gold)  # isbn_13
    assert {f["name"] for f in page.fields} == {"title", "author"}
    assert page.site == "christianbook.com" and page.submission["simulated"] is True


def test_swde_null_values_dropped(tmp_path):
    from hwnoise.features.importers import swde as swde_fmt

    gt = tmp_path / "book-x-author.txt"
    gt.write_bytes("\ufeffbook\tx\tauthor\r\n3\t2\t2\t2\r\n0001\t1\t<NULL>\r\n0002\t2\tA &amp; B\tC\r\n"
                   .encode("utf-8"))
    assert swde_fmt.read_truth(gt) == {"0001": [], "0002": ["A & B", "C"]}


@pytest.mark.datasets
@needs_data
def test_reimport_duplicates_nothing(tmp_path):
    for fmt, limit in (("l3s", 15), ("big9", 25), ("swde", 10)):
        if not (SHARED / fmt).is_dir():
            continue
        first = import_dataset(fmt, SHARED / fmt, tmp_path / fmt, limit=limit, progress=False)
        before = {p: sorted(s["id"] for s in Dataset(p).submissions()) for p in first}
        lines = {p: (p / "submissions.jsonl").read_text().count("\n") for p in first}
        again = import_dataset(fmt, SHARED / fmt, tmp_path / fmt, limit=limit, progress=False)
        assert again == first
        for p in first:
            assert sorted(s["id"] for s in Dataset(p).submissions()) == before[p]
            assert (p / "submissions.jsonl").read_text().count("\n") == lines[p]
            assert len(list((p / "pages").glob("*.html"))) == len(before[p])


# -- plain, the command, errors -------------------------------------------------------------

def _plain_folder(root: Path) -> Path:
    (root / "html").mkdir(parents=True)
    (root / "gold").mkdir()
    (root / "html" / "a.html").write_bytes(
        b"<html><head><link rel='canonical' href='https://www.shop.example/a'></head>"
        b"<body><p>Caf\xe9 record</p></body></html>")
    (root / "html" / "b.htm").write_bytes(b"<html><body><p>No gold here</p></body></html>")
    (root / "gold" / "a.txt").write_bytes(b"Caf\xe9 record\r\n")
    return root


def test_plain_import(tmp_path):
    src = _plain_folder(tmp_path / "mysite")
    paths = import_dataset("plain", src, tmp_path / "out", progress=False)
    assert paths == [tmp_path / "out" / "mysite"]
    ds = Dataset(paths[0])
    pages = {p.submission["name"]: p for p in ds.pages()}
    assert set(pages) == {"a", "b"}
    assert pages["a"].read_gold() == "Café record\n"  # cp1252 fallback, CRLF -> LF
    assert pages["a"].read_html() == (src / "html" / "a.html").read_bytes()
    assert pages["a"].site == "shop.example" and pages["b"].site == "mysite"
    assert pages["b"].read_gold() is None
    meta = json.loads((paths[0] / "dataset.json").read_text())
    assert meta["format"] == "plain" and meta["counts"]["pages"] == 2 and meta["counts"]["gold"] == 1
    assert meta["source"] == str(src.resolve())
    assert (paths[0] / "query.json").exists()
    ids = sorted(ds.page_ids())
    import_dataset("plain", src, tmp_path / "out", progress=False)
    assert sorted(Dataset(paths[0]).page_ids()) == ids
    assert (paths[0] / "submissions.jsonl").read_text().count("\n") == 2


def test_plain_gold_and_query_in_the_encodings_editors_write(tmp_path):
    """A gold or query file saved as UTF-16 (Windows Notepad's "Unicode"), UTF-32, UTF-8 with or
    without a BOM, or cp1252 gives the same text: a UTF-16 file read as cp1252 would be garbage
    between NULs, and the page's labels all noise."""
    gold = "Café crème – 12 € records\r\nsecond line"
    src = tmp_path / "plain"
    (src / "html").mkdir(parents=True)
    (src / "gold").mkdir()
    (src / "query").mkdir()
    for enc in ("utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32", "cp1252"):
        name = enc.replace("-", "")
        (src / "html" / f"{name}.html").write_text(f"<html><body><p>{gold}</p><p>{name}</p></body></html>",
                                                 encoding="utf-8")
        data = gold.encode(enc)
        if enc == "utf-16-be":
            data = b"\xfe\xff" + data  # with its byte-order mark, as an editor writes it
        (src / "gold" / f"{name}.txt").write_bytes(data)
        (src / "query" / f"{name}.txt").write_bytes("crème brûlée".encode(enc if enc != "utf-16-be" else "utf-16"))
    (ds_path,) = import_dataset("plain", src, tmp_path / "out", progress=False)
    pages = list(Dataset(ds_path).pages())
    assert len(pages) == 6
    for page in pages:
        assert page.read_gold() == "Café crème – 12 € records\nsecond line", page.submission["name"]
        assert [f["value"] for f in page.fields if f["name"] == "q"] == ["crème brûlée"]


def test_plain_orphan_gold_and_missing_source_are_clear_errors(tmp_path):
    src = _plain_folder(tmp_path / "s")
    (src / "gold" / "zzz.txt").write_text("x")
    with pytest.raises(ImportFormatError, match="zzz.txt"):
        import_dataset("plain", src, tmp_path / "out", progress=False)
    with pytest.raises(ImportFormatError, match="nowhere"):
        import_dataset("plain", tmp_path / "nowhere", tmp_path / "out", progress=False)
    with pytest.raises(ImportFormatError, match="unknown import format"):
        import_dataset("nope", src, tmp_path / "out", progress=False)
    assert "plain" in FORMATS and "nexteval" in FORMATS and len(FORMATS) == len(set(FORMATS))


def test_import_command(tmp_path, capsys):
    from hwnoise.cli import main

    src = _plain_folder(tmp_path / "cmd")
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "o"), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(tmp_path / "o" / "cmd")
    assert "2 pages" in err and "1 with gold" in err
    assert main(["import", "plain", str(tmp_path / "missing"), "--into", str(tmp_path / "o")]) == 1
    assert "hwnoise: error:" in capsys.readouterr().err


def test_query_json_lists_terms_once(tmp_path):
    from hwnoise.features.importers import simple_query

    subs = [{"id": "a", "fields": [{"name": "q", "value": "Storm storm coast", "label": "Search"}]},
            {"id": "b", "fields": [{"name": "q", "value": "storm", "label": "Search"}]}]
    q = simple_query(subs)
    assert q == [{"term": "q", "kind": "name", "submissions": ["a", "b"]},
                 {"term": "storm", "kind": "value", "submissions": ["a", "b"]},
                 {"term": "coast", "kind": "value", "submissions": ["a"]}]


# -- L3S label agreement --------------------------------------------------------------------

_ORIGINAL = (b"<html><head><title>Made-up news</title></head><body>"
             b"<div id='nav'><a href='/'>Home</a> <a href='/w'>World news</a></div>"
             b"<h1>Storm floods harbour town</h1>"
             b"<p>Heavy rain flooded the harbour on Monday, officials said.</p>"
             b"<p>Residents moved boats inland before the tide rose.</p>"
             b"<div class='ad'>Buy cheap tickets today</div>"
             b"<div id='footer'>Contact us about privacy</div></body></html>")
_ANNOTATED = (b"<html><head><style>.x-nc-sel2{}</style></head><body class='x-nc-linearized'>"
              b"<div id='nav'><a href='/'><span class='x-nc-sel0'>Home</span></a> "
              b"<a href='/w'><span class='x-nc-sel4'>World news</span></a></div>"
              b"<h1><span class='x-nc-sel1'>Storm floods harbour town</span></h1>"
              b"<p><span class='x-nc-sel2'>Heavy rain flooded the harbour on Monday, officials said.</span></p>"
              b"<p><span class='x-nc-sel2'>Residents moved boats inland before the tide rose.</span></p>"
              b"<div class='ad'><span class='x-nc-sel0'>Buy cheap tickets today</span></div>"
              b"<div id='footer'>Contact us about privacy</div></body></html>")


def _tiny_l3s(root: Path) -> Path:
    folder = root / "L3S-GN1-20100130203947-00001"
    (folder / "original").mkdir(parents=True)
    (folder / "annotated").mkdir()
    uuid = "00000000-0000-0000-0000-000000000001"
    (folder / "original" / f"{uuid}.html").write_bytes(_ORIGINAL)
    (folder / "annotated" / f"{uuid}.html").write_bytes(_ANNOTATED)
    (folder / "url-mapping.txt").write_text(f"<urn:uuid:{uuid}>\thttp://news.example/storm\n")
    return root


def test_agreement_scores_by_hand():
    from hwnoise.features.l3s_agreement import agreement_scores

    r = agreement_scores(np.array(list("NNSS")), np.array(list("NSSS")))
    assert r["accuracy"] == 0.75 and r["kappa"] == pytest.approx(0.5)
    assert r["content_precision"] == 1.0 and r["content_recall"] == 0.5
    assert r["confusion"] == {"markup_N_gold_N": 1, "markup_N_gold_S": 1, "markup_S_gold_N": 0,
                              "markup_S_gold_S": 2}


def test_label_agreement_on_a_made_up_page(tmp_path):
    pytest.importorskip("hwnoise.features.walk")
    pytest.importorskip("hwnoise.features.labels")
    from hwnoise.features.l3s_agreement import label_agreement, markup_labels
    from hwnoise.features.walk import walk_page

    src = _tiny_l3s(tmp_path / "l3s")
    walk = walk_page(_ORIGINAL)
    labels = dict(zip(walk.rows["tag"], markup_labels(walk, _ANNOTATED)))
    assert labels["h1"] == "N" and labels["p"] == "N" and labels["a"] == "S"
    by_text = dict(zip(walk.rows["text"], markup_labels(walk, _ANNOTATED)))
    assert by_text["Buy cheap tickets today"] == "S" and by_text["Contact us about privacy"] == "S"
    # the same page from the source folder and from its imported dataset
    from_src = label_agreement(src)
    [ds] = import_dataset("l3s", src, tmp_path / "ds", progress=False)
    from_ds = label_agreement(ds, per_page=True)
    for r in (from_src, from_ds):
        assert r["pages"] == 1 and r["nodes"] == len(walk.rows)
        assert r["accuracy"] == 1.0 and r["kappa"] == pytest.approx(1.0)  # no repeated words
        assert r["content_precision"] == 1.0 and r["content_recall"] == 1.0
    assert from_ds["per_page"][0]["nodes"] == len(walk.rows)


def test_label_agreement_counts_a_misaligned_headline(tmp_path):
    """The headline repeated in a menu link: the markup puts it in <h1> by position; the
    agreement counts exactly the elements where label_page's labels differ from that."""
    pytest.importorskip("hwnoise.features.walk")
    from hwnoise.features.l3s_agreement import label_agreement, markup_labels
    from hwnoise.features.labels import label_page
    from hwnoise.features.walk import walk_page

    src = _tiny_l3s(tmp_path / "l3s")
    folder = src / "L3S-GN1-20100130203947-00001"
    orig = _ORIGINAL.replace(b"World news</a>", b"Storm floods harbour town</a>")
    ann = _ANNOTATED.replace(b"World news</span>", b"Storm floods harbour town</span>")
    (folder / "original" / "00000000-0000-0000-0000-000000000001.html").write_bytes(orig)
    (folder / "annotated" / "00000000-0000-0000-0000-000000000001.html").write_bytes(ann)
    walk = walk_page(orig)
    ref = markup_labels(walk, ann)
    texts = list(walk.rows["text"])
    heads = [i for i, t in enumerate(texts) if t == "Storm floods harbour town"]
    assert [walk.rows["tag"].iloc[i] for i in heads] == ["a", "h1"]
    assert [ref[i] for i in heads] == ["S", "N"]  # by position, not by words
    got = label_page(walk, l3s_fmt.gold_text(ann))
    r = label_agreement(src)
    assert r["nodes"] == len(walk.rows)
    assert r["accuracy"] == pytest.approx(float(np.mean(ref == got)))
    assert r["confusion"]["markup_S_gold_N"] == int(np.sum((ref == "S") & (got == "N")))


def test_plain_gold_and_query_in_utf16_without_a_byte_order_mark(tmp_path):
    """A gold or query file saved as UTF-16 without its byte-order mark (PowerShell's
    ``Out-File -Encoding unicode`` piped elsewhere, ``iconv -t UTF-16LE``) decodes as UTF-16: read
    as UTF-8 it was the text with a NUL after every letter, and every node of the page noise."""
    src = tmp_path / "plain"
    for d in ("html", "gold", "query"):
        (src / d).mkdir(parents=True)
    for enc in ("utf-16-le", "utf-16-be"):
        name = enc.replace("-", "")
        (src / "html" / f"{name}.html").write_text(f"<html><body><p>Café records</p><p>{name}</p></body></html>")
        (src / "gold" / f"{name}.txt").write_bytes("Café records\r\n".encode(enc))
        (src / "query" / f"{name}.txt").write_bytes("oak chair".encode(enc))
    (ds_path,) = import_dataset("plain", src, tmp_path / "out", progress=False)
    for page in Dataset(ds_path).pages():
        assert page.read_gold() == "Café records\n", page.submission["name"]
        assert [f["value"] for f in page.fields if f["name"] == "q"] == ["oak chair"]
    assert decode_text(b"a\x00b") == "a\x00b"                   # not UTF-16: left as it is

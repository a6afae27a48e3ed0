"""Importers against hostile folders (issue 14): a WCXB subset.tsv whose file_id traverses, a
plain folder whose pages are symlinks out of it, a missing truth file; ``features`` reading
pages named by a traversing id in submissions.jsonl."""
from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import shutil
import zlib
from pathlib import Path

import pytest

from hwnoise.cli import main
from hwnoise.dataset import Dataset
from hwnoise.features.importers import ImportFormatError, import_dataset
from hwnoise.features.importers import l3s as l3s_format

PAGE = b"<html><body><div><p>Inside page text that is long enough to count.</p></div></body></html>"


def wcxb_folder(root: Path, file_id: str, split: str = "dev") -> Path:
    (root / "dev" / "html").mkdir(parents=True)
    (root / "dev" / "ground-truth").mkdir()
    with gzip.open(root / "dev" / "html" / "0001.html.gz", "wb") as fh:
        fh.write(PAGE)
    (root / "dev" / "ground-truth" / "0001.json").write_text(json.dumps(
        {"url": "https://a.example/1", "ground_truth": {"main_content": "Inside page text"}}))
    (root / "subset.tsv").write_text(f"split\tfile_id\tdomain\n{split}\t{file_id}\ta.example\n")
    return root


def test_wcxb_file_id_that_traverses_is_refused(tmp_path):
    secret = tmp_path / "secret"
    (secret / "x" / "ground-truth").mkdir(parents=True)
    (secret / "x" / "ground-truth" / "x.json").write_text(json.dumps({"ground_truth": {"main_content": "SECRET"}}))
    src = wcxb_folder(tmp_path / "w" / "src", "../../../secret/x/ground-truth/x")
    with pytest.raises(ImportFormatError, match=r"subset.tsv:2: file_id .* not a plain file name"):
        import_dataset("wcxb", src, tmp_path / "out", progress=False)
    src2 = wcxb_folder(tmp_path / "w2" / "src", "0001", split="../../secret")
    with pytest.raises(ImportFormatError, match=r"subset.tsv:2: split"):
        import_dataset("wcxb", src2, tmp_path / "out2", progress=False)
    assert not any("SECRET" in p.read_text(errors="replace") for p in tmp_path.rglob("*.txt"))


def test_wcxb_missing_truth_file_is_one_line(tmp_path, capsys):
    src = wcxb_folder(tmp_path / "src", "0002")
    code = main(["import", "wcxb", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and "0002.json" in err and "cannot read" in err and "Traceback" not in err


def test_plain_does_not_follow_symlinks_out_of_its_folder(tmp_path, capsys):
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "id_rsa.html").write_text("<p>-----BEGIN PRIVATE KEY----- outside</p>")
    (outside / "gold.txt").write_text("outside gold")
    src = tmp_path / "site"
    (src / "html").mkdir(parents=True)
    (src / "gold").mkdir()
    (src / "html" / "ok.html").write_bytes(PAGE)
    (src / "html" / "inner.html").symlink_to(src / "html" / "ok.html")          # inside: fine
    os.symlink(outside / "id_rsa.html", src / "html" / "key.html")
    os.symlink(outside / "gold.txt", src / "gold" / "ok.txt")
    paths = import_dataset("plain", src, tmp_path / "out", progress=False)
    ds = Dataset(paths[0])
    names = sorted(p.submission["name"] for p in ds.pages())
    assert names == ["inner", "ok"]
    assert all(b"PRIVATE KEY" not in p.read_html() for p in ds.pages())
    assert all(p.read_gold() is None for p in ds.pages())                          # gold was outside
    err = capsys.readouterr().err
    assert "key.html" in err and "symlink" in err and "ok.txt" in err


def test_features_never_reads_a_page_outside_the_dataset(tmp_path, capsys):
    ds = Dataset.create(tmp_path / "w" / "ds")
    ds.write_page("good", PAGE)
    (tmp_path / "w" / "stolen.html").write_bytes(b"<html><body><p>STOLEN outside words</p></body></html>")
    ds.submissions_path.write_text(json.dumps({"id": "good", "url": "http://a.example/1"}) + "\n"
                                   + json.dumps({"id": "../../stolen", "url": "http://a.example/2"}) + "\n")
    assert main(["features", str(ds.path)]) == 0
    feats = ds.read_features()
    assert set(feats["page"].astype(str)) == {"good"}


def test_plain_page_cut_short_is_skipped_and_named(tmp_path, capsys):
    """A gzipped page cut short (``b.html.gz``) stopped the whole import there (exit 1, the pages
    after it not imported): one truncated file of a crawl of 100,000 pages lost the rest. It is
    skipped as a page that is no HTML is: named, with why, on stderr, counted in the summary and
    in dataset.json, and the pages before and after it are imported (exit 0); once the page is
    mended, a rerun adds it."""
    src = tmp_path / "crawl"
    (src / "html").mkdir(parents=True)
    (src / "html" / "a.html").write_bytes(PAGE)
    whole = gzip.compress(PAGE.replace(b"Inside", b"Second") * 50)
    (src / "html" / "b.html.gz").write_bytes(whole[: len(whole) // 2])
    (src / "html" / "c.html").write_bytes(PAGE.replace(b"Inside", b"Third"))
    code = main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    named = "html/b.html.gz (the gzip data is cut short: a truncated file)"
    assert code == 0 and "Traceback" not in err, err
    assert f"import crawl: 1 page file(s) skipped as unreadable: {named}" in err, err
    assert "2 pages" in err.splitlines()[-1] and "1 page file(s) skipped as unreadable" in err.splitlines()[-1]
    ds = Dataset(tmp_path / "out" / "crawl")
    assert [p.submission["name"] for p in ds.pages()] == ["a", "c"]
    assert ds.meta["counts"]["unreadable"] == 1 and ds.meta["import_problems"] == {"unreadable": [named]}
    (src / "html" / "b.html.gz").write_bytes(whole)
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 0
    assert sorted(s["name"] for s in Dataset(ds.path).submissions()) == ["a", "b", "c"]
    assert "unreadable" not in Dataset(ds.path).meta["counts"]


@pytest.mark.parametrize("extra,want", [
    ({"html/a.htm": PAGE}, r"a\.html?: the same page name 'a' as a\.html?,"),
    ({"html/a.html.gz": gzip.compress(PAGE)}, r"a.html.gz: the same page name 'a' as a.html"),
    ({"records/aa.json": b"[]"}, r"records/aa.json: records file without a page html/aa.html"),
    ({"query/b.txt": b"tea"}, r"query/b.txt: query file without a page html/b.html"),
    ({"gold/c.txt": b"x", "gold/d.txt": b"y"}, r"gold/c.txt: gold file without a page html/c.html \(and 1 more\)"),
])
def test_plain_names_that_clash_or_name_no_page_are_refused(tmp_path, capsys, extra, want):
    """``a.html`` beside ``a.htm`` (or ``a.html.gz``) were two pages of one name, and one gold file
    was silently both pages' gold; a records or query file naming no page (a typo) was silently
    ignored, its page left without node gold (an orphan gold file was already refused)."""
    src = tmp_path / "crawl"
    (src / "html").mkdir(parents=True)
    (src / "html" / "a.html").write_bytes(PAGE)
    for name, data in extra.items():
        (src / name).parent.mkdir(exist_ok=True)
        (src / name).write_bytes(data)
    code = main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and re.search(want, err) and "Traceback" not in err, err


def big9_folder(root: Path, rows: str) -> Path:
    (root / "big5-05" / "html").mkdir(parents=True)
    (root / "big5-05" / "html" / "amd (1).htm").write_bytes(PAGE)
    (root / "pages.tsv").write_bytes(b"folder\thtml_file\tgold_file\tsite\tyear\tquery\tsite_rule\turl\twayback_ts\n"
                                     + rows.encode("latin-1"))
    return root


@pytest.mark.parametrize("row, says", [
    ("big5-05\tamd (1).htm\t\tForbes", "pages.tsv:2: no query, url, year (the row is cut short)"),
    ("big5-05\tamd (1).htm\t\tForbes\tMMV\tamd\twayback\t\t\n", "pages.tsv:2: year 'MMV' is not a year"),
    ("big5-05\tamd (1).htm\t\tForbes\t2005\tcaf\xe9\twayback\t\t\n", "pages.tsv: not UTF-8 text"),
])
def test_big9_pages_tsv_cut_short_or_garbled_is_one_line(tmp_path, capsys, row, says):
    """A pages.tsv whose last row is cut short, whose year is not a number, or saved as latin-1:
    one line naming the file (and row), not a TypeError/ValueError/UnicodeDecodeError traceback."""
    src = big9_folder(tmp_path / "b9", row)
    assert main(["import", "big9", str(src), "--into", str(tmp_path / "out"), "-q"]) == 1
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_big9_row_that_leads_out_of_its_folder_is_refused(tmp_path):
    """A pages.tsv row whose folder or file name holds ``../`` (or is absolute) read a file outside
    SRC into the dataset; it is refused, naming the row, as wcxb's file_id is."""
    secret = tmp_path / "secret" / "html"
    secret.mkdir(parents=True)
    (secret / "s.htm").write_bytes(b"<html><body><p>SECRET outside</p></body></html>")
    for row in ("../secret\ts.htm\t\tForbes\t2005\tx\twayback\t\t\n",
                f"big5-05\t{secret / 's.htm'}\t\tForbes\t2005\tx\twayback\t\t\n",
                "big5-05\tamd (1).htm\t../../../secret/html/s.htm\tForbes\t2005\tx\twayback\t\t\n"):
        out = tmp_path / "out"
        src = big9_folder(tmp_path / "w" / "b9", "big5-05\tamd (1).htm\t\tForbes\t2005\tamd\twayback\t\t\n" + row)
        with pytest.raises(ImportFormatError, match=r"pages.tsv:3: .* leads out of .*; refused"):
            import_dataset("big9", src, out, progress=False)
        assert not any(b"SECRET" in p.read_bytes() for p in out.rglob("*") if p.is_file())
        shutil.rmtree(tmp_path / "w")


L3S_UUID = "0a0a0a0a-1111-2222-3333-444444444444"


def tiny_source(fmt: str, root: Path) -> tuple[Path, Path, Path]:
    """A source folder of ``fmt`` in its upstream layout with one page and its gold; returns
    (SRC, the page file, the gold file)."""
    page_gold = {
        "cleaneval": ("cleaneval-dev/input/1.html", "cleaneval-dev/GoldStandard/1-cleaned.txt",
                      b'<text id="http://a.example/1">' + PAGE + b"</text>", b"URL: http://a.example/1\n<p>Inside page text"),
        "dragnet": ("HTML/1.html", "Corrected/1.html.corrected.txt", PAGE, b"Inside page text"),
        "l3s": (f"original/{L3S_UUID}.html", f"annotated/{L3S_UUID}.html", PAGE,
                b'<html><body><span class="x-nc-sel2">Inside page text</span></body></html>'),
        "readability": ("test/test-pages/a/source.html", "test/test-pages/a/expected.html", PAGE,
                        b"<div><p>Inside page text</p></div>"),
        "swde": ("book/book-shop(1)/0001.htm", "groundtruth/book/book-shop-title.txt",
                 b'\xef\xbb\xbf<base href="http://shop.example/1"/>\r\n' + PAGE,
                 b"\xef\xbb\xbfbook\tshop\ttitle\r\n1\t1\t1\t1\r\n0001\t1\tInside page\r\n"),
        "nexteval": ("html/1.html", "groundTruth/1.json", PAGE, b'[["/body[1]/div[1]/p[1]"]]'),
    }
    page_rel, gold_rel, page, gold = page_gold[fmt]
    for rel, data in ((page_rel, page), (gold_rel, gold)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    if fmt == "l3s":
        (root / "url-mapping.txt").write_text(f"<urn:uuid:{L3S_UUID}>\thttp://a.example/1\n")
    if fmt == "swde":
        for attr in ("author", "isbn_13", "publisher", "publication_date"):
            (root / f"groundtruth/book/book-shop-{attr}.txt").write_bytes(
                f"book\tshop\t{attr}\r\n1\t1\t1\t1\r\n0001\t0\t<NULL>\r\n".encode())
    return root, root / page_rel, root / gold_rel


SECRET_PAGE = b"<html><body><p>SECRET outside words</p></body></html>"
TINY_FORMATS = ["cleaneval", "dragnet", "l3s", "readability", "swde", "nexteval"]


@pytest.mark.parametrize("which", ["page", "gold", "folder"])
@pytest.mark.parametrize("fmt", TINY_FORMATS)
def test_a_page_or_gold_that_is_a_symlink_out_of_src_is_refused(tmp_path, capsys, fmt, which):
    """A page or gold file (or the page's folder) that is a symlink out of SRC copied the file it
    points to into the dataset (a folder handed over could carry ~/.ssh into it); it is refused
    in one line naming it, before anything is written, as wcxb's and plain's are."""
    src, page, gold = tiny_source(fmt, tmp_path / "src")
    outside = tmp_path / "outside"
    outside.mkdir()
    target = page if which == "page" else gold
    if which == "folder":
        shutil.move(page.parent, outside / "moved")
        os.symlink(outside / "moved", page.parent)
    else:
        (outside / target.name).write_bytes(SECRET_PAGE if target is page else
                                            gold.read_bytes().replace(b"Inside", b"SECRET"))
        target.unlink()
        os.symlink(outside / target.name, target)
    out = tmp_path / "out"
    code = main(["import", fmt, str(src), "--into", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and "symlink out of" in err and "Traceback" not in err, err
    assert (page.name if which != "gold" else gold.name) in err
    assert not any(p.is_file() for p in out.rglob("*")) if out.exists() else True


@pytest.mark.parametrize("fmt", TINY_FORMATS)
def test_tiny_sources_import(tmp_path, fmt):
    """The tiny sources the hostile tests damage are read whole: one page with its gold."""
    src, _page, _gold = tiny_source(fmt, tmp_path / "src")
    paths = import_dataset(fmt, src, tmp_path / "out", progress=False)
    pages = [p for path in paths for p in Dataset(path).pages()]
    assert len(pages) == 1 and "Inside page" in pages[0].read_gold()


@pytest.mark.parametrize("truth, says", [
    ({"ground_truth": ["Inside page text"]}, "ground_truth is a list, not an object"),
    ({"ground_truth": {"main_content": 5}}, "ground_truth.main_content is a number, not text"),
    ({"ground_truth": {"main_content": "x", "with": "Inside"}}, "ground_truth.with is text, not a list of text"),
    ({"url": ["https://a.example/1"], "ground_truth": {"main_content": "x"}}, "url is a list, not text"),
    ({"_internal": "listing", "ground_truth": {"main_content": "x"}}, "_internal is text, not an object"),
    ({"_internal": {"page_type": {"primary": 3}}, "ground_truth": {"main_content": "x"}},
     "_internal.page_type.primary is a number, not text"),
])
def test_wcxb_ground_truth_of_the_wrong_json_types_is_one_line(tmp_path, capsys, truth, says):
    """A ground truth whose keys have the wrong JSON type (a hand edit) was an AttributeError or
    TypeError traceback, with the pages before it half written, or (main_content a number)
    silently a page without gold; it is one line naming the file and the key."""
    src = wcxb_folder(tmp_path / "src", "0001")
    (src / "dev" / "ground-truth" / "0001.json").write_text(json.dumps(truth))
    code = main(["import", "wcxb", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and "0001.json: " + says in err and "Traceback" not in err, err
    assert not list((tmp_path / "out").rglob("*.html"))


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_wcxb_subset_tsv_not_in_utf8_is_one_line(tmp_path, capsys, encoding):
    """A subset.tsv saved as latin-1 (a domain with an accent) or UTF-16 (Windows "Unicode") was
    a UnicodeDecodeError traceback; it is one line naming the file, as big9's pages.tsv is."""
    src = wcxb_folder(tmp_path / "src", "0001")
    (src / "subset.tsv").write_bytes("split\tfile_id\tdomain\ndev\t0001\tcaf\xe9.example\n".encode(encoding))
    code = main(["import", "wcxb", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and "subset.tsv: not UTF-8 text" in err and "Traceback" not in err, err


def test_wcxb_page_listed_twice_in_subset_tsv_is_refused(tmp_path, capsys):
    """A subset.tsv row pasted twice imported the page twice, the second copy under an ID of its
    own (its URL given a #source fragment): a duplicate in every fold. It is refused naming both
    lines; without the row, the page is imported once."""
    src = wcxb_folder(tmp_path / "src", "0001")
    rows = (src / "subset.tsv").read_text()
    (src / "subset.tsv").write_text(rows + rows.splitlines()[1] + "\n")
    code = main(["import", "wcxb", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and "subset.tsv:3: page dev/0001 again (first on line 2)" in err, err
    (src / "subset.tsv").write_text(rows)
    paths = import_dataset("wcxb", src, tmp_path / "out", progress=False)
    assert [len(Dataset(p).submissions()) for p in paths] == [1]


def test_wcxb_page_that_inflates_past_the_limit_is_refused(tmp_path, capsys):
    """A dev/html/ID.html.gz of a few hundred KB that inflates past pagefiles.MAX_INFLATED (a zip
    bomb, or a file that is no page) was inflated whole into memory and written as the page;
    it is skipped naming it, as plain skips it (one reader of page files for both), and the
    page before it is kept."""
    from hwnoise.pagefiles import MAX_INFLATED

    src = wcxb_folder(tmp_path / "src", "0001")
    (src / "dev" / "ground-truth" / "0002.json").write_text(json.dumps({"ground_truth": {"main_content": "x"}}))
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"<p>" + b" " * (1 << 20)
    bomb = b"".join(z.compress(block) for _ in range((MAX_INFLATED >> 20) + 2)) + z.flush()
    (src / "dev" / "html" / "0002.html.gz").write_bytes(bomb)
    (src / "subset.tsv").write_text("split\tfile_id\tdomain\ndev\t0001\ta.example\ndev\t0002\ta.example\n")
    code = main(["import", "wcxb", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 0 and "skipped as unreadable: dev/html/0002.html.gz (inflates to more than" in err, err
    assert "Traceback" not in err, err
    pages = list((tmp_path / "out").rglob("pages/*.html"))
    assert len(pages) == 1 and pages[0].stat().st_size == len(PAGE)


@pytest.mark.parametrize("edit, says", [
    (lambda t: t[:-8], "book-shop-title.txt:4: the last line has no line end"),
    (lambda t: t.replace(b"0002\t1\t", b"0002\t2\t"), "book-shop-title.txt:4: page 0002 says 2 value(s) and has 1"),
    (lambda t: t.replace(b"0002\t", b"0001\t"), "book-shop-title.txt:4: page 0001 again (first on line 3)"),
    (lambda t: t[:t.index(b"0002")], "book-shop-title.txt: no row for page 0002 (book/book-shop(1)/0002.htm)"),
    (None, "book-shop-title.txt: missing, beside the other ground truth of shop"),
])
def test_swde_ground_truth_cut_short_or_mistyped_is_one_line(tmp_path, capsys, edit, says):
    """A ground-truth file cut short (mid-value, or before a page's row), a row whose count is not
    its number of values, a page given twice, or an attribute's file missing gave pages a cut
    title, another page's title, or none, silently (and since a page's ID holds its title, a
    rerun once mended added each page again); each is one line naming the file (and line), and
    nothing is written."""
    src, page, gold = tiny_source("swde", tmp_path / "src")
    (page.parent / "0002.htm").write_bytes(page.read_bytes().replace(b"shop.example/1", b"shop.example/2"))
    for attr in ("title", "author", "isbn_13", "publisher", "publication_date"):
        f = src / f"groundtruth/book/book-shop-{attr}.txt"
        f.write_bytes(f.read_bytes() + (b"0002\t1\tSecond book\r\n" if attr == "title" else b"0002\t0\t<NULL>\r\n"))
    if edit is None:
        gold.unlink()
    else:
        gold.write_bytes(edit(gold.read_bytes()))
    code = main(["import", "swde", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and says in err and "Traceback" not in err, err
    assert not list((tmp_path / "out").rglob("*.html"))


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16"])
def test_swde_ground_truth_in_another_encoding_is_read(tmp_path, encoding):
    """A ground-truth file saved as cp1252 gave values with U+FFFD for each accented letter
    (decoded as UTF-8, errors replaced), and one in UTF-16 was refused as 'expected PAGE_ID...'
    on line 3; both are decoded as gold files are (decode_text)."""
    src, _page, gold = tiny_source("swde", tmp_path / "src")
    gold.write_bytes("book\tshop\ttitle\r\n1\t1\t1\t1\r\n0001\t1\tCaf\u00e9 Cr\u00e8me\r\n".encode(encoding))
    paths = import_dataset("swde", src, tmp_path / "out", progress=False)
    (page,) = Dataset(paths[0]).pages()
    assert page.read_gold() == "Caf\u00e9 Cr\u00e8me"


@pytest.mark.parametrize("mapping, says", [
    (f"<urn:uuid:{L3S_UUID}>\thttp://a.exa", "url-mapping.txt:2: the last line has no line end"),
    ("", f"url-mapping.txt: no URL for {L3S_UUID} (original/{L3S_UUID}.html)"),
    (f"<urn:uuid:{L3S_UUID}>\thttp://a.example/1\n<urn:uuid:{L3S_UUID}>\thttp://b.example/\n",
     f"url-mapping.txt:3: {L3S_UUID} again (first on line 2)"),
])
def test_l3s_url_mapping_cut_short_or_doubled_is_one_line(tmp_path, capsys, mapping, says):
    """A url-mapping.txt cut short (mid-URL, or before a page's line) or giving a page twice
    imported the page under a cut URL, a 'source:' stand-in, or the later URL, silently; the
    page ID being made from the URL, a rerun once mended added the page a second time. Each is
    one line naming the file (and line), before anything is written."""
    src, _page, _gold = tiny_source("l3s", tmp_path / "src")
    (src / "url-mapping.txt").write_text("<urn:uuid:ffffffff-0000-0000-0000-000000000000>\thttp://c.example/\n"
                                         + mapping)
    code = main(["import", "l3s", str(src), "--into", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and says in err and "Traceback" not in err, err
    assert not list((tmp_path / "out").rglob("*.html"))


@pytest.mark.parametrize("cut", [0, 40])
def test_l3s_annotated_page_cut_short_is_refused(tmp_path, capsys, cut):
    """An annotated page cut short (or empty) gave the page less gold than the annotators marked,
    or none, silently; it is one line naming the file, the page before it kept, and a rerun once
    it is restored adds only the page that was missing."""
    src, page, gold = tiny_source("l3s", tmp_path / "src")
    second = "1b1b1b1b-1111-2222-3333-444444444444"
    (src / "original" / f"{second}.html").write_bytes(PAGE.replace(b"Inside", b"Second"))
    whole = gold.read_bytes().replace(b"Inside", b"Second")
    (src / "annotated" / f"{second}.html").write_bytes(whole[:cut])
    with open(src / "url-mapping.txt", "a") as fh:
        fh.write(f"<urn:uuid:{second}>\thttp://a.example/2\n")
    out = tmp_path / "out"
    code = main(["import", "l3s", str(src), "--into", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and f"{second}.html: does not end with </html>" in err and "Traceback" not in err, err
    assert [s["uuid"] for s in Dataset(out / "l3s").submissions()] == [L3S_UUID]
    (src / "annotated" / f"{second}.html").write_bytes(whole)
    assert main(["import", "l3s", str(src), "--into", str(out), "-q"]) == 0
    subs = Dataset(out / "l3s").submissions()
    assert [s["uuid"] for s in subs] == [L3S_UUID, second]
    assert Dataset(out / "l3s").gold_file(subs[1]["id"]).read_text() == "Second page text"


def _second_page(fmt: str, src: Path, page: Path, gold: Path) -> tuple[Path, Path]:
    """Another page and gold file beside ``tiny_source``'s, named as ``fmt`` names them (not
    written); for l3s its URL is added to url-mapping.txt."""
    if fmt == "l3s":
        second = "1b1b1b1b-1111-2222-3333-444444444444"
        with open(src / "url-mapping.txt", "a") as fh:
            fh.write(f"<urn:uuid:{second}>\thttp://a.example/2\n")
        return page.with_name(f"{second}.html"), gold.with_name(f"{second}.html")
    if fmt == "readability":
        return page.parent.with_name("b") / page.name, gold.parent.with_name("b") / gold.name
    return page.with_name(page.name.replace("1", "2", 1)), gold.with_name(gold.name.replace("1", "2", 1))


def _import_says(tmp_path, capsys, fmt: str, src: Path) -> tuple[str, dict]:
    """``hwnoise import`` of ``src`` (must succeed): its stderr, and its dataset.json."""
    out = tmp_path / "out"
    code = main(["import", fmt, str(src), "--into", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    return err, json.loads((out / fmt / "dataset.json").read_text())


@pytest.mark.parametrize("fmt", ["cleaneval", "dragnet", "l3s", "nexteval", "readability"])
def test_gold_file_without_its_page_is_reported(tmp_path, capsys, fmt):
    """A gold file whose page is gone (a damaged copy) was ignored without a word; it is said on
    stderr and in the summary, counted and named in dataset.json, and the other pages imported."""
    src, page, gold = tiny_source(fmt, tmp_path / "src")
    _page2, gold2 = _second_page(fmt, src, page, gold)
    gold2.parent.mkdir(parents=True, exist_ok=True)
    gold2.write_bytes(gold.read_bytes())
    err, meta = _import_says(tmp_path, capsys, fmt, src)
    rel = gold2.relative_to(src).as_posix()
    assert f"1 gold file(s) naming no page, not imported: {rel}" in err, err
    assert "1 pages, 1 with gold" in err and "1 gold file(s) naming no page" in err.splitlines()[-1], err
    assert meta["counts"]["gold_orphans"] == 1 and meta["import_problems"] == {"gold_orphans": [rel]}
    assert meta["counts"]["pages"] == 1


def test_big9_gold_file_no_row_names_is_reported(tmp_path, capsys):
    """big9 left a gold file that no pages.tsv row names out without a word (the other formats
    report it): one beside a page whose row gives no gold file goes in that page's dataset's
    report; one beside no page is said for the import. The pages are imported as before."""
    src = big9_folder(tmp_path / "src", "big5-05\tamd (1).htm\tamd (1).txt\tForbes\t2005\tamd\t\t\t\n"
                                        "big5-05\tbbc (1).htm\t\tBBC\t2005\tbbc\t\t\t\n")
    (src / "big5-05" / "html" / "bbc (1).htm").write_bytes(PAGE)
    (src / "big5-05" / "gold").mkdir()
    for name in ("amd (1).txt", "bbc (1).txt", "zzz (9).txt"):
        (src / "big5-05" / "gold" / name).write_bytes(b"Inside page text")
    out = tmp_path / "out"
    assert main(["import", "big9", str(src), "--into", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert "import big9: 1 gold file(s) naming no page, not imported: big5-05/gold/zzz (9).txt" in err, err
    assert "big9-bbc-2005: 1 gold file(s) naming no page, not imported: big5-05/gold/bbc (1).txt" in err, err
    bbc = json.loads((out / "big9-bbc-2005" / "dataset.json").read_text())
    assert bbc["counts"]["gold_orphans"] == 1 and bbc["import_problems"] == {"gold_orphans": ["big5-05/gold/bbc (1).txt"]}
    forbes = json.loads((out / "big9-forbes-2005" / "dataset.json").read_text())
    assert "import_problems" not in forbes and forbes["counts"]["gold"] == 1 and bbc["counts"]["pages"] == 1


@pytest.mark.parametrize("fmt", ["cleaneval", "dragnet", "l3s", "readability", "big9"])
def test_page_without_its_gold_file_is_reported(tmp_path, capsys, fmt):
    """A page whose gold file is missing was imported without gold and without a word; it is
    still imported, and the missing gold file is said on stderr, counted and named in
    dataset.json; a rerun once the file is restored clears the report."""
    if fmt == "big9":
        src = big9_folder(tmp_path / "src", "big5-05\tamd (1).htm\tamd (1).txt\tForbes\t2005\tamd\t\t\t\n")
        gold, whole = src / "big5-05" / "gold" / "amd (1).txt", b"Inside page text"
        out_name = "big9-forbes-2005"
    else:
        src, page, gold = tiny_source(fmt, tmp_path / "src")
        whole = gold.read_bytes()
        page2, gold = _second_page(fmt, src, page, gold)
        page2.parent.mkdir(parents=True, exist_ok=True)
        page2.write_bytes(PAGE.replace(b"Inside", b"Second"))
        out_name = fmt
    out = tmp_path / "out"
    code = main(["import", fmt, str(src), "--into", str(out), "-q"])
    err = capsys.readouterr().err
    meta = json.loads((out / out_name / "dataset.json").read_text())
    rel = gold.relative_to(src).as_posix()
    assert code == 0 and f"1 page(s) imported without gold: their gold file is missing: {rel}" in err, err
    assert "their gold file is missing" in err.splitlines()[-1], err
    assert meta["counts"]["gold_missing"] == 1 and meta["import_problems"] == {"gold_missing": [rel]}
    gold.parent.mkdir(parents=True, exist_ok=True)
    gold.write_bytes(whole)
    assert main(["import", fmt, str(src), "--into", str(out), "-q"]) == 0
    assert "missing" not in capsys.readouterr().err
    meta = json.loads((out / out_name / "dataset.json").read_text())
    assert "gold_missing" not in meta["counts"] and "import_problems" not in meta


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_l3s_annotated_page_in_utf16_is_read(tmp_path, encoding):
    """An annotated page saved as UTF-16 (with or without a byte-order mark) was parsed as UTF-8:
    no span was found, so the page got an empty gold (or was refused as cut short); it is decoded
    as a text file a person gives is (``decode.decode_text``), and its gold is the spans' text."""
    src, _page, gold = tiny_source("l3s", tmp_path / "src")
    gold.write_bytes(gold.read_bytes().decode("utf-8").replace(">I", ">Caf\u00e9 I").encode(encoding))
    paths = import_dataset("l3s", src, tmp_path / "out", progress=False)
    [page] = Dataset(paths[0]).pages()
    assert page.read_gold() == "Caf\u00e9 Inside page text"
    words, content = l3s_format.labelled_words(gold.read_bytes())  # what the label agreement reads
    assert words == ["café", "inside", "page", "text"] and content.all()


@pytest.mark.parametrize("fmt, data, why", [
    ("dragnet", b"", "an empty file"),
    ("dragnet", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "a PNG image"),
    ("l3s", b"\x00\x01\x02 some binary bytes \xff\xfe\x03", "binary data"),
    ("readability", b"  \r\n\t", "an empty file"),
    ("cleaneval", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF document"),
    ("nexteval", b"just words, no markup at all", "text without HTML markup"),
], ids=["empty", "png", "binary", "blank", "pdf", "text"])
def test_page_that_is_no_html_is_skipped_and_named(tmp_path, capsys, fmt, data, why):
    """An empty page, an image, a PDF or binary bytes saved as a page was imported as it was (a
    page the features stage then skips, gold and all); it is skipped by the features stage's
    rule (``decode.sniff_html``), said on stderr and in the summary, and counted and named in
    dataset.json; the other pages are imported."""
    src, page, gold = tiny_source(fmt, tmp_path / "src")
    page2, gold2 = _second_page(fmt, src, page, gold)
    for path, content in ((page2, data), (gold2, gold.read_bytes())):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    err, meta = _import_says(tmp_path, capsys, fmt, src)
    named = f"{page2.relative_to(src).as_posix()} ({why})"
    assert f"1 page(s) skipped as not HTML: {named}" in err, err
    assert "1 pages, 1 with gold" in err and "skipped as not HTML" in err.splitlines()[-1], err
    assert meta["counts"]["not_html"] == 1 and meta["import_problems"] == {"not_html": [named]}
    assert [s["source"] for s in Dataset(tmp_path / "out" / fmt).submissions()] == [page.relative_to(src).as_posix()]



@pytest.mark.parametrize("fmt", ["cleaneval", "dragnet", "readability", "swde", "plain", "plain.gz"])
def test_listing_pages_holds_only_their_start(tmp_path, fmt):
    """Listing a source's pages (for their URL, before any is written) read (or inflated) every
    page whole, so a big corpus was read twice and each page held for nothing; only the start a
    URL is looked for in is read now (a page is read whole once, when written), the URL the same.
    Measured by tracemalloc's peak of what listing the one 8.6 MB page allocated."""
    import tracemalloc

    from hwnoise.dataset import site_of
    from hwnoise.features import importers

    big = PAGE.replace(b"<body>", b'<head><link rel="canonical" href="http://big.example/1"></head><body>'
                       ) + b"<p>filler words of a long listing page</p>\n" * 200_000
    if fmt.startswith("plain"):
        src = tmp_path / "src"
        (src / "html").mkdir(parents=True)
        page = src / "html" / ("1.html.gz" if fmt == "plain.gz" else "1.html")
        page.write_bytes(gzip.compress(big, 1) if fmt == "plain.gz" else big)
    else:
        src, page, _gold = tiny_source(fmt, tmp_path / "src")
        head = page.read_bytes().split(PAGE)[0]  # cleaneval's <text> wrapper, swde's <base> line
        page.write_bytes(head + big)
    module = importers._module(fmt.split(".")[0])
    site_of("http://a.example/")  # its public suffix list, loaded once, is no part of a listing
    tracemalloc.start()
    try:
        [sp] = list(module.pages(src))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(big) // 8, f"listing one page of {len(big)} bytes took {peak} bytes"
    assert sp.read_html() == (big if fmt.startswith("plain") else page.read_bytes())
    if fmt != "cleaneval" and fmt != "swde":
        assert sp.url == "http://big.example/1"


def test_a_source_of_no_html_page_leaves_no_empty_dataset(tmp_path, capsys):
    """When every page of a source was skipped as not HTML, a dataset folder was still written,
    holding no page, only the report (listed as imported; the next stages have nothing to read in
    it); the report is said on stderr, with one line that no folder was written. A folder an
    earlier import wrote is left as it was."""
    src, page, _gold = tiny_source("dragnet", tmp_path / "src")
    whole = page.read_bytes()
    page.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    out = tmp_path / "out"
    # nothing imported is a failure (exit 1), so that 'import ... && hwnoise features DIR' stops there
    assert main(["import", "dragnet", str(src), "--into", str(out), "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and not (out / "dragnet").exists()
    assert captured.err.splitlines()[-1] == (f"hwnoise: error: import dragnet: nothing imported from {src}: "
                                             "no page that is HTML (the lines above say why)")
    named = f"{page.relative_to(src).as_posix()} (a PNG image)"
    assert f"import dragnet: 1 page(s) skipped as not HTML: {named}" in captured.err, captured.err
    assert "import dragnet: no page imported (each was skipped, as said above); no dataset folder written" \
        in captured.err and "0 dataset folder(s), 0 pages" in captured.err.splitlines()[-2]
    page.write_bytes(whole)
    assert main(["import", "dragnet", str(src), "--into", str(out), "-q"]) == 0
    before = (out / "dragnet" / "dataset.json").read_bytes()
    page.write_bytes(b"")
    capsys.readouterr()
    assert main(["import", "dragnet", str(src), "--into", str(out), "-q"]) == 1
    assert f"{out / 'dragnet'} left as it was" in capsys.readouterr().err
    assert (out / "dragnet" / "dataset.json").read_bytes() == before and len(Dataset(out / "dragnet").page_ids()) == 1


@pytest.mark.parametrize("fmt", ["plain", "warc"])
def test_an_import_that_imports_nothing_fails(tmp_path, capsys, fmt):
    """An empty plain folder, or a WARC file with no HTML response, imported nothing and exited 0
    after '0 dataset folder(s), 0 pages', so 'hwnoise import ... && hwnoise features DIR' went on
    with nothing; it is one error line naming the source and what it lacks, exit 1."""
    if fmt == "plain":
        src = tmp_path / "src"
        (src / "html").mkdir(parents=True)
        lacks = "no page (html/NAME.html, .htm, .xhtml, each also .gz) that is HTML"
    else:
        import io

        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter

        src = tmp_path / "images.warc"
        with open(src, "wb") as fh:
            w = WARCWriter(fh, gzip=False)
            headers = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record("https://a.example/a.png", "response",
                                                payload=io.BytesIO(b"\x89PNG\r\n\x1a\n"), http_headers=headers))
        lacks = "no response of status 200 that is HTML (the counts above)"
    assert main(["import", fmt, str(src), "--into", str(tmp_path / "out"), "-q"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1] == f"hwnoise: error: import {fmt}: nothing imported from {src}: {lacks}"


def test_two_sources_whose_names_make_one_folder_name_are_not_merged(tmp_path, capsys):
    """``Shop A`` and ``shop-a`` both import into ``INTO/shop-a``: the second import wrote its
    ``index.html`` over the first's (the same page ID), and the folder kept the first's name with
    the second's source. It is refused now, naming the folder and what it holds; a re-import of
    the first source still reopens its folder."""
    pages = {}
    for name, words in (("Shop A", b"tea kettles and cups"), ("shop-a", b"bicycles wheels and bells")):
        (tmp_path / name / "html").mkdir(parents=True)
        pages[name] = PAGE.replace(b"Inside page text", words)
        (tmp_path / name / "html" / "index.html").write_bytes(pages[name])
    into = tmp_path / "out"
    assert main(["import", "plain", str(tmp_path / "Shop A"), "--into", str(into), "-q"]) == 0
    capsys.readouterr()
    assert main(["import", "plain", str(tmp_path / "shop-a"), "--into", str(into), "-q"]) == 1
    err = capsys.readouterr().err
    assert f"{into / 'shop-a'}: holds the dataset 'Shop A'" in err and "another --into" in err
    assert "Traceback" not in err
    ds = Dataset(into / "shop-a")
    assert ds.name == "Shop A" and [p.read_html() for p in ds.pages()] == [pages["Shop A"]]
    assert main(["import", "plain", str(tmp_path / "Shop A"), "--into", str(into), "-q"]) == 0
    assert main(["import", "plain", str(tmp_path / "shop-a"), "--into", str(tmp_path / "other"), "-q"]) == 0


def _warc_of_pages(path: Path, pages: dict[str, bytes]) -> Path:
    """A WARC (warcio, not gzipped) of 200 text/html responses, one per URL of ``pages``."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=False)
        for url, body in pages.items():
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers))
    return path


@pytest.mark.parametrize("fmt", ["plain", "warc"])
def test_import_again_with_query_as_the_warning_says_gives_the_pages_their_query(tmp_path, capsys, fmt):
    """An import without a query warns "import again with --query ...". Doing so changed nothing:
    the pages were known, so their submissions stayed as first recorded (no ``q``) and query.json
    stayed empty; ``import warc`` did not even pass ``--query`` on. Now the pages imported before
    get the query given, the query.json holds it, and nothing is imported twice."""
    if fmt == "plain":
        src = tmp_path / "crawl"
        (src / "html").mkdir(parents=True)
        (src / "html" / "a.html").write_bytes(PAGE)
        (src / "html" / "b.html").write_bytes(PAGE.replace(b"Inside", b"Other"))
    else:
        src = _warc_of_pages(tmp_path / "crawl.warc", {"https://shop.example/a": PAGE,
                                                       "https://shop.example/b": PAGE.replace(b"Inside", b"Other")})
    into = tmp_path / "out"
    assert main(["import", fmt, str(src), "--into", str(into), "-q"]) == 0
    assert "import again with --query" in capsys.readouterr().err
    assert main(["import", fmt, str(src), "--into", str(into), "-q", "--query", "oak chair"]) == 0
    err = capsys.readouterr().err
    assert "has no terms" not in err and "Traceback" not in err, err
    ds = Dataset(next(into.iterdir()))
    assert {"oak", "chair"} <= set(ds.query_terms())
    subs = ds.submissions()
    assert len(subs) == 2 and len(ds.submissions_path.read_text().splitlines()) == 2
    assert all({"name": "q", "value": "oak chair", "label": "Search"} in s["fields"] for s in subs)
    # a rerun without --query keeps the query given
    assert main(["import", fmt, str(src), "--into", str(into), "-q"]) == 0
    assert {"oak", "chair"} <= set(Dataset(ds.path).query_terms())


def test_plain_page_whose_file_name_is_not_utf8_is_imported(tmp_path, capsys):
    """``html/caf\\xe9.html`` (a Latin-1 name, as old archives unpack on Linux) stopped the import
    with a UnicodeEncodeError traceback after the pages before it were written. It is imported:
    its stand-in URL holds the name's bytes percent-encoded, its submission the name as the JSON
    escape ``\\udce9`` (read back as the same name), and a rerun gives it the same ID."""
    src = tmp_path / "crawl"
    for d in ("html", "gold"):
        (src / d).mkdir(parents=True)
    (src / "html" / "a.html").write_bytes(PAGE)
    with open(os.fsencode(src / "html") + b"/caf\xe9.html", "wb") as fh:
        fh.write(PAGE.replace(b"Inside", b"Coffee"))
    with open(os.fsencode(src / "gold") + b"/caf\xe9.txt", "wb") as fh:
        fh.write(b"Coffee page text")
    into = tmp_path / "out"
    for _ in range(2):
        code = main(["import", "plain", str(src), "--into", str(into), "-q"])
        err = capsys.readouterr().err
        assert code == 0 and "Traceback" not in err, err
    ds = Dataset(into / "crawl")
    subs = {s["name"]: s for s in ds.submissions()}
    assert sorted(subs) == ["a", "caf\udce9"] and subs["caf\udce9"]["url"] == "source:plain/html/caf%E9.html"
    assert ds.page(subs["caf\udce9"]["id"]).read_gold() == "Coffee page text"
    assert len(ds.submissions_path.read_bytes().decode("utf-8").splitlines()) == 2


def test_plain_pages_in_folders_under_html_are_named_as_left_out(tmp_path, capsys):
    """Pages in folders under ``html/`` (``html/shop/a.html``, as a crawl is saved by host) were
    left out without a word: an import of only those said "nothing imported" and nothing of why.
    The folders and how many page files each holds are said."""
    src = tmp_path / "crawl"
    (src / "html" / "shop" / "deep").mkdir(parents=True)
    (src / "html" / "top.html").write_bytes(PAGE)
    (src / "html" / "shop" / "a.html").write_bytes(PAGE)
    (src / "html" / "shop" / "deep" / "b.htm").write_bytes(PAGE)
    (src / "html" / "shop" / "notes.txt").write_text("not a page")
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 0
    err = capsys.readouterr().err
    assert (f"2 page file(s) in folders under {src / 'html'} not read: shop/ (2); plain reads "
            "html/NAME.html only") in err, err
    assert [s["name"] for s in Dataset(tmp_path / "out" / "crawl").submissions()] == ["top"]


def test_record_xpath_that_is_no_element_path_is_said_as_such(tmp_path, capsys):
    """A records file written by hand with the XPath one would type (``//div[@class='r']``) or a
    typo (``/body[1]/div[``) was reported as naming "no shown element", as if the page lacked it;
    it is said to be no element path, with an example and the form records take."""
    src = tmp_path / "crawl"
    for d in ("html", "records"):
        (src / d).mkdir(parents=True)
    (src / "html" / "a.html").write_bytes(PAGE)
    (src / "records" / "a.json").write_text(json.dumps([["//div[@class='r']"], ["/body[1]/div["],
                                                        ["/body[1]/div[1]"], ["/body[1]/div[7]"]]))
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 0
    err = capsys.readouterr().err
    assert ("html/a.html: 2 of 4 record XPaths are no element path such as /body[1]/div[3]/ul[1]/li[2] "
            "(e.g. \"//div[@class='r']\")") in err, err
    assert "html/a.html: 1 of 4 record XPaths name no shown element" in err, err
    assert Dataset(tmp_path / "out" / "crawl").submissions()[0]["unresolved"] == 3


@pytest.mark.parametrize("fmt", ["plain", "warc"])
def test_an_import_stopped_midway_is_named_by_features_until_it_is_run_again(tmp_path, capsys, fmt):
    """An import stopped midway (Ctrl-C, kill, or here an error at its second page) left a dataset
    folder of the pages so far that ``hwnoise features`` took for the whole dataset without a word.
    dataset.json marks an import until it finishes; features warns of it, naming the command that
    imports the rest, and once that has run says nothing."""
    if fmt == "plain":
        src = tmp_path / "my crawl"
        for d in ("html", "records"):
            (src / d).mkdir(parents=True)
        (src / "html" / "a.html").write_bytes(PAGE)
        (src / "html" / "b.html").write_bytes(PAGE.replace(b"Inside", b"Second"))
        (src / "records" / "b.json").write_text('[["/body[1]/div[1]"],')                # cut short
    else:  # the second WARC of the crawl is no WARC: its error comes after the first's pages
        _warc_of_pages(tmp_path / "my crawl.warc", {"https://shop.example/a": PAGE})
        (tmp_path / "part2.warc").write_bytes(b"# notes of the crawl, saved over the WARC by mistake\n")
    files = [str(tmp_path / "my crawl.warc"), str(tmp_path / "part2.warc")] if fmt == "warc" else [str(src)]
    into = tmp_path / "out"
    assert main(["import", fmt, *files, "--into", str(into), "-q"]) == 1
    capsys.readouterr()
    ds_path = next(into.iterdir())
    assert main(["features", str(ds_path)]) == 0
    err = capsys.readouterr().err
    assert f"{ds_path}: its import was stopped before it finished" in err, err
    assert f"run 'hwnoise import {fmt} {' '.join(shlex.quote(f) for f in files)} --into {into}' again" in err, err
    if fmt == "warc":
        files.pop()
    if fmt == "plain":
        (src / "records" / "b.json").write_text('[["/body[1]/div[1]"]]')
    assert main(["import", fmt, *files, "--into", str(into), "-q"]) == 0
    assert "import_unfinished" not in json.loads((ds_path / "dataset.json").read_text())
    capsys.readouterr()
    assert main(["features", str(ds_path)]) == 0
    assert "stopped before it finished" not in capsys.readouterr().err


def test_into_a_dataset_folder_is_refused_naming_its_parent(tmp_path, capsys):
    """``--into`` the dataset folder an import printed (to add pages to it) wrote a second dataset
    folder inside it, ``out/crawl/crawl``, whose pages no stage read as the first's. It is
    refused, naming the folder to give instead, and nothing is written."""
    src = tmp_path / "crawl"
    (src / "html").mkdir(parents=True)
    (src / "html" / "a.html").write_bytes(PAGE)
    into = tmp_path / "out"
    assert main(["import", "plain", str(src), "--into", str(into), "-q"]) == 0
    capsys.readouterr()
    (src / "html" / "b.html").write_bytes(PAGE.replace(b"Inside", b"Second"))
    assert main(["import", "plain", str(src), "--into", str(into / "crawl"), "-q"]) == 1
    err = capsys.readouterr().err
    assert f"--into {into / 'crawl'}: is a dataset folder" in err and f"give {into} to import into" in err, err
    assert sorted(p.name for p in (into / "crawl").iterdir()) == ["dataset.json", "gold", "pages", "query.json",
                                                                   "submissions.jsonl"]


@pytest.mark.parametrize("layout,says", [
    ({"a.html": PAGE, "b.htm": PAGE}, "{src} holds 2 page file(s) itself (a.html...): move them into {src}/html"),
    ({"crawl.warc.gz": b"x"}, "{src} holds WARC files (crawl.warc.gz...): 'hwnoise import warc {src}' reads them"),
])
def test_plain_given_a_folder_of_another_layout_says_what_it_holds(tmp_path, capsys, layout, says):
    """A folder of pages without html/ (the commonest first try) or a folder of WARCs given to
    ``import plain`` was told only "html: missing"; it is told what it holds and what to do."""
    src = tmp_path / "mine"
    src.mkdir()
    for name, data in layout.items():
        (src / name).write_bytes(data)
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 1
    err = capsys.readouterr().err
    assert says.format(src=src) in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_plain_given_a_warc_file_names_import_warc(tmp_path, capsys):
    """A WARC file given to ``import plain`` was told "crawl.warc.gz/html: missing"."""
    src = tmp_path / "crawl.warc.gz"
    src.write_bytes(b"x")
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 1
    assert f"{src}: a file; a plain folder has html/NAME.html" in capsys.readouterr().err


def test_plain_query_file_without_a_word_is_named(tmp_path, capsys):
    """An empty ``query/NAME.txt`` (a placeholder, a save that failed; here one empty and one of
    blanks in UTF-16) left its page without a query and said nothing; the files are named."""
    src = tmp_path / "crawl"
    for d in ("html", "query"):
        (src / d).mkdir(parents=True)
    for name in ("a", "b", "c"):
        (src / "html" / f"{name}.html").write_bytes(PAGE)
    (src / "query" / "a.txt").write_bytes(b"")
    (src / "query" / "b.txt").write_bytes(" \n ".encode("utf-16"))
    (src / "query" / "c.txt").write_text("oak chair")
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "2 query file(s) hold no word: query/a.txt, query/b.txt; their pages have no query" in err, err


def test_plain_query_file_that_is_a_symlink_out_of_src_is_not_read(tmp_path, capsys):
    """A page, gold or records file that is a symlink out of SRC was not read, but a query file was:
    ``query/a.txt -> ~/secret.txt`` put the file's words into the page's submission and the
    domain query. It is not read now, and said, as a gold file is."""
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "secret.txt").write_text("SECRET-TOKEN hunter2")
    src = tmp_path / "crawl"
    for d in ("html", "query"):
        (src / d).mkdir(parents=True)
    (src / "html" / "a.html").write_bytes(PAGE)
    os.symlink(tmp_path / "private" / "secret.txt", src / "query" / "a.txt")
    assert main(["import", "plain", str(src), "--into", str(tmp_path / "out"), "-q"]) == 0
    err = capsys.readouterr().err
    assert f"{src / 'query' / 'a.txt'} is a symlink out of {src}" in err, err
    ds = tmp_path / "out" / "crawl"
    assert not any(b"SECRET" in f.read_bytes() for f in ds.rglob("*") if f.is_file())

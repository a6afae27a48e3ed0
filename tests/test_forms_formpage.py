"""Reading a search form from its page (labels a person sees, defaults, hidden inputs) and
filling it once per value set."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from misbehaving_server import MisbehavingServer

from hwnoise.forms.fetch import BlockedURL
from hwnoise.forms.formpage import FormError, read_form, read_values, submissions_from_form, unknown_fields

PAGE = """<html><body>
<form class="quick" action="/q"><input name="q" aria-label="Search"><button>Go</button></form>
<form id="adv" action="../results/list.php?x=1" method="POST">
  <input type="hidden" name="token" value="t0k">
  <table>
    <tr><th>Title:</th><td><input name="ttl"></td></tr>
    <tr><td>Author</td><td><input name="auth" placeholder="e.g. Herbert" value="any"></td></tr>
  </table>
  <label for="yr">Published after</label> <input id="yr" name="yr" placeholder="1990">
  <label>Format <select name="fmt"><option>Paperback</option><option value="hc" selected>Hardcover</option></select></label>
  <select name="lang" multiple><option value="en" selected>English</option><option value="pt" selected>Portuguese</option><option value="fr">French</option></select>
  <span id="kwl">Keywords</span><textarea name="kw" aria-labelledby="kwl">
spice</textarea>
  <input name="isbn" placeholder="ISBN number">
  <fieldset><legend>Stock</legend>
    <label><input type="radio" name="stock" value="all" checked> All</label>
    <label><input type="radio" name="stock" value="in"> In stock</label></fieldset>
  <label><input type="checkbox" name="new" value="1"> New only</label>
  <input name="off" value="x" disabled>
  <input type="file" name="upload">
  <input type="reset" name="rst" value="Clear">
  <input type="submit" name="do" value="Search books">
  <input type="submit" name="do2" value="Other button">
</form>
<input name="outside" form="adv" value="o" title="Outside field">
</body></html>"""


@pytest.fixture()
def form():
    return read_form(PAGE, base_url="http://books.example/a/search.html")


def test_picks_the_largest_form_and_resolves_its_action(form):
    assert form.action == "http://books.example/results/list.php?x=1"
    assert form.method == "POST"
    assert form.enctype == "application/x-www-form-urlencoded"
    quick = read_form(PAGE, base_url="http://books.example/a/search.html", form_index=0)
    assert quick.action == "http://books.example/q" and quick.method == "GET"
    assert quick.field("q").label == "Search"


def test_every_label_a_person_sees(form):
    labels = {f.name: f.label for f in form.fields}
    assert labels["ttl"] == "Title"               # the header cell beside the input
    assert labels["auth"] == "Author"             # the cell beats the placeholder
    assert labels["yr"] == "Published after"      # <label for>
    assert labels["fmt"] == "Format"              # wrapping label, without the options' text
    assert labels["kw"] == "Keywords"             # aria-labelledby
    assert labels["isbn"] == "ISBN number"        # placeholder
    assert labels["stock"] == "Stock"             # the group's legend
    assert labels["new"] == "New only"
    assert labels["outside"] == "Outside field"   # form= attribute, title
    assert labels["token"] is None                # hidden: nothing to see


def test_defaults_hidden_inputs_and_what_is_never_sent(form):
    sent = [(f["name"], f["value"]) for f in form.default_fields()]
    assert sent == [("token", "t0k"), ("ttl", ""), ("auth", "any"), ("yr", ""), ("fmt", "hc"),
                    ("lang", "en"), ("lang", "pt"), ("kw", "spice"), ("isbn", ""), ("stock", "all"),
                    ("upload", ""), ("do", "Search books"), ("outside", "o")]   # a file control: no file, as Chromium
    names = {f.name for f in form.fields}
    assert not names & {"off", "rst"}   # disabled, reset


def test_submissions_from_form_keep_defaults_and_fill_values(form):
    subs = submissions_from_form(form, [
        {"ttl": "Dune", "new": "1", "fmt": "Paperback"},
        {"Published after": 1965, "lang": ["fr"], "stock": "in", "extra": "e"},
    ])
    a, b = subs
    assert a["method"] == "POST" and a["url"] == "http://books.example/results/list.php?x=1"
    av = [(f["name"], f["value"]) for f in a["fields"]]
    assert ("token", "t0k") in av and ("ttl", "Dune") in av and ("auth", "any") in av
    assert ("fmt", "Paperback") in av                       # an option's text means its value
    assert av.index(("new", "1")) == av.index(("stock", "all")) + 1   # in form order
    assert {f["name"]: f["label"] for f in a["fields"]}["ttl"] == "Title"
    bv = [(f["name"], f["value"]) for f in b["fields"]]
    assert ("yr", "1965") in bv                             # set by its visible label
    assert [v for n, v in bv if n == "lang"] == ["fr"]
    assert ("stock", "in") in bv and ("stock", "all") not in bv
    assert ("extra", "e") in bv
    assert a["form"] == "http://books.example/a/search.html"


def test_names_that_are_no_field_are_found_for_a_warning(form):
    # by name or by visible label is a field; "extra" and a misspelt "tlt" are not (sent as given)
    values = [{"ttl": "Dune", "Published after": 1965}, {"tlt": "Emma", "extra": "e", "ttl": "x"}]
    assert unknown_fields(form, values) == ["tlt", "extra"]
    assert unknown_fields(form, values[:1]) == []


def test_get_form_puts_fields_in_the_query_string():
    html = '<form action="s"><input type=hidden name=src value=adv><input name=q></form>'
    form = read_form(html, base_url="http://x.example/dir/page")
    (sub,) = submissions_from_form(form, [{"q": "red wine"}])
    assert sub["url"] == "http://x.example/dir/s?src=adv&q=red+wine"
    assert parse_qsl(urlsplit(sub["url"]).query) == [("src", "adv"), ("q", "red wine")]


def test_read_form_over_http_and_its_safety():
    with MisbehavingServer() as srv:
        form = read_form(srv.url("/form"), allow_private=True)
        assert form.action == srv.url("/search") and form.method == "GET"
        assert form.field("item_name").label == "Drink name"
        assert form.field("session").value == "s3cr3t"
        with pytest.raises(BlockedURL, match="127.0.0.1"):
            read_form(srv.url("/form"))          # loopback refused by default


def test_read_form_reads_a_page_file_and_names_a_mistyped_one(tmp_path):
    page = tmp_path / "search.html"
    page.write_bytes('<form action="s"><input name="q" value="caf\u00e9"></form>'.encode("cp1252"))
    form = read_form(str(page))  # the file's bytes, decoded as a browser decodes them
    assert form.action == (tmp_path / "s").as_uri() and form.field("q").value == "caf\u00e9"
    with pytest.raises(FormError, match="absent.html: no such file, and not an http or https URL"):
        read_form(str(tmp_path / "absent.html"))


def test_form_errors_are_clear(tmp_path):
    with pytest.raises(FormError, match="no <form>"):
        read_form("<html><body><p>nothing</p></body></html>", base_url="http://x.example/")
    with pytest.raises(FormError, match="form index 5 out of range; the page has 2"):
        read_form(PAGE, base_url="http://x.example/", form_index=5)
    with pytest.raises(FormError, match="no action and no page URL"):
        read_form("<form><input name=q></form>")


def test_read_values_jsonl_and_csv(tmp_path):
    j = tmp_path / "v.jsonl"
    j.write_text('{"q": "dune", "year": 1965}\n\n{"q": "emma"}\n')
    assert read_values(j) == [{"q": "dune", "year": 1965}, {"q": "emma"}]
    c = tmp_path / "v.csv"
    c.write_text("q,cat\ndune,sf\nemma,\n")
    assert read_values(c) == [{"q": "dune", "cat": "sf"}, {"q": "emma"}]
    bad = tmp_path / "bad.csv"
    bad.write_text("q,cat\ndune,sf,extra\n")
    with pytest.raises(FormError, match=r"bad.csv:2: 3 columns where the header has 2"):
        read_values(bad)
    bad.write_text("q,cat\ndune\n")
    with pytest.raises(FormError, match=r"bad.csv:2: 1 column where the header has 2"):   # not "1 columns"
        read_values(bad)
    badj = tmp_path / "bad.jsonl"
    badj.write_text('{"q": 1}\n{"q": \n')
    with pytest.raises(FormError, match=r"bad.jsonl:2: not valid JSON"):
        read_values(badj)


def test_a_values_file_saved_by_excel_or_notepad_is_read_as_written(tmp_path):
    # decoded as UTF-8 with errors replaced: 'café' in a cp1252 CSV (Excel's default on Windows)
    # was sent to the form as 'caf\ufffd'
    want = [{"q": "café", "cat": "livres à lire"}]
    for name, data in (("cp1252.csv", "q,cat\r\ncafé,livres à lire\r\n".encode("cp1252")),
                       ("utf16.csv", "q,cat\r\ncafé,livres à lire\r\n".encode("utf-16")),
                       ("bom.csv", "\ufeffq,cat\ncafé,livres à lire\n".encode("utf-8")),
                       ("cp1252.jsonl", '{"q": "café", "cat": "livres à lire"}\n'.encode("cp1252"))):
        (tmp_path / name).write_bytes(data)
        assert read_values(tmp_path / name) == want, name


def test_a_csv_values_file_that_would_lose_values_is_named(tmp_path):
    twice = tmp_path / "twice.csv"
    twice.write_text("q,cat,q\ndune,sf,emma\n")  # the first q's values were silently dropped
    with pytest.raises(FormError, match=r"twice.csv:1: the CSV header names the column 'q' twice"):
        read_values(twice)
    quote = tmp_path / "quote.csv"
    quote.write_text('q,cat\n"dune,sf\nemma,novel\n')  # one cell held the rest of the file
    with pytest.raises(FormError, match=r"quote.csv:\d+: not CSV .*a quote opened and never closed"):
        read_values(quote)

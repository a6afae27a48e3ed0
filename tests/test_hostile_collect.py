"""The collector against hostile input and a hostile server (issue 14): ids that traverse, a
trickled body, no Content-Type, UTF-7, a huge Crawl-delay, one submission under two URLs, and
bad inputs that must end in one line, not a traceback."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from misbehaving_server import DEFAULT_ROBOTS, TRAVERSING_IDS, hostile_lines

from hwnoise.cli import main
from hwnoise.dataset import Dataset, is_safe_id, safe_id
from hwnoise.forms import fetch as fetch_mod
from hwnoise.forms.collect import collect
from hwnoise.forms.fetch import Fetcher
from hwnoise.forms.submissions import read_submissions

FAST = dict(allow_private=True, delay=0, backoff=0.01, retries=0, timeout=(2, 2), progress=False)


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_traversing_ids_stay_inside_the_dataset(srv, tmp_path):
    work = tmp_path / "deep" / "er"
    work.mkdir(parents=True)
    (work / "subs.jsonl").write_text(hostile_lines(srv))
    ds = Dataset.create(work / "ds")
    before = files_under(tmp_path)
    summary = collect(read_submissions(work / "subs.jsonl"), ds, **FAST)
    assert summary["fetched"] == len(TRAVERSING_IDS) and summary["failed"] == 0
    new = files_under(tmp_path) - before
    assert all(f.startswith("deep/er/ds/") for f in new), new            # nothing written outside
    assert not Path("/tmp/hwnoise-absolute-escape.html").exists()
    pages = sorted((ds.path / "pages").glob("*.html"))
    assert len(pages) == len(TRAVERSING_IDS) and all(is_safe_id(p.stem) and len(p.name) < 200 for p in pages)
    subs = ds.submissions()
    assert [s.get("given_id", s["id"]) for s in subs] == TRAVERSING_IDS    # the given id is kept
    for i, sub in enumerate(subs):                                          # each page its own
        assert f"n={i}" in ds.page(sub["id"]).read_html().decode() or f"<b>n</b> {i}<" in \
            ds.page(sub["id"]).read_html().decode()
    assert set(ds.journal()) == {s["id"] for s in subs}
    # a rerun fetches nothing again
    n = len(srv.log)
    assert collect(read_submissions(work / "subs.jsonl"), ds, **FAST)["skipped"] == len(TRAVERSING_IDS)
    assert len(srv.log) == n


def test_ids_read_from_a_dataset_never_leave_it(tmp_path):
    ds = Dataset.create(tmp_path / "a" / "ds")
    (tmp_path / "a" / "secret.html").write_text("<p>outside secret</p>")
    (tmp_path / "secret.txt").write_text("outside gold")
    ds.submissions_path.write_text(
        json.dumps({"id": "../../secret", "url": "http://x.example/1"}) + "\n"
        + json.dumps({"id": "../../../secret", "url": "http://x.example/2"}) + "\n"
        + json.dumps({"url": "http://x.example/no-id"}) + "\n")
    for sub in ds.submissions():
        page = ds.page(sub["id"])
        for path in (page.html_path, page.gold_path):
            assert path.resolve().is_relative_to(ds.path.resolve())
        assert page.read_gold() is None
    assert list(ds.pages()) == []                                            # no page read from outside
    assert safe_id("../../secret") != "secret" and safe_id(safe_id("../x")) == safe_id("../x")


def test_one_submission_under_two_urls_is_fetched_as_recorded(srv, tmp_path):
    first, second = srv.url("/page?q=secret&k=dup"), srv.url("/page?q=%73ecret&k=dup")
    (tmp_path / "urls.txt").write_text(f"{first}\n{second}\n")
    ds = Dataset.create(tmp_path / "ds")
    n = len(srv.log)
    collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST)
    subs = ds.submissions()
    assert len(subs) == 1
    rec = ds.journal()[subs[0]["id"]]
    fetched = [e[2] for e in srv.log[n:] if e[2].startswith("/page")]
    assert subs[0]["url"] == rec["url"] == first and fetched == ["/page?q=secret&k=dup"]


def test_a_trickled_body_is_cut_at_the_page_time_limit_and_journaled(srv, tmp_path):
    urls = [srv.url("/trickle?n=100000&every=0.02&key=t"), srv.url("/page?after=trickle"),
            srv.url("/trickle-headers?n=100000&every=0.02")]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    ds = Dataset.create(tmp_path / "ds")
    summary = collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, page_timeout=1.0)
    assert summary["fetched"] == 1 and summary["failed"] == 2
    errors = [r["error"] for r in ds.journal().values() if r["error"]]
    assert len(errors) == 2 and all("page time limit" in e and "--page-timeout" in e for e in errors)
    n = srv.hits("/trickle")
    again = collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, page_timeout=1.0)
    assert again["failed_before"] == 2 and srv.hits("/trickle") == n      # a rerun does not hang on it


def test_no_content_type_is_sniffed_as_browsers_do(srv, tmp_path):
    urls = [srv.url(f"/no-type?kind={k}") for k in ("png", "html", "text")]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    ds = Dataset.create(tmp_path / "ds")
    summary = collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST)
    assert summary["fetched"] == 1 and summary["failed"] == 2
    by_url = {r["url"]: r for r in ds.journal().values()}
    assert "PNG image" in by_url[urls[0]]["error"] and "no Content-Type" in by_url[urls[0]]["error"]
    assert by_url[urls[1]]["error"] is None
    assert "without HTML markup" in by_url[urls[2]]["error"]
    assert len(list((ds.path / "pages").glob("*.html"))) == 1


def test_utf7_is_not_taken(srv, tmp_path):
    (tmp_path / "urls.txt").write_text(srv.url("/utf7") + "\n")
    ds = Dataset.create(tmp_path / "ds")
    collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST)
    rec = next(iter(ds.journal().values()))
    assert rec["http_charset"] == "utf-7" and rec["encoding"] not in ("utf-7", None)
    page = next(ds.pages())
    from hwnoise.decode import decode_html

    assert "<script>" not in decode_html(page.read_html(), page.http_charset)[0]


def test_a_huge_crawl_delay_is_capped_with_a_message(srv, capsys, monkeypatch):
    assert fetch_mod.MAX_CRAWL_DELAY == 60
    monkeypatch.setattr(fetch_mod, "MAX_CRAWL_DELAY", 0.2)   # the cap itself, made short for the test
    srv.robots = "User-agent: *\nCrawl-delay: 86400\n"
    n = len(srv.log)
    try:
        with Fetcher(allow_private=True, delay=0, retries=0) as f:
            f.fetch(srv.url("/page?cd=huge1"))
            f.fetch(srv.url("/page?cd=huge2"))
            assert f.throttle._delays[f"127.0.0.1:{srv.port}"] == 0.2
    finally:
        srv.robots = "User-agent: *\nDisallow: /private\n"
    times = [e[0] for e in srv.log[n:] if e[2].startswith("/page?cd=huge")]
    assert len(times) == 2 and times[1] - times[0] >= 0.19             # the capped delay is obeyed
    err = capsys.readouterr().err
    assert "Crawl-delay of 86400 s" in err and "0.2 s" in err


def run_cli(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    return code, err


BAD_SUBMISSIONS = [
    ("x.har", '{"log": 5}', "not a HAR file"),
    ("u.txt", "http://[::1\n", "not a valid URL"),
    ("p.jsonl", '{"method": "POST", "action": "http://x.example/s", "fields": [], "enctype": 5}\n', "enctype"),
    ("p2.jsonl", '{"url": "http://x.example/s", "fields": [{"name": ["a"], "value": 1}]}\n', "field 0"),
    ("deep.jsonl", "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ("h2.har", '{"log": {"entries": [{"request": {"url": "http://[::1/x"}}]}}', "not a valid URL"),
]


@pytest.mark.parametrize("name,content,expect", BAD_SUBMISSIONS, ids=[b[0] for b in BAD_SUBMISSIONS])
def test_bad_submissions_end_in_one_line(tmp_path, capsys, name, content, expect):
    (tmp_path / name).write_text(content)
    code, err = run_cli(["collect", str(tmp_path / name), "--into", str(tmp_path / "ds"), "-q"], capsys)
    assert code == 1 and expect in err and str(tmp_path / name) in err
    assert err.count("\n") == 1 and err.startswith("hwnoise: error:") and "Traceback" not in err


def test_ids_with_nul_long_ids_and_no_ids_do_not_stop_the_crawl(srv, tmp_path, capsys):
    lines = [{"id": "a\x00b", "url": srv.url("/page"), "fields": {"n": "nul"}},
             {"id": "y" * 300, "url": srv.url("/page"), "fields": {"n": "long"}},
             {"url": srv.url("/page"), "fields": {"n": "noid"}}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, err = run_cli(["collect", str(tmp_path / "s.jsonl"), "--into", str(tmp_path / "ds"), "-q",
                         "--allow-private", "--delay", "0"], capsys)
    assert code == 0 and "Traceback" not in err
    ds = Dataset(tmp_path / "ds")
    assert len(list(ds.pages())) == 3 and all(not r["error"] for r in ds.journal().values())
    assert [s.get("given_id") for s in ds.submissions()] == ["a\x00b", "y" * 300, None]
    # only unsafe ids, all fetched: success, not "nothing could be fetched"
    (tmp_path / "s2.jsonl").write_text(json.dumps({"id": "../z", "url": srv.url("/page"), "fields": {"n": "z"}}) + "\n")
    code, err = run_cli(["collect", str(tmp_path / "s2.jsonl"), "--into", str(tmp_path / "ds2"), "-q",
                         "--allow-private", "--delay", "0"], capsys)
    assert code == 0 and "nothing could be fetched" not in err


def test_into_a_file_or_an_unwritable_place_is_one_line(tmp_path, capsys):
    (tmp_path / "u.txt").write_text("http://x.example/a\n")
    (tmp_path / "afile").write_text("not a folder")
    for into, expect in ((tmp_path / "afile", "not a folder"), (Path("/proc/hwnoise-nope/ds"), "cannot create")):
        code, err = run_cli(["collect", str(tmp_path / "u.txt"), "--into", str(into), "-q"], capsys)
        assert code == 1 and expect in err and str(into) in err and err.count("\n") == 1
    assert (tmp_path / "afile").read_text() == "not a folder"


@pytest.mark.parametrize("option,value", [("--max-bytes", "-1"), ("--delay", "-0.5"), ("--retries", "-2"),
                                          ("--page-timeout", "0"), ("--delay", "nan"), ("--workers", "0"),
                                          ("--max-retry-after", "-1")])
def test_negative_numbers_are_refused(tmp_path, capsys, option, value):
    (tmp_path / "u.txt").write_text("http://x.example/a\n")
    with pytest.raises(SystemExit) as exc:
        main(["collect", str(tmp_path / "u.txt"), "--into", str(tmp_path / "ds"), option, value])
    assert exc.value.code == 2 and option in capsys.readouterr().err
    assert not (tmp_path / "ds").exists()


def test_a_malformed_answer_is_one_line_and_journaled_with_its_redirects(srv, tmp_path, capsys):
    # a Location that is not a URL, or two Content-Lengths that disagree, raised ValueError or
    # requests' own errors out of the fetcher: a traceback for --form, and a journal line that
    # lost the redirect it came from
    from urllib.parse import quote

    (tmp_path / "v.jsonl").write_text('{"item_name": "tea"}\n')
    cases = [(srv.url("/redirect?to=" + quote("http://[::1/x", safe="")), "not a valid URL (Invalid IPv6 URL)"),
             (srv.url("/redirect?to=" + quote("http://127.0.0.1:99999/x", safe="")), "not a valid URL (Port"),
             (srv.url("/two-lengths"), "the length of the answer is not known")]
    for i, (url, expect) in enumerate(cases):
        code, err = run_cli(["collect", "--form", url, "--values", str(tmp_path / "v.jsonl"), "--into",
                             str(tmp_path / f"f{i}"), "-q", "--allow-private", "--delay", "0"], capsys)
        assert code == 1 and err.startswith("hwnoise: error:") and err.count("\n") == 1
        assert url in err and expect in err
    (tmp_path / "urls.txt").write_text("".join(url + "\n" for url, _ in cases))
    ds = Dataset.create(tmp_path / "ds")
    assert collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, probes=0)["failed"] == 3
    recs = {r["url"]: r for r in ds.journal().values()}
    for url, expect in cases:
        assert recs[url]["error"].startswith(url) and expect in recs[url]["error"]
    assert [h["status"] for h in recs[cases[0][0]]["redirects"]] == [302]
    assert recs[cases[0][0]]["redirects"][0]["location"] == "http://[::1/x"


def test_a_form_whose_action_is_not_a_url_is_one_line(srv, tmp_path, capsys):
    from urllib.parse import quote

    (tmp_path / "v.jsonl").write_text('{"q": "tea"}\n')
    page = srv.url("/form-action?action=" + quote("http://[::1/s", safe=""))
    code, err = run_cli(["collect", "--form", page, "--values", str(tmp_path / "v.jsonl"), "--into",
                         str(tmp_path / "ds"), "-q", "--allow-private", "--delay", "0"], capsys)
    assert code == 1 and err.startswith("hwnoise: error:") and err.count("\n") == 1
    assert page in err and "the form's action 'http://[::1/s' is not a URL" in err


@pytest.mark.parametrize("action, said", [
    ("javascript:void(0)", "a script on the page sends this search"),
    (" JavaScript:search()", "a script on the page sends this search"),
    ("mailto:search@example.org", "is not an http or https URL"),
])
def test_a_form_whose_action_is_a_script_or_not_http_is_one_line_before_any_fetch(srv, tmp_path, capsys, action,
                                                                                  said):
    # it was made into submissions to 'javascript:void(0)?q=tea', each journaled as a failure
    from urllib.parse import quote

    (tmp_path / "v.jsonl").write_text('{"q": "tea"}\n')
    page = srv.url("/form-action?action=" + quote(action, safe="") + "&key=" + quote(action, safe=""))
    code, err = run_cli(["collect", "--form", page, "--values", str(tmp_path / "v.jsonl"), "--into",
                         str(tmp_path / "ds"), "-q", "--allow-private", "--delay", "0"], capsys)
    assert code == 1 and err.startswith("hwnoise: error:") and err.count("\n") == 1
    assert page in err and said in err and not (tmp_path / "ds").exists()


def test_a_form_page_file_with_a_relative_action_is_one_line(tmp_path, capsys):
    # the action resolved against file:///..., every submission journaled as a failure
    (tmp_path / "form.html").write_text('<form action="search"><input name="q"></form>')
    (tmp_path / "v.jsonl").write_text('{"q": "tea"}\n')
    code, err = run_cli(["collect", "--form", str(tmp_path / "form.html"), "--values", str(tmp_path / "v.jsonl"),
                         "--into", str(tmp_path / "ds"), "-q"], capsys)
    assert code == 1 and err.startswith("hwnoise: error:") and err.count("\n") == 1
    assert "is not an http or https URL" in err and "give the page's http(s) URL" in err
    assert not (tmp_path / "ds").exists()


def test_the_retry_after_limit_is_a_collect_option(srv, tmp_path, capsys):
    # the limit (120 s) could be set only from Python, though the failure named it as a limit to raise
    (tmp_path / "u.txt").write_text(srv.url("/busy?after=2&key=cap1") + "\n")
    base = ["collect", str(tmp_path / "u.txt"), "-q", "--allow-private", "--delay", "0", "--probes", "0"]
    assert run_cli([*base, "--into", str(tmp_path / "a"), "--max-retry-after", "1.5"], capsys)[0] == 1
    err = next(iter(Dataset(tmp_path / "a").journal().values()))["error"]
    assert "HTTP 429 (Retry-After 2 s exceeds the limit of 1.5 s (raise --max-retry-after))" in err
    (tmp_path / "u.txt").write_text(srv.url("/busy?after=2&key=cap2") + "\n")
    assert run_cli([*base, "--into", str(tmp_path / "b"), "--max-retry-after", "2"], capsys)[0] == 0
    assert len(list((tmp_path / "b" / "pages").glob("*.html"))) == 1
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    assert "--max-retry-after SECONDS" in capsys.readouterr().out


@pytest.mark.parametrize("given, says", [
    ("page.html", "page.html: a saved page (markup), not a file of submissions"),
    ("page.html.gz", "page.html.gz: gzip data, not a file of submissions"),
    ("https://example.org/search?q=oak", "https://example.org/search?q=oak: SUBMISSIONS is a file of them, not a URL"),
], ids=["html", "gz", "url"])
def test_collect_of_a_saved_page_or_a_url_says_what_collect_reads(tmp_path, capsys, monkeypatch, given, says):
    """A saved page given as SUBMISSIONS was read as URL lines: 'page.html:1: '<html>...' is not
    one URL (spaces must be %20 or +)', and a URL was 'no such submissions file' (its '//' made
    '/'). The one line says what the argument is, what collect reads, and for saved pages to use
    'hwnoise import plain'; nothing is written, exit 1; --help says so too."""
    import gzip

    monkeypatch.chdir(tmp_path)
    page = b"<!DOCTYPE html>\n<html><body><p>A result page saved from a browser.</p></body></html>"
    Path("page.html").write_bytes(page)
    Path("page.html.gz").write_bytes(gzip.compress(page))
    assert main(["collect", given, "--into", "ds"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"hwnoise: error: {says}") and len(err.splitlines()) == 1, err
    assert ("--form URL --values FILE" if given.startswith("https") else "'hwnoise import plain SRC --into DIR'") in err
    assert not Path("ds").exists()
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    assert "hwnoise import plain" in capsys.readouterr().out


def test_a_second_collect_into_the_same_dataset_at_once_is_refused(srv, tmp_path, capsys):
    # two collects into one folder at once both fetched every page, the journal got every line
    # twice and a shared WARC every record set twice
    (tmp_path / "u.txt").write_text(srv.url("/held?key=two") + "\n" + srv.url("/page?n=two") + "\n")
    into = tmp_path / "ds"
    subs = read_submissions(tmp_path / "u.txt")
    first = threading.Thread(target=collect, args=(subs, Dataset.create(into)), kwargs={**FAST, "probes": 0})
    first.start()
    try:
        assert srv.held.wait(30)  # the first collect is midway, in its first fetch
        code, err = run_cli(["collect", str(tmp_path / "u.txt"), "--into", str(into), "-q", "--allow-private",
                             "--delay", "0", "--probes", "0"], capsys)
    finally:
        srv.release.set()
        first.join()
    assert code == 1 and err.startswith("hwnoise: error:") and err.count("\n") == 1
    assert str(into) in err and "another 'hwnoise collect' is writing this dataset" in err
    assert srv.hits("/held") == 1 and srv.hits("/page?n=two") == 1
    assert len(Dataset(into).journal_path.read_text().splitlines()) == 2
    # the lock goes with the run: the next collect resumes (nothing left to fetch)
    code, err = run_cli(["collect", str(tmp_path / "u.txt"), "--into", str(into), "-q", "--allow-private",
                         "--delay", "0", "--probes", "0"], capsys)
    assert code == 0 and "0 fetched" in err and srv.hits("/page?n=two") == 1


def test_robots_txt_is_read_once_per_host_in_a_collect_of_a_form(srv, tmp_path, capsys):
    # the fetcher that read the form page and the one that fetched the submissions each read
    # robots.txt: two requests of it per host per run. Its rules (and Crawl-delay) go from the
    # first to the second, as the form page's cookies do.
    (tmp_path / "v.jsonl").write_text('{"item_name": "tea"}\n{"item_name": "rum"}\n')
    srv.robots = "User-agent: *\nDisallow: /private\nCrawl-delay: 0.3\n"
    n = len(srv.log)
    try:
        code, err = run_cli(["collect", "--form", srv.url("/form?key=robots-once"), "--values",
                             str(tmp_path / "v.jsonl"), "--into", str(tmp_path / "ds"), "-q", "--allow-private",
                             "--delay", "0", "--probes", "0"], capsys)
    finally:
        srv.robots = DEFAULT_ROBOTS
    log = [e for e in srv.log[n:]]
    assert code == 0, err
    assert [e[2] for e in log if e[2] == "/robots.txt"] == ["/robots.txt"]
    searches = [e[0] for e in log if e[2].startswith("/search")]
    assert len(searches) == 2 and searches[1] - searches[0] >= 0.29     # its Crawl-delay still obeyed


def test_the_collect_report_says_one_in_the_singular(srv, tmp_path, capsys):
    # "... and 1 more failures", "1 submissions failed in an earlier run"
    (tmp_path / "u.txt").write_text("".join(srv.url(f"/gone?n={i}") + "\n" for i in range(6)))
    ds = Dataset.create(tmp_path / "ds")
    collect(read_submissions(tmp_path / "u.txt"), ds, **{**FAST, "progress": True}, probes=0)
    assert "... and 1 more failure (see" in capsys.readouterr().err
    (tmp_path / "one.txt").write_text(srv.url("/gone?n=0") + "\n")
    collect(read_submissions(tmp_path / "one.txt"), ds, **{**FAST, "progress": True}, probes=0)
    assert "  1 submission failed in an earlier run; rerun with --retry-failed" in capsys.readouterr().err

"""The collector against a real misbehaving server: nothing lost, nothing duplicated, resumable
after SIGKILL, failures kept, and a form collected through its form page."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hwnoise.dataset import Dataset
from hwnoise.forms.collect import JOURNAL_KEYS, collect
from hwnoise.forms.submissions import read_submissions, submission_from_url

REPO = Path(__file__).resolve().parents[1]
FAST = dict(allow_private=True, delay=0, backoff=0.01, retries=1, timeout=(2, 2), progress=False)


def journal_lines(ds: Dataset) -> list[dict]:
    return [json.loads(x) for x in ds.journal_path.read_text().splitlines()]


def assert_journal_agrees_with_files(ds: Dataset) -> None:
    """Every success in the journal has its page with that sha256; every page has a success."""
    last = ds.journal()
    ok = {sid for sid, rec in last.items() if not rec["error"]}
    pages = {p.stem for p in (ds.path / "pages").glob("*.html")}
    assert pages == ok
    for sid in ok:
        data = (ds.path / "pages" / f"{sid}.html").read_bytes()
        assert hashlib.sha256(data).hexdigest() == last[sid]["sha256"]
        assert len(data) == last[sid]["bytes"]
    assert not list((ds.path / "pages").glob(".*.tmp"))          # no temp file left behind


def snapshot(ds: Dataset) -> dict:
    return {str(p.relative_to(ds.path)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(ds.path.rglob("*")) if p.is_file()}


def test_collect_a_misbehaving_site_records_everything(srv, tmp_path):
    urls = [srv.url(p) for p in ("/page?q=tea", "/flaky?key=c1", "/busy?key=c1&after=1", "/reset?key=c1&fails=1",
                                 "/wrong-charset", "/redirect?to=/page%3Fq%3Dmoved", "/gone", "/image", "/loop",
                                 "/redirect?to=file:///etc/passwd", "/private/secret", "/page?q=tea")]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    ds = Dataset.create(tmp_path / "ds", name="misbehaving")
    summary = collect(read_submissions(tmp_path / "urls.txt"), ds, **{**FAST, "retries": 2})
    assert summary == {"fetched": 6, "failed": 5, "skipped": 0, "failed_before": 0}   # the repeat once
    recs = {r["url"]: r for r in journal_lines(ds)}
    assert len(journal_lines(ds)) == 11
    assert all(tuple(r) == JOURNAL_KEYS for r in recs.values())
    assert recs[urls[1]]["attempts"] == 3 and recs[urls[1]]["status"] == 200
    assert recs[urls[2]]["attempts"] == 2 and recs[urls[3]]["attempts"] == 2
    wrong = recs[urls[4]]
    assert wrong["http_charset"] == "ISO-8859-1"
    assert wrong["encoding"] == "utf-8"              # the bytes are valid UTF-8 (DESIGN.md "Decoding")
    moved = recs[urls[5]]
    assert moved["final_url"] == srv.url("/page?q=moved") and moved["redirects"][0]["status"] == 302
    assert recs[urls[6]]["status"] == 404 and "HTTP 404" in recs[urls[6]]["error"]
    assert "not HTML" in recs[urls[7]]["error"]
    assert "redirects" in recs[urls[8]]["error"] and len(recs[urls[8]]["redirects"]) == 11
    assert "scheme 'file' refused" in recs[urls[9]]["error"]
    assert "robots.txt" in recs[urls[10]]["error"]
    for r in recs.values():
        assert r["started"] <= r["finished"]
        assert r["method"] == "GET" and isinstance(r["fields"], list)
        assert (r["error"] is None) == (r["sha256"] is not None)
    assert_journal_agrees_with_files(ds)
    # the domain query was written, with where each term came from
    query = ds.query()
    tea = next(q for q in query if q["term"] == "tea")
    assert tea["kind"] == "value" and len(tea["submissions"]) == 1
    # the page's site, fields and charset reach the next stage through the dataset
    page = ds.page(recs[urls[4]]["submission"])
    assert page.http_charset == "ISO-8859-1" and page.site == "127.0.0.1"


def test_rerun_changes_nothing_and_failures_wait_for_retry_failed(srv, tmp_path):
    subs = [submission_from_url(srv.url(p)) for p in ("/page?r=1", "/page?r=2", "/reset?key=r1&fails=2")]
    ds = Dataset.create(tmp_path / "ds", name="rerun")
    assert collect(subs, ds, **{**FAST, "retries": 0}) == {"fetched": 2, "failed": 1, "skipped": 0, "failed_before": 0}
    before, n = snapshot(ds), len(srv.log)
    assert collect(subs, ds, **FAST) == {"fetched": 0, "failed": 0, "skipped": 3, "failed_before": 1}
    assert snapshot(ds) == before                        # not a byte, not a timestamp changed
    assert len(srv.log) == n                             # and nothing was asked of the server
    # the failure is retried only when asked (the server fails once more, then answers)
    assert collect(subs, ds, **{**FAST, "retries": 0, "retry_failed": True})["failed"] == 1
    assert collect(subs, ds, **{**FAST, "retries": 0, "retry_failed": True}) == \
        {"fetched": 1, "failed": 0, "skipped": 2, "failed_before": 0}
    assert len(ds.submissions()) == 3
    lines = journal_lines(ds)
    assert [r["error"] is None for r in lines if "reset" in r["url"]] == [False, False, True]
    assert sum(1 for r in lines if not r["error"]) == 3   # one success line per page
    assert_journal_agrees_with_files(ds)


def test_resume_repairs_a_torn_journal_and_a_page_without_its_line(srv, tmp_path):
    subs = [submission_from_url(srv.url(f"/page?t={i}")) for i in range(4)]
    ds = Dataset.create(tmp_path / "ds", name="torn")
    collect(subs[:2], ds, **FAST)
    # a run killed mid-append leaves half a line; one killed between page and line leaves a page
    sid = ds.add_submission(subs[2])["id"]
    ds.write_page(sid, b"<html>stale</html>")
    with open(ds.journal_path, "a") as fh:
        fh.write('{"submission": "' + sid + '", "url": "ht')
    n = len(srv.log)
    assert collect(subs, ds, **FAST)["fetched"] == 2
    assert [e[2] for e in srv.log[n:] if e[2] != "/robots.txt"] == ["/page?t=2", "/page?t=3"]
    assert len(journal_lines(ds)) == 4                    # parses: the torn line was cut
    assert b"stale" not in (ds.path / "pages" / f"{sid}.html").read_bytes()
    assert_journal_agrees_with_files(ds)


def test_post_submissions_and_hosts_in_parallel(srv, tmp_path):
    lines = [{"method": "POST", "action": srv.url("/search"), "fields": [{"name": "q", "value": f"v{i}"}]}
             for i in range(3)]
    lines += [{"method": "GET", "action": f"http://localhost:{srv.port}/page", "fields": {"h": str(i)}}
              for i in range(3)]
    f = tmp_path / "subs.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ds = Dataset.create(tmp_path / "ds", name="post")
    n = len(srv.log)
    summary = collect(read_submissions(f), ds, **{**FAST, "delay": 0.25, "workers": 2, "robots": False,
                                                  "probes": 0})
    assert summary["fetched"] == 6
    log = srv.log[n:]
    posts = [e for e in log if e[1] == "POST"]
    gets = [e for e in log if e[2].startswith("/page?h=")]
    assert [e[3] for e in posts] == [b"q=v0", b"q=v1", b"q=v2"]
    # the two hosts (127.0.0.1 and localhost) ran side by side, each at its own pace
    assert gets[0][0] < posts[-1][0] and posts[0][0] < gets[-1][0]
    assert all(b[0] - a[0] >= 0.24 for a, b in zip(posts, posts[1:]))
    for page in ds.pages():
        html = page.read_html().decode()
        assert ("Results (POST)" in html) == (page.submission["method"] == "POST")
    assert_journal_agrees_with_files(ds)


def run_cli(*args, **kw):
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    return subprocess.run([sys.executable, "-m", "hwnoise.cli", "collect", *args], capture_output=True,
                          text=True, env=env, cwd=kw.get("cwd", REPO))


def test_sigkill_midway_then_resume_completes_without_duplicates(srv, tmp_path):
    n_pages = 30
    urls = [srv.url(f"/page?k={i}&sleep=0.05") for i in range(n_pages)]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    into = tmp_path / "ds"
    env = {**os.environ, "HWNOISE_PROGRESS": "0"}
    cmd = [sys.executable, "-m", "hwnoise.cli", "collect", str(tmp_path / "urls.txt"), "--into", str(into),
           "--allow-private", "--delay", "0", "--quiet"]
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    journal = into / "journal.jsonl"
    while proc.poll() is None and (not journal.exists() or journal.read_bytes().count(b"\n") < 8):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    done_before = journal.read_bytes().count(b"\n")
    assert 8 <= done_before < n_pages

    res = run_cli(str(tmp_path / "urls.txt"), "--into", str(into), "--allow-private", "--delay", "0")
    assert res.returncode == 0, res.stderr
    assert f"{n_pages - done_before} fetched" in res.stderr or f"{n_pages - done_before + 1} fetched" in res.stderr
    ds = Dataset(into)
    lines = journal_lines(ds)
    assert sorted(r["url"] for r in lines) == sorted(urls)       # complete, each page once
    assert len({r["submission"] for r in lines}) == n_pages == len(ds.submissions())
    assert_journal_agrees_with_files(ds)
    # the server saw each page once, but for the one in flight when the kill came
    hits = [sum(1 for e in srv.log if e[2] == f"/page?k={i}&sleep=0.05") for i in range(n_pages)]
    assert min(hits) == 1 and sum(hits) <= n_pages + 1

    before, n = snapshot(ds), len(srv.log)
    res = run_cli(str(tmp_path / "urls.txt"), "--into", str(into), "--allow-private", "--delay", "0")
    assert res.returncode == 0 and "0 fetched" in res.stderr
    assert snapshot(ds) == before and len(srv.log) == n


def test_cli_collects_a_form_through_its_form_page(srv, tmp_path):
    values = tmp_path / "values.csv"
    values.write_text("Drink name,description,cat\nmojito,mint,ck\nnegroni,,\n")
    into = tmp_path / "ds"
    res = run_cli("--form", srv.url("/form"), "--values", str(values), "--into", str(into),
                  "--allow-private", "--delay", "0")
    assert res.returncode == 0, res.stderr
    assert "2 fetched, 0 failed" in res.stderr and "warning" not in res.stderr
    ds = Dataset(into)
    subs = ds.submissions()
    assert [s["url"].split("?", 1)[1] for s in subs] == [
        "session=s3cr3t&item_name=mojito&description=mint&cat=ck&alcoholic=yes&maxPrice=&go=Find+drinks",
        "session=s3cr3t&item_name=negroni&description=&cat=sh&alcoholic=yes&maxPrice=&go=Find+drinks"]
    html = ds.page(subs[0]["id"]).read_html().decode()
    assert "<b>item_name</b> mojito" in html and "<b>session</b> s3cr3t" in html
    kinds = {(q["term"], q["kind"]) for q in ds.query()}
    assert {("drink", "visible_label"), ("ingredient", "visible_label"), ("highest", "visible_label"),
            ("item", "name"), ("mojito", "value"), ("negroni", "value")} <= kinds
    assert ("s3cr3t", "value") not in kinds            # a hidden token is not a query term
    assert json.loads((into / "dataset.json").read_text())["source"] == "form"


def test_cli_warns_of_value_names_the_form_has_no_field_of(srv, tmp_path):
    values = tmp_path / "values.jsonl"
    values.write_text('{"item_nmae": "mojito"}\n')               # a typo of item_name
    res = run_cli("--form", srv.url("/form"), "--values", str(values), "--into", str(tmp_path / "ds"),
                  "--allow-private", "--delay", "0")
    assert res.returncode == 0, res.stderr
    warning = [ln for ln in res.stderr.splitlines() if "warning" in ln]
    assert len(warning) == 1 and "'item_nmae'" in warning[0] and "'item_name'" in warning[0]


def test_cli_exit_status_and_clear_errors(srv, tmp_path):
    (tmp_path / "dead.txt").write_text(srv.url("/gone") + "\n" + srv.url("/image") + "\n")
    res = run_cli(str(tmp_path / "dead.txt"), "--into", str(tmp_path / "ds"), "--allow-private",
                  "--delay", "0", "--retries", "0")
    assert res.returncode == 1 and "nothing could be fetched" in res.stderr
    assert "0 fetched, 2 failed" in res.stderr
    # private address without the flag: refused, and said so
    (tmp_path / "one.txt").write_text(srv.url("/page?x=1") + "\n")
    res = run_cli(str(tmp_path / "one.txt"), "--into", str(tmp_path / "ds2"), "--delay", "0")
    assert res.returncode == 1 and "--allow-private" in res.stderr
    # a bad submissions file: one line naming file and line, nothing written
    (tmp_path / "bad.txt").write_text(srv.url("/page") + "\nnot a url\n")
    res = run_cli(str(tmp_path / "bad.txt"), "--into", str(tmp_path / "ds3"))
    assert res.returncode == 1
    assert res.stderr.strip().startswith("hwnoise: error:") and "bad.txt:2:" in res.stderr
    assert not (tmp_path / "ds3").exists()
    res = run_cli("--form", srv.url("/form"), "--into", str(tmp_path / "ds4"))
    assert res.returncode == 1 and "--form and --values go together" in res.stderr


def test_python_callers_may_pass_action_and_fields_only(srv, tmp_path):
    ds = Dataset.create(tmp_path / "ds", name="py")
    subs = [{"method": "GET", "action": srv.url("/page"), "fields": [{"name": "z", "value": "1 2"}]}]
    assert collect(subs, ds, **FAST)["fetched"] == 1
    (page,) = ds.pages()
    assert page.url == srv.url("/page?z=1+2") and b"<b>z</b> 1 2" in page.read_html()


def test_post_form_through_its_form_page(srv, tmp_path):
    from hwnoise.forms.formpage import read_form, submissions_from_form

    form = read_form(srv.url("/post-form"), allow_private=True)
    assert form.method == "POST" and form.action == srv.url("/search")
    subs = submissions_from_form(form, [{"item_name": "mojito"}, {"Ingredient": "lime", "cat": "Cocktails"}])
    ds = Dataset.create(tmp_path / "ds", name="postform")
    n = len(srv.log)
    assert collect(subs, ds, **FAST)["fetched"] == 2
    bodies = [e[3] for e in srv.log[n:] if e[1] == "POST"]
    assert bodies[:2] == [b"session=s3cr3t&item_name=mojito&description=&cat=sh&alcoholic=yes&maxPrice=&go=Find+drinks",
                          b"session=s3cr3t&item_name=&description=lime&cat=ck&alcoholic=yes&maxPrice=&go=Find+drinks"]
    # then two probes: the first submission with a made-up word in each field the crawl typed
    # words into (item_name, description), the rest as it was (a price field stays empty)
    assert len(bodies) == 4 and bodies[2] != bodies[3]
    for body in bodies[2:]:
        fields = dict(x.split(b"=") for x in body.split(b"&"))
        assert fields[b"item_name"].startswith(b"zq") and fields[b"description"] == fields[b"item_name"]
        assert fields[b"cat"] == b"sh" and fields[b"maxPrice"] == b"" and fields[b"session"] == b"s3cr3t"
    assert len(ds.probes()) == 2 and len(list(ds.pages())) == 2  # probes are not pages
    assert all(rec["fields"] and body for rec, body in ds.probes())
    n = len(srv.log)
    assert collect(subs, ds, **FAST)["fetched"] == 0 and len(srv.log) == n  # a rerun: nothing again
    assert all(r["method"] == "POST" and r["url"] == srv.url("/search") for r in journal_lines(ds))
    assert len({r["submission"] for r in journal_lines(ds)}) == 2    # same URL, different pages


def test_an_early_hints_answer_is_not_taken_for_the_page(srv, tmp_path):
    # a 103 before the answer: http.client took the 103 for the answer (an empty page) and read
    # the real answer, left on the kept-alive connection, as the next submission's page
    urls = [srv.url("/early-hints?q=hinted"), srv.url("/page?q=next")]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    ds = Dataset.create(tmp_path / "ds")
    assert collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, probes=0)["fetched"] == 2
    recs = {r["url"]: r for r in journal_lines(ds)}
    hinted, after = (ds.page(recs[u]["submission"]).read_html().decode() for u in urls)
    assert recs[urls[0]]["status"] == 200 and "(after early hints)" in hinted and "hinted" in hinted
    assert "early hints" not in after and "<b>q</b> next" in after
    assert_journal_agrees_with_files(ds)


def test_an_answer_without_a_page_is_a_failure_not_an_empty_page(srv, tmp_path):
    # a 204 (a search answered with no result page) or a 304 (hwnoise asks nothing conditional)
    # was kept as a page of 0 bytes, journaled a success: an empty "result page" in the dataset.
    # Now a failure journaled with its status, as a 3xx without a Location is, retried only when asked
    urls = [srv.url(f"/no-page?code={code}") for code in (204, 205, 304)] + \
        [srv.url("/redirect?code=302"), srv.url("/page?q=after")]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    ds = Dataset.create(tmp_path / "ds")
    assert collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, probes=0) == \
        {"fetched": 1, "failed": 4, "skipped": 0, "failed_before": 0}
    recs = {r["url"]: r for r in journal_lines(ds)}
    for url, code, why in zip(urls, (204, 205, 304, 302), ("No Content", "Reset Content", "Not Modified",
                                                           "without a Location")):
        rec = recs[url]
        assert rec["status"] == code and rec["error"].startswith(f"{url}: HTTP {code} {why}")
        assert rec["bytes"] is None and rec["sha256"] is None and rec["attempts"] == 1
    assert "no page" in recs[urls[0]]["error"] and "was not conditional" in recs[urls[2]]["error"]
    assert_journal_agrees_with_files(ds)
    assert [p.id for p in ds.pages()] == [recs[urls[-1]]["submission"]]
    n = srv.hits("/no-page")
    assert collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, probes=0)["failed_before"] == 4
    assert srv.hits("/no-page") == n
    assert collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, probes=0, retry_failed=True)["failed"] == 4
    assert srv.hits("/no-page") == n + 3


def test_a_partial_content_answer_is_a_failure_not_a_page(srv, tmp_path, capsys):
    # a 206 to a request that asked no range (a cache or server answering ranges anyway) holds part
    # of a page: it was kept as the page (100 bytes of it), journaled a success. Now a failure naming
    # the URL, the status and the range, in the journal and in the run's report
    url = srv.url("/partial")
    (tmp_path / "urls.txt").write_text(url + "\n")
    ds = Dataset.create(tmp_path / "ds")
    summary = collect(read_submissions(tmp_path / "urls.txt"), ds, **{**FAST, "progress": True}, probes=0)
    assert summary == {"fetched": 0, "failed": 1, "skipped": 0, "failed_before": 0}
    rec = journal_lines(ds)[0]
    assert rec["status"] == 206 and rec["bytes"] is None and rec["sha256"] is None
    assert rec["error"].startswith(f"{url}: HTTP 206 Partial Content") and "bytes 0-99/" in rec["error"]
    assert list(ds.pages()) == []
    assert_journal_agrees_with_files(ds)
    assert f"failed: {url}: HTTP 206 Partial Content" in capsys.readouterr().err


def test_a_page_an_older_run_kept_from_an_answer_without_one_is_fetched_again(srv, tmp_path, capsys):
    # runs before 204, 205, 304 and 206 were failures journaled them successes and kept their bodies
    # (empty, or part of a page) as pages: a resumed run skipped them as done, --retry-failed too,
    # and they stayed in the dataset as pages. Now they are fetched again (and fail, said so), their
    # files no longer pages
    urls = [srv.url("/no-page?code=204&k=old"), srv.url("/partial?k=old"), srv.url("/page?q=kept")]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    ds = Dataset.create(tmp_path / "ds")
    collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, probes=0)
    lines = journal_lines(ds)
    for rec, body in zip(lines[:2], (b"", b"<!DOCTYPE html><html><head><meta charset")):  # as an older run left them
        rec.update(error=None, bytes=len(body), sha256=hashlib.sha256(body).hexdigest())
        ds.write_page(rec["submission"], body)
    ds.journal_path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    kept = (ds.path / "pages" / f"{lines[2]['submission']}.html").read_bytes()
    capsys.readouterr()
    n = len(srv.log)
    assert collect(read_submissions(tmp_path / "urls.txt"), ds, **{**FAST, "progress": True}, probes=0) == \
        {"fetched": 0, "failed": 2, "skipped": 1, "failed_before": 0}
    assert sorted(e[2] for e in srv.log[n:] if e[2] != "/robots.txt") == sorted(u[len(srv.url("")):] for u in urls[:2])
    err = capsys.readouterr().err
    assert "2 page(s) an earlier run kept from answers without a whole page (HTTP 204, 206;" in err
    assert f"failed: {urls[0]}: HTTP 204 No Content" in err and f"failed: {urls[1]}: HTTP 206" in err
    assert [p.id for p in ds.pages()] == [lines[2]["submission"]]
    assert ds.page(lines[2]["submission"]).read_html() == kept
    assert_journal_agrees_with_files(ds)
    n = len(srv.log)
    assert collect(read_submissions(tmp_path / "urls.txt"), ds, **FAST, probes=0)["failed_before"] == 2
    assert len(srv.log) == n


def test_a_form_whose_site_needs_the_session_cookie_of_its_page(srv, tmp_path):
    # the form page's Set-Cookie was dropped (it was fetched apart from the submissions): a site that
    # answers a search only in the session its form page opened redirected each one back to the
    # form, and the form page was kept as every result page. The page's cookies go with the
    # submissions (and the probes), as a browser's would; a rerun reads the form, and its cookie, again
    values = tmp_path / "values.csv"
    values.write_text("q\nmojito\nnegroni\n")
    argv = ("--form", srv.url("/session-form"), "--values", str(values), "--into", str(tmp_path / "ds"),
            "--allow-private", "--delay", "0", "--probes", "1")
    res = run_cli(*argv)
    assert res.returncode == 0, res.stderr
    assert "2 fetched, 0 failed" in res.stderr
    ds = Dataset(tmp_path / "ds")
    pages = [ds.page(s["id"]).read_html().decode() for s in ds.submissions()]
    assert "<b>q</b> mojito" in pages[0] and "<b>q</b> negroni" in pages[1]
    assert all("(session s" in p for p in pages) and not srv.hits("/session-form?expired")
    assert [(r["status"], r["redirects"]) for r in journal_lines(ds)] == [(200, []), (200, [])]
    ((probe, body),) = ds.probes()
    assert probe["status"] == 200 and b"(session s" in body

"""Hostile search-form pages served from 127.0.0.1: ``hwnoise collect --form`` sends what a
browser sends for them (the expected requests are Chromium's, checked against Chromium itself
by ``test_chromium_sends_the_same``), or stops in one line naming the page."""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from hwnoise.cli import main
from hwnoise.forms.formpage import FormError, read_form

CHROMIUM = "/usr/bin/chromium"

#: name -> (page HTML, its bytes' encoding, Content-Type, value set, the request Chromium sends:
#: "METHOD path?query" and the body)
CASES = {
    "windows-1252 GET": (
        '<html><head><meta charset="windows-1252"></head><body><form action="/page">'
        '<input name="q"><input type="hidden" name="z" value="café €"></form></body></html>',
        "cp1252", "text/html", {"q": "naïve 日本"},
        "GET /page?q=na%EFve+%26%2326085%3B%26%2326412%3B&z=caf%E9+%80", b""),
    "windows-1252 POST": (
        '<html><head><meta charset="windows-1252"></head><body><form action="/page" method="post">'
        '<input name="q"><input type="hidden" name="z" value="café €"></form></body></html>',
        "cp1252", "text/html", {"q": "naïve 日本"},
        "POST /page", b"q=na%EFve+%26%2326085%3B%26%2326412%3B&z=caf%E9+%80"),
    "Shift_JIS from the header": (
        '<html><body><form action="/page"><input name="名前"><input type="hidden" name="z" value="é"></form>'
        "</body></html>",
        "shift_jis", "text/html; charset=Shift_JIS", {"名前": "日本語"},
        "GET /page?%96%BC%91O=%93%FA%96%7B%8C%EA&z=%26%23233%3B", b""),
    "accept-charset": (
        '<html><head><meta charset="utf-8"></head><body><form action="/page" accept-charset="x-bogus ISO-8859-1">'
        '<input name="q"></form></body></html>',
        "utf-8", "text/html", {"q": "café ☃"},
        "GET /page?q=caf%E9+%26%239731%3B", b""),
    "multipart in windows-1252": (
        '<html><head><meta charset="windows-1252"></head><body>'
        '<form action="/page" method="post" enctype="multipart/form-data"><input name="q"></form></body></html>',
        "cp1252", "text/html", {"q": "café"},
        "POST /page", b'Content-Disposition: form-data; name="q"\r\n\r\ncaf\xe9\r\n'),
    "XHTML with an XML declaration": (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml"><body>'
        '<form action="/page"><input name="q" /><input type="hidden" name="z" value="café" /></form></body></html>',
        "cp1252", "text/html", {"q": "tea"},
        "GET /page?q=tea&z=caf%E9", b""),
    "<base href>": (
        '<html><head><base href="/"></head><body><form action="page"><input name="q"></form></body></html>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea", b""),
    "the default button: unnamed, then named": (
        '<form action="/page"><input name="q"><input type="submit" value="Search">'
        '<input type="submit" name="export" value="CSV"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea", b""),
    "the default button: its formaction and formmethod, no value": (
        '<form action="/nowhere"><input name="q"><button name="go" formaction="/page" formmethod="POST">Find'
        '</button><input type="submit" name="other" value="x" formaction="/elsewhere"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "POST /page", b"q=tea&go="),
    "the default button: an image": (
        '<form action="/page"><input name="q"><input type="image" name="img" src="/image">'
        '<button type="bogus" name="b" value="1">B</button></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&img.x=0&img.y=0", b""),
    "the default button: a button of an unknown type, a submit input without value": (
        '<form action="/page"><input name="q"><button type="bogus" name="b" value="1">B</button>'
        '<input type="submit" name="s"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&b=1", b""),
    "a submit input without value": (
        '<form action="/page"><input name="q"><input type="submit" name="s" disabled><input type="submit" name="t">'
        '</form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&t=Submit", b""),
    "a disabled fieldset": (
        '<form action="/page"><input name="q"><fieldset disabled><legend><input name="kept" value="1"></legend>'
        '<input name="off" value="2"><select name="s"><option>a</option></select></fieldset><input type="submit"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&kept=1", b""),
    "selects: a disabled optgroup, a list box, a disabled selected option": (
        '<form action="/page"><input name="q"><select name="a"><optgroup label="old" disabled><option>x</option>'
        '</optgroup><option>y</option></select><select name="b" size="3"><option>m</option></select>'
        '<select name="c"><option selected disabled>Pick one</option><option>z</option></select></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&a=y", b""),
    # the form a control belongs to is the one a browser's parser points at (its form element
    # pointer), not the one libxml2 ends at an enclosing end tag or a nested <form>
    "a form ended by its div's end tag": (
        '<div><form action="/page"><input name="q"></div><input name="r" value="R"><input type="submit"></form>'
        '<input name="after" value="A">',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&r=R", b""),
    "a form inside a form": (
        '<form action="/page"><input name="q"><form action="/other"><input name="inner" value="I">'
        '<input type="submit"></form><input name="after" value="A">',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&inner=I", b""),
    "a form across table cells": (
        '<table><tr><td><form action="/page"><input name="q"></td><td><input name="r" value="R">'
        '<input type="submit"></form></td></tr></table><input name="after" value="A">',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&r=R", b""),
    "a form directly in a table": (
        '<table><form action="/page"><input type="hidden" name="h" value="H"><tr><td><input name="q"></td>'
        '<td><input type="submit"></td></tr></table><input name="after" value="A"></form>'
        '<input name="later" value="L">',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?h=H&q=tea&after=A", b""),
    "</form> inside a div: the div stays in the form": (
        '<form action="/page"><div><input name="q"></form><input name="r" value="R"><input type="submit"></div>'
        '<input name="z" value="Z">',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&r=R", b""),
    "</form> ends the list item around it, not the list": (
        '<form action="/page"><ul><li><input name="q"></form><li><input name="r" value="R"><input type="submit">'
        '</ul><input name="z" value="Z">',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&r=R", b""),
    "</form> in a select: the form stays open, the pointer is cleared": (
        '<form action="/page"><input name="q"><select name="s"><option>a</form></select><input name="r" value="R">'
        '<input type="submit"><form action="/other"><input name="o" value="O"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&s=a&r=R", b""),
    "a template, form=\"\", form= an ID a div has first": (
        '<div id="f"></div><form id="f" action="/page"><input name="q"><template><input name="t" value="T">'
        '</template></form><input name="e" form="f" value="E"><input name="e2" form="" value="E">',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea", b""),
    # with scripting on, as in the browser a user fills the form in, <noscript> holds text: its
    # fields are no fields of the form, a form in it no form of the page
    "a field in <noscript>": (
        '<form action="/page" id="f"><input name="q"><noscript><input type="hidden" name="nojs" value="1">'
        '<select name="s"><option>a</select></noscript><input type="submit"></form>'
        '<noscript><input name="by-id" form="f" value="1"></noscript><template><input name="t" form="f"></template>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea", b""),
    "a form in <noscript> beside the scripted one": (
        '<noscript><form action="/basic"><input name="q"><input name="b" value="B"></form></noscript>'
        '<form action="/page"><input name="q"><input type="submit"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea", b""),
    # nested past libxml2's default limit (256 levels) or its huge_tree limit (2,048), which drop the rest
    "a form 300 levels deep": (
        "<div>" * 297 + '<form action="/page"><input name="q"><select name="s"><option>a</select></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&s=a", b""),
    "a form after 3,000 levels closed again": (
        "<div>" * 3000 + "x" + "</div>" * 3000 + '<form action="/page"><input name="q"><select name="s"><option>a'
        "</select></form>",
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&s=a", b""),
    # method and enctype are keywords in any case, not trimmed; an enctype a browser does not know
    # is urlencoded
    "method=' PoSt ' is no keyword: GET": (
        '<form action="/page" method=" PoSt "><input name="q"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea", b""),
    "text/plain in windows-1252": (
        '<html><head><meta charset="windows-1252"></head><body><form action="/page" method="POST" '
        'enctype="TEXT/PLAIN"><input name="q"><input type="hidden" name="z" value="a=b ☃"></form></body></html>',
        "cp1252", "text/html", {"q": "té"},
        "POST /page", b"q=t\xe9\r\nz=a=b &#9731;\r\n"),
    "multipart/mixed is urlencoded": (
        '<form action="/page" method="post" enctype="multipart/mixed"><input name="q"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "POST /page", b"q=tea"),
    "enctype=' multipart/form-data' is urlencoded": (
        '<form action="/page" method="post" enctype=" multipart/form-data"><input name="q"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "POST /page", b"q=tea"),
    "a type is a keyword in any case, not trimmed": (
        '<form action="/page"><input name="q"><input type=" checkbox" name="c" value="1">'
        '<input type="HIDDEN" name="h" value="2"><button type=" reset" name="b" value="B">Go</button></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&c=1&h=2&b=B", b""),
    # line breaks go as CRLF (in names too); a one-line field has none (an email field no outer spaces)
    "line breaks": (
        '<form action="/page"><input name="q"><textarea name="t">a\r\nb\rc\nd</textarea>'
        '<input type="hidden" name="h" value="x&#10;y&#13;z"><input type="hidden" name="a&#10;b" value="1">'
        '<input type="email" name="e" value=" a@b.c "><input type="submit"></form>',
        "utf-8", "text/html", {"q": "l1\nl2"},
        "GET /page?q=l1l2&t=a%0D%0Ab%0D%0Ac%0D%0Ad&h=x%0D%0Ay%0D%0Az&a%0D%0Ab=1&e=a%40b.c", b""),
    "line breaks in multipart": (
        '<form action="/page" method="post" enctype="multipart/form-data"><input name="q">'
        '<textarea name="t">a\rb\nc</textarea></form>',
        "utf-8", "text/html", {"q": "tea"},
        "POST /page", b'Content-Disposition: form-data; name="t"\r\n\r\na\r\nb\r\nc\r\n'),
    "line breaks in text/plain": (
        '<form action="/page" method="post" enctype="text/plain"><input name="q"><textarea name="t">x\ny</textarea>'
        '</form>',
        "utf-8", "text/html", {"q": "tea"},
        "POST /page", b"q=tea\r\nt=x\r\ny\r\n"),
    # a hidden _charset_ field (in any case) sends the name of the form's encoding
    "_charset_ in windows-1252": (
        '<html><head><meta charset="windows-1252"></head><body><form action="/page"><input name="q">'
        '<input type="hidden" name="_charset_"><input type="hidden" name="_CHARSET_" value="keep">'
        '<input name="_charset_" value="text"><input type="submit"></form></body></html>',
        "cp1252", "text/html", {"q": "tea"},
        "GET /page?q=tea&_charset_=windows-1252&_CHARSET_=windows-1252&_charset_=text", b""),
    # a label of the Encoding Standard Python's codecs do not know (x-mac-cyrillic: macCyrillic)
    "x-mac-cyrillic": (
        '<html><head><meta charset="x-mac-cyrillic"></head><body><form action="/page"><input name="q">'
        '<input type="hidden" name="z" value="ёж"><input type="hidden" name="_charset_"></form></body></html>',
        "mac_cyrillic", "text/html", {"q": "Привет € 日"},
        "GET /page?q=%8F%F0%E8%E2%E5%F2+%FF+%26%2326085%3B&z=%DE%E6&_charset_=x-mac-cyrillic", b""),
    "_charset_ from accept-charset": (
        '<form action="/page" accept-charset="shift_jis"><input name="q"><input type="hidden" name="_charset_">'
        '</form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&_charset_=Shift_JIS", b""),
    # a dirname sends the field's direction after it (it was left out: q.dir= missing); dir=auto
    # from the value typed, else the nearest dir="rtl" or "ltr" around it
    "dirname": (
        '<form action="/page"><input name="q" dirname="q.dir"><input type="submit"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&q.dir=ltr", b""),
    "dirname: auto and inherited": (
        '<html><head><meta charset="utf-8"></head><body><div dir="rtl"><form action="/page">'
        '<input name="q" dir="auto" dirname="q.dir"><input name="w" dirname="w.dir">'
        '<textarea name="t" dirname="t.dir">x</textarea><input type="submit"></form></div></body></html>',
        "utf-8", "text/html", {"q": "\u0645\u0631\u062d\u0628\u0627", "w": "tea"},
        "GET /page?q=%D9%85%D8%B1%D8%AD%D8%A8%D8%A7&q.dir=rtl&w=tea&w.dir=rtl&t=x&t.dir=rtl", b""),
    # a submit input's dirname: Chromium sends its direction before the pressed button's value, and
    # an unpressed one's too, where it stands (the spec sends the submitter's only); dir=auto is ltr
    # (its direction is not the caption's); a <button>'s, a reset's or a disabled one's is not sent
    "dirname of submit buttons": (
        '<html><head><meta charset="utf-8"></head><body><div dir="rtl"><form action="/page">'
        '<input name="q" dirname="q.dir"><input type="submit" name="go" value="Find" dirname="go.dir">'
        '<input type="hidden" name="z" value="1"><input type="submit" name="csv" value="CSV" dirname="">'
        '<button name="b" value="v" dirname="b.dir">B</button><input type="reset" name="r" dirname="r.dir">'
        '<input type="submit" name="off" dirname="off.dir" disabled></form></div></body></html>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&q.dir=rtl&go.dir=rtl&go=Find&z=1&=rtl", b""),
    "dirname of a submit button not pressed, between fields": (
        '<form action="/page"><input name="q"><input type="submit" name="a" value="A">'
        '<input type="submit" name="go" value="G" dirname="go.dir"><input type="hidden" name="z" value="1"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&a=A&go.dir=ltr&z=1", b""),
    "dirname of a submit button: auto, no value": (
        '<html><head><meta charset="utf-8"></head><body><form action="/page"><input name="q">'
        '<input type="submit" name="go" dir="auto" dirname="go.dir"></form></body></html>',
        "utf-8", "text/html", {"q": "\u05d7\u05e4\u05e9"},
        "GET /page?q=%D7%97%D7%A4%D7%A9&go.dir=ltr&go=Submit", b""),
    # a file control sends its name with no file (it was left out: f= missing); a disabled one nothing
    "a file control, GET": (
        '<form action="/page"><input name="q"><input type="file" name="f" multiple>'
        '<input type="file" name="off" disabled><input type="submit"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "GET /page?q=tea&f=", b""),
    "a file control, multipart": (
        '<form action="/page" method="post" enctype="multipart/form-data"><input name="q">'
        '<input type="file" name="f"><input type="submit"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "POST /page", b'Content-Disposition: form-data; name="f"; filename=""\r\n'
                      b'Content-Type: application/octet-stream\r\n\r\n\r\n'),
    "a file control, text/plain": (
        '<form action="/page" method="post" enctype="text/plain"><input name="q">'
        '<input type="file" name="f"><input type="submit"></form>',
        "utf-8", "text/html", {"q": "tea"},
        "POST /page", b"q=tea\r\nf=\r\n"),
}

#: forms nested past the 512 levels Chromium builds: name -> (page HTML, the one-line error)
TOO_DEEP = {
    "600 levels": ("<div>" * 600 + '<form action="/page"><input name="q"></form>',
                   "the form is nested 603 levels deep, past the 512 a browser builds"),
    "3,000 levels": ("<b>" * 3000 + '<form action="/page"><input name="q"></form>',
                     "no <form> within the 512 levels of nesting a browser builds (the page nests deeper"),
}


def _collect(srv, tmp_path: Path, capsys, name: str, values: dict) -> tuple[int, str]:
    """``hwnoise collect --form`` on the page served as ``name`` with one value set."""
    (tmp_path / "v.jsonl").write_text(json.dumps(values) + "\n", encoding="utf-8")
    code = main(["collect", "--form", srv.url(f"/served/{name}"), "--values", str(tmp_path / "v.jsonl"),
                 "--into", str(tmp_path / "ds"), "-q", "--allow-private", "--delay", "0", "--probes", "0"])
    return code, capsys.readouterr().err


def _serve(srv, case: str) -> str:
    html, encoding, ctype, *_ = CASES[case]
    name = re.sub(r"[^A-Za-z0-9]+", "-", case)
    srv.pages[name] = (ctype, html.encode(encoding, "xmlcharrefreplace"))
    return name


def _sent(srv, before: int) -> tuple[str, bytes]:
    """The request the form's submission made after ``before`` log entries: its line and body."""
    (entry,) = [e for e in srv.log[before:] if e[2].startswith("/page")]
    _, method, path, body, _ = entry
    return f"{method} {path}", body


@pytest.mark.parametrize("case", list(CASES))
def test_a_form_is_sent_as_chromium_sends_it(srv, tmp_path, capsys, case):
    *_, values, line, body = CASES[case]
    before = len(srv.log)
    code, err = _collect(srv, tmp_path, capsys, _serve(srv, case), values)
    assert code == 0, err
    got_line, got_body = _sent(srv, before)
    assert got_line == line
    assert body in got_body if line.startswith("POST") and b"form-data" in body else got_body == body


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_chromium_sends_the_same(srv):
    """The expectations above are what Chromium sends: each page loaded, its text fields filled,
    the form submitted with its default button."""
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    # Enter in the first field filled (implicit submission: the default button is pressed); a form
    # whose default button is disabled is submitted by a click on its first enabled button
    fill = """([values]) => { const f = document.forms[0];
        for (const [k, v] of Object.entries(values)) f.elements[k].value = v;
        const first = Array.from(f.elements).find(e => e.type === 'submit' || e.type === 'image');
        if (first && first.disabled) {
            f.requestSubmit(Array.from(f.elements).find(e => e.type === 'submit' && !e.disabled)); return false; }
        f.elements.namedItem(Object.keys(values)[0]).focus(); return true; }"""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for case, (*_, values, line, body) in CASES.items():
                page = browser.new_page()
                page.goto(srv.url(f"/served/{_serve(srv, case)}"))
                before = len(srv.log)
                with page.expect_navigation():
                    if page.evaluate(fill, [values]):
                        page.keyboard.press("Enter")
                got_line, got_body = _sent(srv, before)
                assert (case, got_line) == (case, line)
                if b"form-data" in body:
                    assert body in got_body, case
                else:
                    assert (case, got_body) == (case, body)
                page.close()
        finally:
            browser.close()


@pytest.mark.parametrize("case", list(TOO_DEEP))
def test_a_form_nested_deeper_than_a_browser_builds_is_named_so(srv, tmp_path, capsys, case):
    # was 'no <form> on the page' (libxml2 dropped all below its limit)
    html, message = TOO_DEEP[case]
    srv.pages["deep"] = ("text/html", html.encode())
    before = len(srv.log)
    code, err = _collect(srv, tmp_path, capsys, "deep", {"q": "tea"})
    assert code == 1
    assert err.startswith(f"hwnoise: error: {srv.url('/served/deep')}: {message}") and err.count("\n") == 1
    assert not [e for e in srv.log[before:] if e[2].startswith("/page")]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_chromium_sends_no_field_of_a_form_nested_too_deep(srv):
    """What the error above says: Chromium submits such a form without any of its fields."""
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for case, (html, _) in TOO_DEEP.items():
                srv.pages["deep"] = ("text/html", html.encode())
                page = browser.new_page()
                page.goto(srv.url("/served/deep"))
                before = len(srv.log)
                with page.expect_navigation():
                    page.evaluate("() => { document.querySelector('input').value = 'tea'; "
                                  "document.forms[0].requestSubmit(); }")
                assert (case, _sent(srv, before)) == (case, ("GET /page?", b""))
                page.close()
        finally:
            browser.close()


@pytest.mark.parametrize("form", ['<form action="/page" method="Dialog"><input name="q"></form>',
                                  '<form action="/page"><input name="q"><button formmethod="dialog">OK</button></form>'])
def test_a_dialog_form_is_refused(srv, tmp_path, capsys, form):
    # was sent as GET; a browser submitting it closes its <dialog> and sends nothing
    srv.pages["dialog"] = ("text/html", form.encode())
    before = len(srv.log)
    code, err = _collect(srv, tmp_path, capsys, "dialog", {"q": "tea"})
    assert code == 1
    assert err == (f"hwnoise: error: {srv.url('/served/dialog')}: the form's method is dialog: a browser closes the "
                   "dialog it is in and sends no request\n")
    assert not [e for e in srv.log[before:] if e[2].startswith("/page")]


def test_the_submission_keeps_the_forms_encoding(srv, tmp_path, capsys):
    # submissions.jsonl keeps the encoding, so a rerun from it (or a probe) sends the same bytes
    code, err = _collect(srv, tmp_path, capsys, _serve(srv, "windows-1252 POST"), {"q": "é"})
    assert code == 0, err
    (sub,) = [json.loads(x) for x in (tmp_path / "ds" / "submissions.jsonl").read_text().splitlines()]
    assert sub["charset"] == "windows-1252"
    before = len(srv.log)
    assert main(["collect", str(tmp_path / "ds" / "submissions.jsonl"), "--into", str(tmp_path / "again"),
                 "-q", "--allow-private", "--delay", "0", "--probes", "0"]) == 0
    assert _sent(srv, before)[1] == b"q=%E9&z=caf%E9+%80"
    assert urlsplit(sub["url"]).path == "/page"


def test_an_empty_action_is_the_page_itself_whatever_base_says():
    html = '<html><head><base href="http://cdn.example/static/"></head><body><form><input name=q></form></body></html>'
    assert read_form(html, base_url="http://shop.example/search?x=1").action == "http://shop.example/search?x=1"
    html = html.replace("<form>", '<form action="s">')
    assert read_form(html, base_url="http://shop.example/search").action == "http://cdn.example/static/s"
    bad = '<base href="http://[::1/">' + html   # a <base href> that is no URL is ignored
    assert read_form(bad, base_url="http://shop.example/search").action == "http://shop.example/s"


def test_a_form_inside_a_form_is_no_form_of_the_page():
    # a browser ignores the inner <form> tag (document.forms has /a and /c): --form-index 1 was /b
    html = ('<form action="/a"><input name="q"><form action="/b"><input name="r"></form>'
            '<form action="/c"><input name="s"></form>')
    form = read_form(html, base_url="http://shop.example/", form_index=1)
    assert (form.action, [f.name for f in form.fields]) == ("http://shop.example/c", ["s"])
    assert [f.name for f in read_form(html, base_url="http://shop.example/", form_index=0).fields] == ["q", "r"]
    with pytest.raises(FormError, match="form index 2 out of range; the page has 2 form"):
        read_form(html, base_url="http://shop.example/", form_index=2)


def test_the_form_page_is_fetched_with_the_commands_limits(srv, tmp_path, capsys):
    # --max-bytes (and the other fetch options) held for the result pages only: a form page over
    # 10 MiB was refused with 'raise --max-bytes' however much it was raised
    srv.pages["big"] = ("text/html", b"<html><body>" + b"<p>notes</p>" * 1_000_000
                        + b'<form action="/page"><input name="q"></form></body></html>')
    (tmp_path / "v.jsonl").write_text('{"q": "tea"}\n')
    argv = ["collect", "--form", srv.url("/served/big"), "--values", str(tmp_path / "v.jsonl"), "-q",
            "--allow-private", "--delay", "0", "--probes", "0"]
    assert main([*argv, "--into", str(tmp_path / "a"), "--max-bytes", "1000"]) == 1
    assert "exceeds the maximum of 1000 bytes" in capsys.readouterr().err
    assert main([*argv, "--into", str(tmp_path / "b"), "--max-bytes", str(20 * 1024 * 1024)]) == 0


@pytest.mark.parametrize("form", ["missing/search.html", "ftp://shop.example/search", "."])
def test_a_form_page_that_is_no_file_or_url_is_named_so(tmp_path, capsys, monkeypatch, form):
    # a mistyped path was read as HTML text: 'no <form> on the page'
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v.jsonl").write_text('{"q": "tea"}\n')
    assert main(["collect", "--form", form, "--values", "v.jsonl", "--into", "ds", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"hwnoise: error: {form}: ") and err.count("\n") == 1
    assert ("a folder" if form == "." else "no such file") in err and "not an http or https URL" in err
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("line,field", [('{"q": {"x": 1}}', "'q'"), ('{"q": true}', "'q'"), ('{"q": NaN}', "'q'"),
                                        ('{"q": ["a", ["b"]]}', "'q'"), ('{"q": "a", "n": Infinity}', "'n'")])
def test_a_value_no_field_takes_is_named(srv, tmp_path, capsys, line, field):
    # was sent as Python wrote it: q=%7B%27x%27%3A+1%7D ("{'x': 1}"), q=True, q=nan
    srv.pages["plain"] = ("text/html", b'<form action="/page"><input name="q"><input name="n"></form>')
    (tmp_path / "v.jsonl").write_text('{"q": "fine"}\n' + line + "\n")
    before = len(srv.log)
    assert main(["collect", "--form", srv.url("/served/plain"), "--values", str(tmp_path / "v.jsonl"), "-q",
                 "--into", str(tmp_path / "ds"), "--allow-private", "--delay", "0", "--probes", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"hwnoise: error: {tmp_path / 'v.jsonl'}:2: the value of {field} is ") and err.count("\n") == 1
    assert not [e for e in srv.log[before:] if e[2].startswith("/page")]


def test_a_value_that_is_no_option_is_named(srv, tmp_path, capsys):
    # was sent as given (cat=Fiction for a select whose options are 1 and 2), which no browser can
    srv.pages["select"] = ("text/html", b'<form action="/page"><input name="q"><select name="cat">'
                           b'<option value="1">Novels</option><option value="2">Poetry</option></select>'
                           b'<input type="radio" name="r" value="a"></form>')
    (tmp_path / "v.jsonl").write_text('{"q": "x", "cat": "novels"}\n{"cat": "2", "r": "a"}\n{"cat": "Fiction"}\n')
    argv = ["collect", "--form", srv.url("/served/select"), "--values", str(tmp_path / "v.jsonl"), "-q",
            "--allow-private", "--delay", "0", "--probes", "0"]
    before = len(srv.log)
    assert main([*argv, "--into", str(tmp_path / "ds")]) == 1
    err = capsys.readouterr().err
    assert err == (f"hwnoise: error: {tmp_path / 'v.jsonl'}: value set 3: 'Fiction' for 'cat' is none of its options "
                   "('1', '2'); use an option's value or its text\n")
    assert not [e for e in srv.log[before:] if e[2].startswith("/page")]
    (tmp_path / "v.jsonl").write_text('{"q": "x", "cat": "novels"}\n{"cat": "2", "r": "a"}\n')
    assert main([*argv, "--into", str(tmp_path / "ok")]) == 0
    assert sorted(e[2] for e in srv.log[before:] if e[2].startswith("/page")) == ["/page?q=&cat=2&r=a",
                                                                                 "/page?q=x&cat=1"]


def test_a_form_page_url_holding_a_raw_angle_bracket_is_fetched(srv, tmp_path, capsys):
    # a URL with '<' in it (copied from a site's own links: ?ref=<home>) was read as HTML text:
    # 'no <form> on the page' without a request, or, holding '<form', a form of the URL's text
    srv.pages["plain"] = ("text/html", b'<form action="/page"><input name="q"></form>')
    (tmp_path / "v.jsonl").write_text('{"q": "tea"}\n')
    for i, tail in enumerate(["?ref=<home>", "?x=<form>"]):
        before = len(srv.log)
        assert main(["collect", "--form", srv.url("/served/plain" + tail), "--values", str(tmp_path / "v.jsonl"),
                     "-q", "--into", str(tmp_path / f"ds{i}"), "--allow-private", "--delay", "0",
                     "--probes", "0"]) == 0, capsys.readouterr().err
        sent = [e[2] for e in srv.log[before:] if e[2] != "/robots.txt"]
        assert sent == ["/served/plain" + tail.replace("<", "%3C").replace(">", "%3E"), "/page?q=tea"]
    # a URL that is no page is named in the error, as is a long one (a page's form with 'the HTML given')
    srv.pages["plain"] = ("text/html", b"<p>no form here</p>")
    for url in (srv.url("/served/plain?ref=<home>"), srv.url("/served/plain?" + "k=v&" * 100)):
        with pytest.raises(FormError, match="no <form> on the page") as caught:
            read_form(url, allow_private=True)
        assert str(caught.value).startswith(url + ": ")


def test_a_page_whose_only_form_is_in_noscript_is_named_so(srv, tmp_path, capsys):
    # it was read and submitted: the form of the scripts-off view, which the user's browser never shows
    srv.pages["noscript"] = ("text/html", b'<div id="app"></div><noscript><form action="/page"><input name="q">'
                             b'</form></noscript>')
    (tmp_path / "v.jsonl").write_text('{"q": "tea"}\n')
    url = srv.url("/served/noscript")
    before = len(srv.log)
    assert main(["collect", "--form", url, "--values", str(tmp_path / "v.jsonl"), "-q", "--into",
                 str(tmp_path / "ds"), "--allow-private", "--delay", "0", "--probes", "0"]) == 1
    err = capsys.readouterr().err
    assert err == (f"hwnoise: error: {url}: no <form> on the page with scripting on (as a browser shows it); its "
                   "1 form is inside <noscript>, shown only with scripting off\n")
    assert not [e for e in srv.log[before:] if e[2].startswith("/page")]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_chromium_shows_no_form_of_a_noscript_only_page(srv):
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    srv.pages["noscript"] = ("text/html", b'<noscript><form action="/page"><input name="q"></form></noscript>')
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            counts = []
            for scripts in (True, False):
                page = browser.new_page(java_script_enabled=scripts)
                page.goto(srv.url("/served/noscript"))
                counts.append(page.locator("form").count())
                page.close()
        finally:
            browser.close()
    assert counts == [0, 1]  # scripting on: none (what hwnoise reads); off: the form


def test_a_value_for_a_file_field_is_named(srv, tmp_path, capsys):
    # hwnoise uploads no file: a value for one would be sent as a file's bytes under filename=""
    srv.pages["file"] = ("text/html", b'<form action="/page"><input name="q"><input type="file" name="f"></form>')
    (tmp_path / "v.jsonl").write_text('{"q": "x"}\n{"q": "y", "f": "/etc/passwd"}\n')
    before = len(srv.log)
    assert main(["collect", "--form", srv.url("/served/file"), "--values", str(tmp_path / "v.jsonl"), "-q",
                 "--into", str(tmp_path / "ds"), "--allow-private", "--delay", "0", "--probes", "0"]) == 1
    err = capsys.readouterr().err
    assert err == (f"hwnoise: error: {tmp_path / 'v.jsonl'}: value set 2: 'f' is a file field, and hwnoise uploads "
                   "no file (it is sent empty, as a browser sends it when no file is chosen); leave it out of the "
                   "value sets\n")
    assert not [e for e in srv.log[before:] if e[2].startswith("/page")]

"""Decoding as a browser does: BOM, HTTP charset, meta, detection; lying pages; never failing."""
from __future__ import annotations

from pathlib import Path

import pytest

from hwnoise.decode import ENCODING_LABELS, decode_html, form_charset_name, normalize_label, sniff_encoding

CHROMIUM = "/usr/bin/chromium"
QUOTED = "\u201cquoted\u201d café"


@pytest.mark.parametrize("label", ["latin1", "ISO-8859-1", "iso_8859-1", "ascii", "US-ASCII",
                                   "cp1252", "Windows-1252", " 'latin1' "])
def test_latin1_and_ascii_labels_mean_windows_1252(label):
    assert normalize_label(label) == "windows-1252"


def test_other_labels():
    assert normalize_label("UTF8") == "utf-8"
    assert normalize_label("gb2312") == "gbk"
    assert normalize_label("x-sjis") == "shift_jis"
    assert normalize_label("windows-1251") == "windows-1251"
    assert normalize_label("no-such-charset") is None and normalize_label("") is None


def test_bom_wins_over_http_and_meta():
    data = b"\xef\xbb\xbf<meta charset=iso-8859-1><p>" + QUOTED.encode("utf-8")
    assert sniff_encoding(data, "windows-1251") == ("utf-8", "bom")
    text, enc = decode_html(data, "windows-1251")
    assert enc == "utf-8" and text.startswith("<meta") and QUOTED in text
    data16 = "\ufeff<p>Привет</p>".encode("utf-16-le")
    text, enc = decode_html(data16)
    assert enc == "utf-16le" and text == "<p>Привет</p>"


def test_http_charset_wins_over_meta():
    data = '<meta charset="utf-8"><p>Привет мир</p>'.encode("cp1251")
    assert sniff_encoding(data, "windows-1251") == ("windows-1251", "http")
    assert "Привет мир" in decode_html(data, "windows-1251")[0]


def test_declared_latin1_means_windows_1252_bytes():
    data = b"<p>\x93quoted\x94 caf\xe9</p>"
    text, enc = decode_html(data, "ISO-8859-1")
    assert enc == "windows-1252" and QUOTED in text


def test_meta_charset_and_http_equiv_in_first_1024_bytes():
    data = b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">' \
           + "<p>Привет</p>".encode("cp1251")
    assert sniff_encoding(data) == ("windows-1251", "meta")
    assert "Привет" in decode_html(data)[0]
    late = b"<!--" + b"x" * 1100 + b"--><meta charset=windows-1251>" + "<p>Привет</p>".encode("cp1251")
    assert sniff_encoding(late)[1] != "meta"
    commented = b"<!-- <meta charset=koi8-r> --><meta charset=windows-1251><p>x</p>"
    assert sniff_encoding(commented) == ("windows-1251", "meta")


def test_a_meta_cannot_declare_utf16():
    assert sniff_encoding(b"<meta charset=utf-16><p>plain</p>") == ("utf-8", "meta")


def test_declared_non_utf8_but_valid_utf8_bytes_is_utf8():
    data = ("<meta charset=iso-8859-1><p>" + QUOTED + "</p>").encode("utf-8")
    assert sniff_encoding(data) == ("utf-8", "utf8-valid")
    assert sniff_encoding(data, "latin1") == ("utf-8", "utf8-valid")
    assert QUOTED in decode_html(data, "latin1")[0]
    # plain ASCII keeps its declaration (both read the same)
    assert sniff_encoding(b"<p>plain</p>", "latin1") == ("windows-1252", "http")


def test_detection_without_declaration():
    ja = "日本語のテキストです。これはエンコーディングのテストです。もう少し長い文章を書きます。"
    text, enc = decode_html(("<p>" + ja + "</p>").encode("shift_jis"))
    assert ja in text and enc == "shift_jis"
    ru = "Привет мир, это тест кодировки страницы. Ещё немного текста на русском языке."
    text, enc = decode_html(("<p>" + ru + "</p>").encode("cp1251"))
    assert ru in text
    # English text with a few cp1252 bytes stays windows-1252 (not cp1250 or cp852)
    en = ("<p>" + "It\u2019s a \u201ctest\u201d of the na\u00efve detector, " * 3 + "</p>").encode("cp1252")
    text, enc = decode_html(en)
    assert enc == "windows-1252" and "\u201ctest\u201d" in text


def test_undecodable_bytes_become_replacement_characters():
    text, enc = decode_html(b"<p>ok \xff\xfe\xc3 end</p>", "utf-8")
    assert enc == "utf-8" and "\ufffd" in text and text.startswith("<p>ok") and text.endswith("end</p>")


@pytest.mark.parametrize("data,charset", [
    (b"", None), (b"\x00\x00\x00", None), (bytes(range(256)), None), (bytes(range(256)), "utf-8"),
    (b"<p>x</p>", "no-such-charset"), (b"<p>x</p>", ""), (b"\xfe\xff\x00<\x00p", None),
    (b"\xff\xfe<\x00p\x00\x00", None), (b"<meta charset=\"\xff\xfe\">", None),
])
def test_never_fails(data, charset):
    text, enc = decode_html(data, charset)
    assert isinstance(text, str) and isinstance(enc, str) and enc
    assert sniff_encoding(data, charset)[1] in ("bom", "http", "meta", "utf8-valid", "detected", "fallback")


def test_text_input_passes_through():
    assert decode_html("<p>déjà</p>") == ("<p>déjà</p>", "utf-8")


# -- hostile inputs (issue 14) ------------------------------------------------

@pytest.mark.parametrize("label", ["utf-7", "UTF-7", "csUnicode11UTF7", "utf-32", "unicode_escape",
                                   "rot13", "zlib", "base64", "raw_unicode_escape"])
def test_labels_browsers_do_not_implement_are_no_label(label):
    assert normalize_label(label) is None


def test_utf7_charset_is_refused_as_browsers_do():
    # The classic: "+ADw-script+AD4-" is "<script>" in UTF-7; a browser never decodes it so.
    data = b"<html><p>+ADw-script+AD4-alert(1)+ADw-/script+AD4-</p></html>"
    text, enc = decode_html(data, "utf-7")
    assert enc != "utf-7" and "<script>" not in text and "+ADw-script+AD4-" in text
    assert sniff_encoding(b"<meta charset=utf-7><p>+ADw-b+AD4-") != ("utf-7", "meta")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_sniffed(codec):
    page = "<html><head><title>Привет</title></head><body><p>Привет мир, café</p></body></html>"
    data = page.encode(codec)
    assert not data.startswith((b"\xff\xfe", b"\xfe\xff"))
    enc, source = sniff_encoding(data, "iso-8859-1")  # a server's default label, wrong here
    assert (enc, source) == (codec.replace("-le", "le").replace("-be", "be"), "utf16-sniffed")
    text, _ = decode_html(data)
    assert text == page


def test_single_byte_pages_are_not_taken_for_utf16():
    data = ("<p>" + "é" * 300 + "</p>").encode("cp1252")
    assert sniff_encoding(data)[1] != "utf16-sniffed"


def test_detection_reads_a_bounded_prefix(monkeypatch):
    import charset_normalizer

    from hwnoise import decode

    seen = []
    real = charset_normalizer.from_bytes

    def spy(data, *a, **k):
        seen.append(len(data))
        return real(data, *a, **k)

    monkeypatch.setattr(charset_normalizer, "from_bytes", spy)
    data = ("<p>" + "Привет мир " * 20000 + "</p>").encode("koi8-r")
    decode.sniff_encoding(data)
    assert seen and max(seen) <= decode.DETECT_PREFIX < len(data)
    seen.clear()
    decode.sniff_encoding(data, "koi8-r")  # declared: no detection at all
    assert seen == []


PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
       b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00"
       b"\x00\x00IEND\xaeB`\x82")


@pytest.mark.parametrize("data,reason", [
    (PNG, "PNG"), (b"GIF89a\x01\x00\x01\x00", "GIF"), (b"\xff\xd8\xff\xe0\x00\x10JFIF", "JPEG"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "PDF"), (b"PK\x03\x04\x14\x00", "ZIP"),
    (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "gzip"), (bytes(range(256)) * 4, "binary"),
    (b"Just some notes.\nNo markup here at all.\n", "text without HTML markup"), (b" \n\t", "empty"),
])
def test_non_html_is_recognised(data, reason):
    from hwnoise.decode import looks_like_html, sniff_html

    assert reason in sniff_html(data) and looks_like_html(data) is False


@pytest.mark.parametrize("data", [
    b"<!DOCTYPE html><html><p>x</p></html>", b"\n\n  <HTML><BODY>x", b"<p>a paragraph",
    b"<!-- saved --><html>", b"\xef\xbb\xbf<html><p>x</p>", "<html><p>Привет</p>".encode("utf-16"),
    "<html><p>Привет мир</p></html>".encode("utf-16-le"),
    b'<?xml version="1.0"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><p>x</p>',
    b"HTTP/1.1 200 OK\r\nServer: x\r\n\r\n<html><body><div>junk before the page</div>",
    "<html><p>caf\u00e9 \u201cq\u201d</p>".encode("cp1252"),
])
def test_html_is_recognised(data):
    from hwnoise.decode import looks_like_html, sniff_html

    assert sniff_html(data) is None and looks_like_html(data) is True


def test_windows_1252_pages_without_c1_bytes_decode_as_cp1252_would():
    """The latin-1 shortcut of ``decode_html`` for windows-1252 pages without bytes 0x80-0x9F
    gives what the cp1252 codec gives: every byte alone, and pages with and without them."""
    from hwnoise.decode import _C1_BYTES, decode_html

    every = bytes(range(256))
    assert [b for b in range(256) if every[b:b + 1].decode("latin-1")
            != every[b:b + 1].decode("cp1252", errors="replace")] == list(_C1_BYTES)
    head = b'<meta charset="windows-1252"><p>'
    for body in (b"caf\xe9 \xa0\xff plain", b"smart \x93quotes\x94 \x81", b"ascii only", bytes(range(0xA0, 256))):
        text, enc = decode_html(head + body)
        assert enc == "windows-1252"
        assert text == (head + body).decode("cp1252", errors="replace")


def test_own_utf8_answers_only_when_decode_html_gives_the_bytes_utf8():
    """``own_utf8`` names an encoding only when ``decode_html`` gives exactly that encoding and
    ``data.decode("utf-8")``: seeded random pages with and without declarations (HTTP, meta,
    windows-1252 declared on valid UTF-8, UTF-16, ISO-2022-JP), BOMs, NULs, U+FFFD and invalid
    bytes. Valid UTF-8 that is not ASCII is UTF-8 whatever it declares, as decode_html has it."""
    import random

    from hwnoise.decode import own_utf8, plain_utf8

    rng = random.Random(15)
    heads = [b"", b"<meta charset=utf-8>", b"<meta charset='windows-1252'>", b"<meta charset=iso-8859-1>",
             b"<meta charset=iso-2022-jp>", b"<meta charset=utf-16>", b"<meta charset=shift_jis>",
             b"\xef\xbb\xbf", b"\xff\xfe", b"<!-- <meta charset=koi8-r> -->"]
    bodies = [b"<p>plain</p>", "<p>caf\u00e9</p>".encode(), "\u4e2d".encode(), b"\xe9", b"\x00",
              "\ufffd".encode(), b"\x1b$B", b"\xa4\xa2", b" ", b"\x80"]
    answered = 0
    for _ in range(4000):
        data = rng.choice(heads) + b"".join(rng.choice(bodies) for _ in range(rng.randint(0, 4)))
        charset = rng.choice([None, None, "utf-8", "windows-1252", "utf-16", "iso-2022-jp", "bogus"])
        enc = own_utf8(data, charset)
        if enc is not None:
            answered += 1
            assert decode_html(data, charset) == (data.decode("utf-8"), enc), (data, charset)
            assert plain_utf8(data) and not data.startswith(b"\xef\xbb\xbf")
    assert answered > 500
    assert own_utf8('<meta charset="windows-1252"><p>caf\u00e9</p>'.encode()) == "utf-8"
    assert own_utf8(b"<p>x</p>") == "windows-1252"
    assert own_utf8(b"<meta charset=iso-2022-jp><p>x</p>") is None


# what Chromium 156 sent as a hidden _charset_ field of a form with accept-charset=LABEL
@pytest.mark.parametrize("label,name", [
    ("shift_jis", "Shift_JIS"), ("euc-kr", "EUC-KR"), ("gb2312", "GBK"), ("gb18030", "gb18030"), ("big5", "Big5"),
    ("euc-jp", "EUC-JP"), ("iso-2022-jp", "ISO-2022-JP"), ("koi8-r", "KOI8-R"), ("koi8-u", "KOI8-U"),
    ("ibm866", "IBM866"), ("macintosh", "macintosh"), ("windows-874", "windows-874"), ("tis-620", "windows-874"),
    ("iso-8859-8", "ISO-8859-8"), ("iso-8859-15", "ISO-8859-15"), ("utf-8", "UTF-8"), ("utf-16", "UTF-8"),
    ("iso-8859-1", "windows-1252")])
def test_the_name_a_forms_charset_field_sends(label, name):
    assert form_charset_name(normalize_label(label)) == name


@pytest.mark.parametrize("name", list(ENCODING_LABELS))
def test_every_label_of_the_encoding_standard_is_the_encoding_browsers_take(name):
    # 50 of them were no label ('x-mac-cyrillic', 'x-mac-ukrainian', 'koi8-ru', 'mac', 'x-cp1251',
    # 'iso88592', 'logical'...): a page or form declaring one was decoded by detection, and a form
    # sent in UTF-8 where a browser sends its encoding
    for label in ENCODING_LABELS[name].split():
        # a form of a UTF-16 page is sent in UTF-8 (HTML's output encoding)
        assert form_charset_name(normalize_label(label)) == ("UTF-8" if name.startswith("UTF-16") else name), label
        assert normalize_label(label.upper()) == normalize_label(label)


def python_only_names() -> list[str]:
    """Names Python's codec registry takes for an encoding a browser implements that are no label
    of the Encoding Standard: its aliases (with '-' for '_' too) and codec names."""
    import codecs
    import encodings.aliases

    from hwnoise.decode import _LABELS, _encoding_of

    names = set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values())
    names |= {n.replace("_", "-") for n in names}
    return sorted(n for n in names if n not in _LABELS and _encoding_of(n) is not None
                  and codecs.lookup(n) is not None)


def test_a_name_only_python_knows_is_no_label():
    # 'latin-1', 'utf_8', 'u8', 'cp65001', '8859', 'latin' were taken as labels (Python's aliases):
    # a page declaring one was decoded by it, where a browser ignores the declaration
    names = python_only_names()
    assert {"latin-1", "utf_8", "u8", "cp65001", "8859", "latin"} <= set(names), names
    assert [n for n in names if normalize_label(n) is not None] == []
    # Latin-2 bytes declared by Python's name of Latin-2 (the standard's is 'iso_8859-2'): a browser
    # takes the page as undeclared, here windows-1252
    page = "<meta charset=iso_8859_2><p>\u0141\u00f3d\u017a</p>".encode("iso8859-2")
    assert decode_html(page)[1] == decode_html(page.replace(b"iso_8859_2", b"no-such-thing"))[1] == "windows-1252"
    assert decode_html(page.replace(b"iso_8859_2", b"iso_8859-2")) == (page.decode("iso8859-2").replace(
        "iso_8859_2", "iso_8859-2"), "iso8859-2")


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_chromium_takes_no_name_only_python_knows():
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    names = python_only_names()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            got = page.evaluate("(ls) => ls.map(l => { try { return new TextDecoder(l).encoding } "
                                "catch (e) { return null } })", names)
        finally:
            browser.close()
    assert {n: g for n, g in zip(names, got) if g is not None} == {}


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_chromium_takes_each_label_as_the_table_says():
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    labels = {label: name for name, text in ENCODING_LABELS.items() for label in text.split()}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            got = page.evaluate("(labels) => labels.map(l => new TextDecoder(l).encoding)", list(labels))
        finally:
            browser.close()
    assert dict(zip(labels, got)) == {label: name.lower() for label, name in labels.items()}

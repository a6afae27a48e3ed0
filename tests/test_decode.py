"""Decoding as a browser does: BOM, HTTP charset, meta, detection; lying pages; never failing."""
from __future__ import annotations

from pathlib import Path

import pytest

from hwnoise.decode import decode_html, form_charset_name, normalize_label, sniff_encoding

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


#: the Encoding Standard's labels (https://encoding.spec.whatwg.org/#names-and-labels) of each
#: encoding a form can be sent in, by the name Chromium gives it (document.characterSet)
STANDARD_LABELS = {
    "UTF-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "IBM866": "866 cp866 csibm866 ibm866",
    "ISO-8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    "ISO-8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    "ISO-8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    "ISO-8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 "
                  "iso_8859-5:1988",
    "ISO-8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
                  "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    "ISO-8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 "
                  "iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    "ISO-8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
                  "iso_8859-8 iso_8859-8:1988 visual",
    "ISO-8859-8-I": "csiso88598i iso-8859-8-i logical",
    "ISO-8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "ISO-8859-13": "iso-8859-13 iso8859-13 iso885913",
    "ISO-8859-14": "iso-8859-14 iso8859-14 iso885914",
    "ISO-8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "ISO-8859-16": "iso-8859-16",
    "KOI8-R": "cskoi8r koi koi8 koi8-r koi8_r",
    "KOI8-U": "koi8-ru koi8-u",
    "macintosh": "csmacintosh mac macintosh x-mac-roman",
    "windows-874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "windows-1250": "cp1250 windows-1250 x-cp1250",
    "windows-1251": "cp1251 windows-1251 x-cp1251",
    "windows-1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
                    "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    "windows-1253": "cp1253 windows-1253 x-cp1253",
    "windows-1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 "
                    "latin5 windows-1254 x-cp1254",
    "windows-1255": "cp1255 windows-1255 x-cp1255",
    "windows-1256": "cp1256 windows-1256 x-cp1256",
    "windows-1257": "cp1257 windows-1257 x-cp1257",
    "windows-1258": "cp1258 windows-1258 x-cp1258",
    "x-mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "GBK": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk",
    "gb18030": "gb18030",
    "Big5": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "EUC-JP": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "ISO-2022-JP": "csiso2022jp iso-2022-jp",
    "Shift_JIS": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "EUC-KR": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601 "
              "windows-949",
}


@pytest.mark.parametrize("name", list(STANDARD_LABELS))
def test_every_label_of_the_encoding_standard_is_the_encoding_browsers_take(name):
    # 50 of them were no label ('x-mac-cyrillic', 'x-mac-ukrainian', 'koi8-ru', 'mac', 'x-cp1251',
    # 'iso88592', 'logical'...): a page or form declaring one was decoded by detection, and a form
    # sent in UTF-8 where a browser sends its encoding
    for label in STANDARD_LABELS[name].split():
        assert form_charset_name(normalize_label(label)) == name, label
        assert normalize_label(label.upper()) == normalize_label(label)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")
def test_chromium_takes_each_label_as_the_table_says():
    pytest.importorskip("playwright", reason="playwright (the render extra) is not installed")
    from playwright.sync_api import sync_playwright

    labels = {label: name for name, text in STANDARD_LABELS.items() for label in text.split()}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            got = page.evaluate("(labels) => labels.map(l => new TextDecoder(l).encoding)", list(labels))
        finally:
            browser.close()
    assert dict(zip(labels, got)) == {label: name.lower() for label, name in labels.items()}

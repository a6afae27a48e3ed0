"""Bytes to text as a browser decodes a page (WHATWG order; DESIGN.md "Decoding").

The order: a byte-order mark wins; then the HTTP header's charset; then a
``<meta charset>`` or ``<meta http-equiv="Content-Type">`` in the first 1024
bytes; then detection (charset-normalizer). Pages often lie: when the declared
charset is not UTF-8 but the bytes are strictly valid UTF-8 (and not plain
ASCII), UTF-8 is taken. Labels are mapped as browsers map them ("latin1",
"iso-8859-1" and "ascii" mean windows-1252, "gb2312" means GBK, ...), and a
declared UTF-16 in a ``<meta>`` means UTF-8, as WHATWG says. Only the Encoding
Standard's labels count (``ENCODING_LABELS``): a name only Python knows
("latin-1", "utf_8", "cp65001") or one of an encoding browsers do not implement
(UTF-7, UTF-32, Python's escape and transform codecs) is no label at all, so
detection decides. UTF-16
without a BOM is recognised by its NUL bytes (``<\0h\0`` ...) as browsers'
detectors do. charset-normalizer runs only when nothing declares the encoding,
on a bounded prefix. Decoding never fails: undecodable bytes become U+FFFD.

``looks_like_html`` / ``sniff_html`` decide whether bytes are an HTML page at
all (WHATWG MIME sniffing: signatures of images, PDF, archives, binary bytes),
for a response without a Content-Type and for files a user gives as pages.

Shared by forms/ (the journal records the encoding) and features/.
"""
from __future__ import annotations

import codecs
import re

__all__ = ["decode_html", "own_utf8", "sniff_encoding", "normalize_label", "SOURCES", "looks_like_html",
           "sniff_html", "DETECT_PREFIX", "content_type", "charset_of", "utf16_without_bom", "decode_text", "form_codec",
           "form_charset_name"]

#: Where an encoding came from (``sniff_encoding``'s second value).
SOURCES = ("bom", "http", "meta", "utf8-valid", "utf16-sniffed", "detected", "fallback")

#: How many bytes charset detection reads (it is slow on large inputs; the start suffices).
DETECT_PREFIX = 32768

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16le"),
    (codecs.BOM_UTF16_BE, "utf-16be"),
)

#: The Encoding Standard's labels (https://encoding.spec.whatwg.org/#names-and-labels) by the
#: name Chromium gives the encoding each selects (``TextDecoder(label).encoding``,
#: ``document.characterSet``): the only labels a browser takes, in an HTTP header, a ``<meta>`` or
#: a form's ``accept-charset``. Any other name, Python's own aliases among them (``latin-1``,
#: ``utf_8``, ``u8``, ``cp65001``), is no label: the page is decoded as if it declared nothing.
#: (The standard's ``replacement`` and ``x-user-defined`` labels are left out: taken as no label.)
ENCODING_LABELS = {
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
    "UTF-16BE": "unicodefffe utf-16be",
    "UTF-16LE": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
}
_LABELS = frozenset(label for text in ENCODING_LABELS.values() for label in text.split())

#: WHATWG label -> encoding name, for the labels that differ from Python's idea of them.
_WHATWG = {
    **dict.fromkeys(
        ["latin1", "l1", "iso-8859-1", "iso8859-1", "iso_8859-1", "iso88591",
         "ascii", "us-ascii", "ansi_x3.4-1968", "iso-ir-100", "cp819", "ibm819", "csisolatin1",
         "iso_8859-1:1987", "cp1252", "windows-1252", "x-cp1252"], "windows-1252"),
    **dict.fromkeys(["iso-8859-9", "iso8859-9", "latin5", "l5", "iso-ir-148", "windows-1254",
                     "cp1254", "x-cp1254"], "windows-1254"),
    **dict.fromkeys(["tis-620", "iso-8859-11", "iso8859-11", "windows-874", "dos-874"], "windows-874"),
    **dict.fromkeys(["gb2312", "gbk", "chinese", "csgb2312", "x-gbk", "gb_2312-80", "iso-ir-58"], "gbk"),
    **dict.fromkeys(["gb18030"], "gb18030"),
    **dict.fromkeys(["euc-kr", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "windows-949",
                     "cp949", "korean", "csksc56011987"], "euc-kr"),
    **dict.fromkeys(["shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "ms932",
                     "windows-31j", "csshiftjis", "cp932"], "shift_jis"),
    **dict.fromkeys(["big5", "big5-hkscs", "cn-big5", "x-x-big5", "csbig5"], "big5"),
    **dict.fromkeys(["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8",
                     "x-unicode20utf8"], "utf-8"),
    **dict.fromkeys(["utf-16", "utf-16le", "unicode", "ucs-2", "csunicode", "iso-10646-ucs-2",
                     "unicodefeff"], "utf-16le"),
    **dict.fromkeys(["utf-16be", "unicodefffe"], "utf-16be"),
    # the Encoding Standard's labels Python's codec registry does not know (or not as browsers do)
    **{f"iso8859{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15)},
    **dict.fromkeys(["csiso88596e", "csiso88596i", "iso-8859-6-e", "iso-8859-6-i"], "iso8859-6"),
    **dict.fromkeys(["sun_eu_greek"], "iso8859-7"),
    **dict.fromkeys(["csiso88598e", "iso-8859-8-e", "visual"], "iso8859-8"),
    **dict.fromkeys(["csiso88598i", "iso-8859-8-i", "logical"], "iso-8859-8-i"),
    **dict.fromkeys(["csisolatin9"], "iso8859-15"),
    **dict.fromkeys(["koi", "koi8"], "koi8-r"),
    **dict.fromkeys(["koi8-ru"], "koi8-u"),
    **dict.fromkeys(["csmacintosh", "mac", "x-mac-roman"], "mac-roman"),
    **dict.fromkeys(["x-mac-cyrillic", "x-mac-ukrainian"], "mac-cyrillic"),
    **dict.fromkeys(["iso885911"], "windows-874"),
    **{f"x-cp125{n}": f"windows-125{n}" for n in (0, 1, 3, 5, 6, 7, 8)},
    **dict.fromkeys(["csisolatin5", "iso88599", "iso_8859-9", "iso_8859-9:1989"], "windows-1254"),
    **dict.fromkeys(["csiso58gb231280", "gb_2312"], "gbk"),
    **dict.fromkeys(["cseucpkdfmtjapanese", "x-euc-jp"], "euc_jp"),
    **dict.fromkeys(["cseuckr", "iso-ir-149", "ksc_5601"], "euc-kr"),
}

#: Python codec names of the encodings the WHATWG Encoding Standard (so a browser) implements;
#: any other codec Python knows (utf-7, utf-32, unicode_escape, rot13, zlib...) is no label.
_BROWSER_CODECS = frozenset(codecs.lookup(n).name for n in (
    "utf-8 cp866 iso8859_2 iso8859_3 iso8859_4 iso8859_5 iso8859_6 iso8859_7 iso8859_8 iso8859_10 "
    "iso8859_13 iso8859_14 iso8859_15 iso8859_16 koi8_r koi8_u mac_roman mac_cyrillic cp874 cp1250 "
    "cp1251 cp1252 cp1253 cp1254 cp1255 cp1256 cp1257 cp1258 gbk gb18030 big5 big5hkscs euc_jp "
    "iso2022_jp shift_jis cp932 euc_kr cp949 utf_16 utf_16_le utf_16_be latin_1").split())

#: WHATWG encoding name -> Python codec (the browser's superset where Python's is narrower).
_CODEC = {
    "gbk": "gb18030", "euc-kr": "cp949", "shift_jis": "cp932", "big5": "big5hkscs",
    "windows-1252": "cp1252", "windows-1254": "cp1254", "windows-874": "cp874",
    "iso-8859-8-i": "iso8859_8",  # ISO-8859-8's bytes, its text in logical order
}

_META_RE = re.compile(
    rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.IGNORECASE)
_COMMENT_RE = re.compile(rb"<!--.*?(?:-->|$)", re.DOTALL)


def normalize_label(label: str | None) -> str | None:
    """The encoding a browser uses for a charset label (one of ``ENCODING_LABELS``), or None for
    a name that is no label of the Encoding Standard, as a browser ignores it."""
    if not label:
        return None
    key = label.strip().strip("\"'").lower()
    return _encoding_of(key) if key in _LABELS else None


def _encoding_of(name: str) -> str | None:
    """The encoding (a ``normalize_label`` name) of a standard label or of a Python codec name
    (what charset-normalizer answers), None for a codec no browser implements."""
    if name in _WHATWG:
        return _WHATWG[name]
    try:
        name = codecs.lookup(name).name
    except LookupError:
        return None
    if name not in _BROWSER_CODECS:
        return None
    if name.startswith("cp125") and len(name) == 6:
        return "windows-" + name[2:]
    return _WHATWG.get(name, name)


def _codec(encoding: str) -> str:
    return _CODEC.get(encoding, encoding)


def form_codec(encoding: str | None) -> str:
    """The Python codec a browser encodes a form's names and values with, for a form or page in
    ``encoding`` (a ``normalize_label`` name): the HTML standard's output encoding, UTF-8 for
    UTF-16 or no encoding; for GBK Python's gbk, which has none of GB18030's four-byte forms
    (a browser's GBK encoder writes those as ``&#N;``, as for any character the encoding lacks)."""
    if not encoding or encoding.startswith("utf-16"):
        return "utf-8"
    return "gbk" if encoding == "gbk" else _codec(encoding)


#: the Encoding Standard's name of each encoding whose ``normalize_label`` name differs from it
#: (the windows-* encodings and gb18030 keep theirs; ISO-8859-N is made from iso8859-N)
_STANDARD_NAMES = {
    "utf-8": "UTF-8", "cp866": "IBM866", "koi8-r": "KOI8-R", "koi8-u": "KOI8-U", "mac-roman": "macintosh",
    "mac-cyrillic": "x-mac-cyrillic", "cp874": "windows-874", "gbk": "GBK", "big5": "Big5", "big5hkscs": "Big5",
    "euc_jp": "EUC-JP", "iso2022_jp": "ISO-2022-JP", "shift_jis": "Shift_JIS", "euc-kr": "EUC-KR",
    "euc_kr": "EUC-KR", "iso-8859-8-i": "ISO-8859-8-I",
}


def form_charset_name(encoding: str | None) -> str:
    """The name a browser gives a form's encoding (a ``normalize_label`` name) where a hidden
    ``_charset_`` field sends it: the Encoding Standard's name of the encoding the form is sent
    in ("windows-1252", "Shift_JIS", "ISO-8859-2"; UTF-8 for UTF-16, as ``form_codec``)."""
    if not encoding or encoding.startswith("utf-16"):
        return "UTF-8"
    if encoding.startswith("iso8859-"):
        return "ISO-8859-" + encoding[len("iso8859-"):]
    return _STANDARD_NAMES.get(encoding, encoding)


def _strict_utf8(data: bytes) -> str | None:
    """``data`` decoded when it has non-ASCII bytes and all of it is valid UTF-8, else None."""
    if data.isascii():
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _meta_charset(data: bytes) -> str | None:
    head = _COMMENT_RE.sub(b"", data[:1024])
    for m in _META_RE.finditer(head):
        enc = normalize_label(m.group(1).decode("ascii", "replace"))
        if enc:
            # WHATWG: a <meta> cannot declare UTF-16 (the bytes would not have parsed).
            return "utf-8" if enc.startswith("utf-16") else enc
    return None


_LATIN_SINGLE_BYTE = frozenset(
    "cp1250 cp1252 cp1254 cp1257 cp1258 cp775 cp850 cp852 cp858 cp437 mac_roman mac_latin2 "
    "mac_iceland latin_1 iso8859_1 iso8859_2 iso8859_3 iso8859_4 iso8859_9 iso8859_10 iso8859_13 "
    "iso8859_14 iso8859_15 iso8859_16".split())
_CP1252_UNDEFINED = frozenset(b"\x81\x8d\x8f\x90\x9d")


def _detect(data: bytes) -> str | None:
    """charset-normalizer's guess, leaning to windows-1252 (the browser default for Latin text).

    With little evidence (under 16 non-ASCII bytes), or when the guess is another
    Latin single-byte code page that windows-1252 decodes as well, the page is
    taken as windows-1252: charset-normalizer cannot tell cp1250 from cp1252 on
    English text, and a browser would not either.
    """
    sample = data[:DETECT_PREFIX]
    nonascii = len(sample) - len(sample.translate(None, bytes(range(128, 256))))
    if nonascii < 16:
        return "windows-1252"
    try:
        from charset_normalizer import from_bytes

        results = from_bytes(sample)
        best = results.best()
    except Exception:  # noqa: BLE001 - detection is a guess; a failed guess falls back
        return None
    if best is None:
        return None
    cp1252_ok = _CP1252_UNDEFINED.isdisjoint(sample)
    if cp1252_ok:
        for m in results:
            if m.encoding == "cp1252" and m.chaos <= best.chaos + 0.02:
                return "windows-1252"
        if best.encoding in _LATIN_SINGLE_BYTE:
            return "windows-1252"
    return _encoding_of(best.encoding.lower())


def utf16_without_bom(data: bytes) -> str | None:
    """"utf-16le"/"utf-16be" when NULs fill one byte parity of the start and not the other.

    No ASCII-compatible encoding puts a NUL in every other byte of a page, so a
    page that does is UTF-16 whatever its label says (browsers' detectors agree).
    """
    head = data[:1024]
    if len(head) < 8 or head.count(0) < len(head) // 8:
        return None
    head = head[: len(head) // 2 * 2]
    even, odd = head[0::2], head[1::2]
    n = len(odd)
    for zeros, other, enc in ((odd, even, "utf-16le"), (even, odd, "utf-16be")):
        if zeros.count(0) >= 0.3 * n and other.count(0) <= 0.02 * n:
            return enc
    return None


#: The byte-order marks of UTF-16 and UTF-32 (Windows Notepad's "Unicode" is UTF-16 LE with
#: one), UTF-32's first: its little-endian mark begins with UTF-16's.
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
              (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_text(data: bytes) -> str:
    """Decode a text file a person gives (a gold or query file, a ``--values`` file): UTF-16 or
    UTF-32 by its byte-order mark, else UTF-16 by its NUL bytes (saved without a mark:
    ``utf16_without_bom``, as a page is sniffed), else UTF-8 (a BOM dropped), else cp1252 (what
    Excel and Notepad save by default on Windows); CRLF and CR become LF."""
    wide = next((c for bom, c in _WIDE_BOMS if data.startswith(bom)), None) or utf16_without_bom(data)
    if wide:
        text = data.decode(wide, errors="replace")
    else:
        if data.startswith(codecs.BOM_UTF8):
            data = data[3:]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _sniff(data: bytes, http_charset: str | None) -> tuple[str, str, str | None]:
    """``(encoding, source, text)``; ``text`` is the decoded page when checking UTF-8 made it."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return enc, "bom", None
    declared_http = normalize_label(http_charset)
    if declared_http is None or not declared_http.startswith("utf-16"):
        utf16 = utf16_without_bom(data)
        if utf16:
            return utf16, "utf16-sniffed", None
    declared, source = declared_http, "http"
    if declared is None:
        declared, source = _meta_charset(data), "meta"
    if declared is not None:
        if declared != "utf-8":
            text = _strict_utf8(data)
            if text is not None:
                return "utf-8", "utf8-valid", text
        return declared, source, None
    if data.isascii():
        return "windows-1252", "fallback", None
    text = _strict_utf8(data)
    if text is not None:
        return "utf-8", "utf8-valid", text
    detected = _detect(data)
    if detected:
        return detected, "detected", None
    return "windows-1252", "fallback", None


def sniff_encoding(data: bytes, http_charset: str | None = None) -> tuple[str, str]:
    """The encoding a browser would use for ``data``, and where it came from.

    Returns ``(encoding, source)`` with source one of bom | http | meta |
    utf8-valid | utf16-sniffed | detected | fallback.
    """
    encoding, source, _ = _sniff(bytes(data), http_charset)
    return encoding, source


#: The only bytes that windows-1252 decodes otherwise than latin-1 (0x80-0x9F; every other byte
#: is the code point of its value in both): a page without them is decoded as latin-1, which
#: CPython does far faster than its charmap codec (tests/test_decode.py checks the identity).
_C1_BYTES = bytes(range(0x80, 0xA0))
_C1_SINGLES = [bytes((b,)) for b in _C1_BYTES]  # one memchr scan each: faster than a translate


def decode_html(data: bytes | str, http_charset: str | None = None) -> tuple[str, str]:
    """``(text, encoding)`` of a page's bytes, decoded as a browser would; never fails."""
    if isinstance(data, str):
        return data, "utf-8"
    data = bytes(data)
    encoding, source, text = _sniff(data, http_charset)
    if text is not None:
        return text, encoding
    if source == "bom":
        data = data[len(next(b for b, e in _BOMS if e == encoding)):]
    codec = _codec(encoding)
    if codec == "cp1252" and (data.isascii() or not any(c in data for c in _C1_SINGLES)):
        return data.decode("latin-1"), encoding  # the same characters (see _C1_BYTES), decoded faster
    try:
        text = data.decode(codec, errors="replace")
    except LookupError:
        encoding, text = "windows-1252", data.decode("cp1252", errors="replace")
    return text, encoding


def plain_utf8(data: bytes) -> bool:
    """Whether ``data.decode("utf-8")`` succeeds and gives a text without NUL or U+FFFD."""
    if b"\x00" in data or b"\xef\xbf\xbd" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def own_utf8(data: bytes, http_charset: str | None = None, plain=plain_utf8) -> str | None:
    """The encoding ``decode_html`` gives ``data`` when its text is ``data.decode("utf-8")``
    and ``data`` is valid UTF-8 with no BOM, NUL or U+FFFD (so a parser can read the bytes as
    they are), found without decoding them; else None. ``plain(data)`` checks that the bytes
    are UTF-8 without NUL or U+FFFD (``plain_utf8``; the walk passes a compiled one).

    The same rules as ``_sniff``: no NUL, so no UTF-16 is sniffed; bytes that are valid UTF-8
    and not ASCII are UTF-8 whatever is declared ("utf8-valid"); ASCII bytes take the declared
    encoding, or windows-1252, and only those two are answered (any other, such as a UTF-16
    header or ISO-2022-JP, may decode ASCII otherwise: None, decode).
    """
    if data.startswith(codecs.BOM_UTF8) or not plain(data):
        return None
    if not data.isascii():
        return "utf-8"
    declared = normalize_label(http_charset)
    if declared is None:
        declared = _meta_charset(data)
    if declared is None:
        return "windows-1252"  # as _sniff's "fallback": latin-1 of ASCII is the ASCII
    return declared if declared in ("utf-8", "windows-1252") else None


# -- is it HTML at all? (WHATWG MIME Sniffing, "rules for identifying an unknown MIME type") --

# -- the Content-Type header ----------------------------------------------------------------
#: A MIME type's type or subtype: an HTTP token (RFC 9110), as the Fetch standard parses them.
_MIME_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _values(header: str) -> list[str]:
    """A header's values split at the commas outside quoted strings (requests joins a header sent
    twice with ", ")."""
    out, cur, quoted = [], [], False
    for ch in header:
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur))
    return out


def _mime(value: str) -> tuple[str, str | None] | None:
    """``(essence, charset or None)`` of one MIME type, None when it does not parse."""
    essence, *params = value.split(";")
    kind, slash, sub = essence.strip().partition("/")
    if not slash or not _MIME_TOKEN.fullmatch(kind) or not _MIME_TOKEN.fullmatch(sub.strip()):
        return None
    charset = None
    for part in params:
        key, _, v = part.strip().partition("=")
        if key.strip().lower() == "charset" and charset is None and v.strip():
            charset = v.strip().strip("\"'") or None
    return f"{kind}/{sub.strip()}".lower(), charset


def content_type(header: str | None) -> tuple[str, str | None]:
    """``(essence, charset or None)`` of a Content-Type header as browsers read it (the Fetch
    standard's "extract a MIME type"): of a header sent twice (``text/html, text/html;
    charset=utf-8``) the last MIME type that parses counts, keeping an earlier charset when it
    repeats the same type without one; ``("", None)`` when none parses."""
    essence, charset = "", None
    for value in _values(header or ""):
        got = _mime(value)
        if got is None or got[0] == "*/*":
            continue
        if got[0] != essence:
            essence, charset = got
        elif got[1] is not None:
            charset = got[1]
    return essence, charset


def charset_of(header: str | None) -> str | None:
    """The charset of a Content-Type header (``content_type``), or None."""
    return content_type(header)[1]


#: Bytes that never occur in text (WHATWG "binary data byte").
_BINARY_BYTES = frozenset(b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0e\x0f\x10\x11\x12\x13\x14"
                          b"\x15\x16\x17\x18\x19\x1a\x1c\x1d\x1e\x1f")
_WS = b"\t\n\x0c\r "
#: The HTML patterns (case-insensitive, followed by a space or ">").
_HTML_PATTERNS = (b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div",
                  b"<font", b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p",
                  b"<!--")
#: Signatures of what is surely not a page: (prefix, mask or None, name).
_SIGNATURES: tuple[tuple[bytes, bytes | None, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", None, "a PNG image"),
    (b"GIF87a", None, "a GIF image"), (b"GIF89a", None, "a GIF image"),
    (b"\xff\xd8\xff", None, "a JPEG image"),
    (b"RIFF\0\0\0\0WEBPVP", b"\xff\xff\xff\xff\0\0\0\0\xff\xff\xff\xff\xff\xff", "a WebP image"),
    (b"%PDF-", None, "a PDF document"), (b"%!PS-Adobe-", None, "a PostScript document"),
    (b"PK\x03\x04", None, "a ZIP archive (or an office document)"),
    (b"\x1f\x8b\x08", None, "gzip-compressed data"), (b"Rar!\x1a\x07", None, "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", None, "a 7-Zip archive"), (b"BZh", None, "bzip2-compressed data"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", None, "an old Microsoft Office document"),
    (b"ID3", None, "an MP3 file"), (b"OggS\0", None, "an Ogg file"),
    (b"\x1a\x45\xdf\xa3", None, "a WebM/Matroska video"), (b"wOFF", None, "a WOFF font"),
    (b"wOF2", None, "a WOFF2 font"), (b"\x7fELF", None, "an executable"),
    (b"PAR1", None, "a Parquet file"),
)
#: Start of a tag of an HTML element anywhere in the head: pages saved by hand or by crawlers
#: often carry junk (a stray header line, text) before ``<html>``, which browsers render anyway.
_TAG_RE = re.compile(
    rb"<(?:!doctype\s+html|html|head|body|meta|title|div|p|table|a|span|ul|ol|li|h[1-6]|br|"
    rb"form|script|style|link|img|b|i|font|center|td|tr|section|article|main|nav|header|footer)"
    rb"[\s/>]", re.IGNORECASE)
#: How much of the start ``sniff_html`` reads (WHATWG reads 1445 bytes; the tag search, more).
SNIFF_PREFIX = 65536


def sniff_html(data: bytes) -> str | None:
    """None when ``data`` is an HTML page, else why not ("a PNG image", "binary data", ...).

    As WHATWG MIME sniffing: a leading HTML pattern (after a BOM and blanks)
    decides HTML; a known file signature (image, PDF, archive, audio, video,
    font, executable) or a binary byte in the first 1445 bytes decides not.
    Text with no HTML tag in the first 64 KiB is "text without HTML markup";
    text with one (XHTML's ``<?xml``, junk before ``<html>``) is taken as HTML.
    UTF-16 (with or without a BOM) is looked at as decoded text.
    """
    data = bytes(data[:SNIFF_PREFIX])
    if not data.strip(_WS):
        return "an empty file"
    for sig, mask, name in _SIGNATURES:
        probe = data[: len(sig)]
        if mask is not None:
            probe = bytes(a & b for a, b in zip(probe, mask))
        if probe == sig:
            return name
    enc = None
    for bom, e in _BOMS:
        if data.startswith(bom):
            data, enc = data[len(bom):], e
            break
    if enc is None:
        enc = utf16_without_bom(data)
    if enc and enc.startswith("utf-16"):
        data = data.decode(enc, errors="replace").encode("utf-8", errors="replace")
    head = data.lstrip(_WS)
    low = head[:64].lower()
    for pat in _HTML_PATTERNS:
        if low.startswith(pat) and len(low) > len(pat) and low[len(pat)] in b" >":
            return None
    if not _BINARY_BYTES.isdisjoint(data[:1445]):
        return "binary data"
    if _TAG_RE.search(data):
        return None
    return "text without HTML markup"


def require_html(data: bytes, where: str) -> bytes:
    """``data`` when it is an HTML page (``sniff_html``), else a ``HwnoiseError`` saying what it
    is instead, for the page named ``where``: an image or a PDF is refused, not made into text."""
    from hwnoise.errors import HwnoiseError

    why = sniff_html(data)
    if why is not None:
        raise HwnoiseError(f"{where}: not an HTML page ({why}); give the page's HTML")
    return data


def looks_like_html(data: bytes) -> bool:
    """True when ``data`` is an HTML page (see ``sniff_html`` for the rules and the reasons)."""
    return sniff_html(data) is None

"""The compiled visit (features/_walk.c) gives the same lists as the Python visit, the reference."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from hwnoise.features import native, walk
from hwnoise.features.css import DROP_TAGS, SCRIPTING_OFF_DROP, _style_sheets_python, hides, page_style
from hwnoise.features.measures import tag_factor
from hwnoise.features.walk import flatten_deep, parse_html, walk_page

try:  # the extension itself, whatever HWNOISE_WALK says
    from hwnoise.features import _walk as EXT
except ImportError:  # pragma: no cover - not built
    EXT = None

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"

pytestmark = pytest.mark.skipif(EXT is None, reason="the compiled walk was not built (no C compiler)")

FIXTURES = {
    "entities": "<p>Fish &amp; chips &eacute;t&eacute; &lt;b&gt; &#160;nbsp&nbsp;x &#x2003;em "
                "&unknown; &copy;2009 caf\u00e9</p><p title='a &amp; b'>&quot;q&quot;</p>",
    "hidden": """<html><head><style>.ad { display: none } #side .promo { visibility: hidden }
        div[data-x] { display:none } ul > li.gone { display: none }</style></head><body>
        <div class="ad">ad text</div>keep<div id="side"><span class="promo">promo</span> side</div>
        <div data-x="1">attr sel</div><ul><li class="gone">g</li><li>kept</li></ul>
        <p hidden>attr hidden</p><p style="display:none">inline none</p>
        <p style="color:red; visibility : hidden !important">inline hidden</p>
        <p style="display:block">inline shown</p><p style="">empty style</p><p hidden="">h2</p>
        <script>var x = 1;</script>after script<noscript>ns</noscript><template>t</template>
        <iframe>if</iframe><canvas>cv</canvas>tail</body></html>""",
    "links": "<body>a <a href=x>one <b>bold</b> two</a> tail of a <a>x<a>nested?</a>y</a> "
             "<span>s<a href=y>in</a>after link</span> end</body>",
    "broken": "<div><p>unclosed <b>bold <i>both</b> after</i> text<td>cell</td></p></span>stray "
              "<table><tr><td>1<td>2</table><li>one<li>two</ul><p>x</div></div>more"
              "</html><html><body><p>second root</p></body></html>",
    "whitespace": "<p>\t\n  lead\u00a0\u00a0nbsp\u2003em\u3000ideo \u200bzw\u202fnarrow\u0085nel "
                  "\x1c\x1d\x1e\x1fsep\u2028ls\u2029ps \u1680ogham\u205f end  \r\n</p><p> \u00a0 </p>"
                  "<p>\ufeffbom</p>",
    "empty": "",
    "no body": "<html><head><title>t</title></head></html>",
    "text only": "just text, no markup at all",
    "nested": "<div>" * 300 + "deep" + "</div>" * 300 + "<p>after</p>",
    "attrs": "<div class='a b' id=x class=dup><p CLASS=Up ID=Y>x</p><p class id>empty</p>"
             "<p class='&amp;&lt;'>ent</p></div>",
    "cdata and pi": "<p>a<![CDATA[cd]]>b<?php echo 1 ?>c</p><svg><text>svg text</text></svg>"
                    "<math><mi>x</mi></math><foo:bar>ns-like</foo:bar>",
    "unicode": "<p>\u65e5\u672c\u8a9e \U0001f600 emoji \u00e9\u0301 combining \ud7ff</p>",
    "script shell": "<body><div id=app></div><noscript><h1>Thread</h1><p>" + "post text " * 30
                    + "<noscript>inner</noscript></p></noscript><noscript><img src=px></noscript></body>",
    "details": "<details>lead<summary>Menu <b>x</b></summary><a>One</a> loose <script>s</script> after"
               "<summary>second</summary><details open><summary>inner</summary>i</details></details>"
               "<details open=''><summary>S</summary><p>Shown</p> tail</details><p>after</p>",
}


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """The walk runs the compiled parts in these tests (even with HWNOISE_WALK=python)."""
    monkeypatch.setattr(native, "ext", EXT)


def both(root, hidden=frozenset(), attrs=False, keep=False):
    """The Python and the compiled visit, as lists (the compiled one gives numpy arrays, and
    each segment's length, checked here)."""
    py = walk._visit_python(root, set(hidden), attrs, keep)
    assert native.ext is EXT
    c = walk._visit(root, set(hidden), attrs, keep)
    assert py[13] is None and py[14] is None and py[15] is None
    if c[13] is not None:  # the compiled visit ran
        assert c[13].dtype == np.int64 and c[13].tolist() == [len(t) for t in c[5]]
        assert all(c[k].dtype == np.int64 for k in (1, 2, 3, 4, 12)) and c[6].dtype == c[7].dtype == bool
        owner, lens = np.array(c[4], dtype=np.int64), np.array(c[13], dtype=np.int64)
        n = len(c[0])
        own = np.bincount(owner, weights=lens, minlength=n).astype(np.int64)
        link = np.bincount(owner[c[6]], weights=lens[c[6]], minlength=n).astype(np.int64)
        prior = np.concatenate(([0], np.cumsum(lens)))[c[3]] if n else np.zeros(0, np.int64)
        assert c[15].shape == (3, n) and [v.tolist() for v in c[15]] == [own.tolist(), link.tolist(), prior.tolist()]
        want = tag_factor(c[0])
        assert c[14][0].dtype == np.int64 and c[14][0].tolist() == want[0].tolist() and c[14][1] == want[1]
    else:
        assert c[14] is None and c[15] is None
    return walk.visit_lists(py), walk.visit_lists(c)


def assert_same(root, label):
    style = page_style(root, None)
    for attrs, keep in ((False, False), (True, False), (True, True), (bool(style.simple), False)):
        py, c = both(root, style.elements, attrs, keep)
        assert c == py, (label, attrs, keep, [k for k in range(len(py)) if c[k] != py[k]])


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_compiled_visit_equals_python_visit(name):
    root, _ = parse_html(FIXTURES[name])
    assert_same(root, name)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_walk_page_equals_with_either_visit(name, monkeypatch):
    html = FIXTURES[name].encode("utf-8")
    compiled = walk_page(html, ["fish", "kept", "one two"], keep_tree=True)
    monkeypatch.setattr(native, "ext", None)
    python = walk_page(html, ["fish", "kept", "one two"], keep_tree=True)
    assert compiled.rows.equals(python.rows), name
    assert compiled.segments == python.segments
    assert compiled.classes == python.classes and compiled.ids == python.ids
    assert [e.tag for e in compiled.elements] == [e.tag for e in python.elements]


def test_compiled_visit_really_runs_and_does_the_work():
    root, _ = parse_html(FIXTURES["hidden"])
    style = page_style(root, None)
    body = root.find("body")
    got = EXT.visit(body, DROP_TAGS, style.elements, hides, True, True)
    assert got is not None
    tags, texts, elements = got[0], got[5], got[10]
    assert tags[0] == "body" and "script" not in tags and "noscript" not in tags
    assert "keep" in texts and "after script" in texts and "tail" in texts
    assert not {"attr hidden", "inline none", "inline hidden", "h2", "ns", "t", "if", "cv"} & set(texts)
    assert "inline shown" in texts and "empty style" in texts
    assert [e.tag for e in elements] == tags and elements[0] is body


def test_compiled_visit_drops_the_tags_it_is_given():
    """With scripting off (``SCRIPTING_OFF_DROP``) both visits show <noscript> content, alike."""
    root, _ = parse_html(FIXTURES["hidden"])
    style = page_style(root, None)
    for attrs, keep in ((False, False), (True, True)):
        py = walk._visit_python(root, set(style.elements), attrs, keep, SCRIPTING_OFF_DROP)
        c = walk._visit(root, set(style.elements), attrs, keep, SCRIPTING_OFF_DROP)
        assert walk.visit_lists(c) == walk.visit_lists(py)
        assert "noscript" in c[0] and "ns" in c[5] and "script" not in c[0]
    assert "ns" not in walk._visit(root, set(style.elements))[5]


def test_deep_nesting_beyond_the_stack_of_a_recursive_walk():
    html = "<body>" + "<div>" * 1500 + "x" + "</div>" * 1500 + "tail</body>"
    root, too_deep = parse_html(html)
    assert not too_deep
    assert_same(root, "1500 levels")
    assert max(walk._visit(root, set())[2]) == 1500
    root, _ = parse_html(flatten_deep("<body>" + "<p><span>" * 2000 + "deep</body>"))
    assert_same(root, "flattened")


def test_comments_and_pis_are_left_to_the_python_walk():
    """The walk's parser drops comments and PIs; a tree that still has them (another parser)
    gets the Python visit's answer, whatever it makes of them."""
    parser = etree.HTMLParser(remove_comments=False, remove_pis=False)
    root = etree.fromstring(b"<html><body><p>a<!-- c -->b</p><?pi x?>t<b>c</b></body></html>", parser)
    body = root.find("body")
    assert EXT.visit(body, DROP_TAGS, set(), hides, False, False) is None  # handed back
    assert_same(root, "comments")
    # a comment inside a dropped element is never visited: the compiled visit keeps the page
    root = etree.fromstring(b"<html><body><script><!-- c --></script><p>a</p></body></html>", parser)
    body = root.find("body")
    assert EXT.visit(body, DROP_TAGS, set(), hides, False, False) is not None
    assert_same(root, "comment in script")


def test_namespaced_and_built_trees():
    root = etree.Element("html")
    body = etree.SubElement(root, "body")
    body.text = " a  b "
    etree.SubElement(body, "{urn:x}thing").text = "ns"
    assert EXT.visit(body, DROP_TAGS, set(), hides, False, False) is None
    assert_same(root, "namespaced")
    del body[0]
    p = etree.SubElement(body, "p", {"class": "c"})
    p.text, p.tail = "x\u00a0y", " t "
    assert_same(root, "built")


def test_hidden_set_is_matched_by_element():
    root, _ = parse_html("<body><p>one</p><p>two</p><div><p>three</p></div>tail</body>")
    ps = root.findall(".//p")
    for hidden in ({ps[1]}, {ps[0], ps[2]}, {root.find(".//div")}, {root.find("body")}):
        py, c = both(root, hidden)
        assert c == py
    assert "two" not in both(root, {ps[1]})[1][5]


def test_squash_equals_split_join_on_every_code_point():
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    text = "x".join(chars)
    assert EXT.squash(text) == " ".join(text.split())
    spaces = "".join(c for c in chars if c.isspace())
    assert len(spaces) == 29
    runs = "a" + spaces + "b" + spaces[::-1] + spaces + "c" + spaces
    assert EXT.squash(runs) == "a b c"
    assert EXT.squash(spaces) == ""


def _corpus_sample(step: int) -> list[Path]:
    globs = {"big9": "big5-*/html/*", "cleaneval": "*/*/*.html", "dragnet": "HTML/*.html",
             "l3s": "*/original/*.html", "readability": "test/test-pages/*/source.html"}
    pages = []
    for name, pattern in globs.items():
        pages += sorted((DATASETS / name).glob(pattern))[::step]
    return pages


@pytest.mark.datasets
@pytest.mark.skipif(not (DATASETS / "big9").is_dir(), reason="../shared/datasets not present")
def test_compiled_visit_equals_python_visit_on_the_bench_corpora():
    from hwnoise.decode import decode_html

    pages = _corpus_sample(step=4)  # every 4th page of the corpora bench_features.py pools
    assert len(pages) > 250
    for p in pages:
        text, _ = decode_html(p.read_bytes(), None)
        root, too_deep = parse_html(text)
        if too_deep:
            root, _ = parse_html(flatten_deep(text))
        style = page_style(root, text)
        assert EXT.style_sheets(root) == _style_sheets_python(root), p
        for attrs, keep in ((bool(style.simple), False), (True, True)):
            py, c = both(root, style.elements, attrs, keep)
            assert c == py, p
        body = root.find("body")
        assert EXT.visit(body if body is not None else root, DROP_TAGS, style.elements,
                                 hides, False, False) is not None, p  # no page falls back


def test_attribute_scan_equals_the_regex_of_features_limits():
    """``over_attributes`` is true exactly when the ``skip`` pattern of ``features.limits``
    stops before the end (a tag over the cap): seeded random markup, caps 0 to 3."""
    import random

    from hwnoise.features.limits import _patterns

    rng = random.Random(15)
    alphabet = list("<<<aAb =='\"/>>\t\n\u00a0\u2003x-9\u00e9'") + [
        "<a ", " x=1", ' y="a>b"', " z='<'", "<!--", "</a>", "<1", "\U0001f600", "= ", '="']
    seen = {True: 0, False: 0}
    for _ in range(30000):
        n = rng.randrange(4)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        want = _patterns(n)[0].match(text, 0).end() < len(text)
        assert EXT.over_attributes(text, n) is want, (text, n)
        seen[want] += 1
    assert min(seen.values()) > 1000  # both answers were tried
    page = "<p " + " ".join(f"a{k}=1" for k in range(1001)) + ">x</p>"
    assert EXT.over_attributes(page, 1000) and not EXT.over_attributes(page, 1001)


def test_stable_hashes_equal_the_numpy_hash(monkeypatch):
    import random

    import numpy as np

    rng = random.Random(7)
    strings = ["", "a", "ab", "ba", "\x00", "a\x00b", "caf\u00e9", "\U0001f600" * 3, "x" * 5000,
               " ".join("word" for _ in range(300))]
    strings += ["".join(chr(rng.choice([32, 97, 233, 0x4e2d, 0x1f600, 0])) for _ in range(rng.randint(0, 30)))
                for _ in range(500)]
    compiled = walk.stable_hashes(strings)
    assert EXT.stable_hashes(strings, np.empty(len(strings), np.uint64)) is True
    monkeypatch.setattr(native, "ext", None)
    assert np.array_equal(compiled, walk.stable_hashes(strings))
    assert np.array_equal(walk.stable_hashes(["", ""]), compiled[[0, 0]])
    assert len(set(compiled.tolist())) == len(set(strings))
    lone = ["a\ud800b", "ok"]  # no UTF-8 form: the numpy hash (surrogatepass) answers
    monkeypatch.setattr(native, "ext", EXT)
    assert EXT.stable_hashes(lone, np.empty(2, np.uint64)) is False
    got = walk.stable_hashes(lone)
    monkeypatch.setattr(native, "ext", None)
    assert np.array_equal(got, walk.stable_hashes(lone))


def test_site_keys_equal_the_numpy_keys(monkeypatch):
    """``PageWalk.site_keys`` compiled (``site_keys``) equal the numpy ones, also for a text
    with no UTF-8 form (handed back to numpy)."""
    import numpy as np

    html = ("<html><body><div><p>caf\u00e9 \U0001f600</p><p>caf\u00e9 \U0001f600</p><ul>"
            + "".join(f"<li>item {k % 3}</li>" for k in range(40)) + "</ul><p></p></div></body></html>")
    w = walk.walk_page(html)
    compiled = w.site_keys.copy()
    assert len(set(compiled.tolist())) < len(w)  # equal (tag path, text) pairs share a key
    monkeypatch.setattr(native, "ext", None)
    w._site_keys = None
    assert np.array_equal(compiled, w.site_keys)
    monkeypatch.setattr(native, "ext", EXT)
    assert EXT.site_keys(["/html/body"], ["a\ud800"], np.empty(1, np.uint64)) is False
    w.columns["text"][1] = "lone \ud800"
    w._site_keys = None
    got = w.site_keys.copy()
    monkeypatch.setattr(native, "ext", None)
    w._site_keys = None
    assert np.array_equal(got, w.site_keys)


def test_outputs_that_hold_objects_are_refused():
    """The helpers that write numbers into the caller's arrays checked their item size, which a
    numpy object array's references have too: hashes or sums written over them corrupted it (a
    segfault when it was freed). Such an output is now refused, and left as it was."""
    n = 2
    tree = np.array([[-1, 0], [1, 1], [3, 1], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], dtype=np.int64)
    offsets = np.arange(n + 1, dtype=np.int32)
    ints, floats, masks = np.empty((5, n), np.int64), np.empty((3, n)), np.empty((2, n), np.bool_)
    calls = {
        "stable_hashes": lambda out: EXT.stable_hashes(["a", "b"], out),
        "site_keys": lambda out: EXT.site_keys(["/a", "/b"], ["a", "b"], out),
        "site_keys_utf8": lambda out: EXT.site_keys_utf8(offsets, b"ab", offsets, b"ab", out),
        "tree_sums ints": lambda out: EXT.tree_sums(tree, out.reshape(5, n), floats, 1),
        "tree_sums floats": lambda out: EXT.tree_sums(tree, ints, out.reshape(3, n), 1),
        "tree_tail": lambda out: EXT.tree_tail(tree[:6], out.reshape(7, n), masks),
        "ctd_tail": lambda out: EXT.ctd_tail(tree[0], np.ones(n), out.reshape(2, n)),
    }
    sizes = {"tree_sums ints": 5 * n, "tree_sums floats": 3 * n, "tree_tail": 7 * n, "ctd_tail": 2 * n}
    for name, call in calls.items():
        items = [object() for _ in range(sizes.get(name, n))]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        with pytest.raises((TypeError, ValueError)):
            call(out)
        assert all(a is b for a, b in zip(out, items)), name
        assert call(np.empty(len(items), np.uint64 if "sums" not in name and "tail" not in name
                             else np.int64 if name == "tree_sums ints" else np.float64)) is True, name


def test_paths_equal_the_python_loop(monkeypatch):
    import numpy as np

    from hwnoise.features.measures import sibling_structure, xpaths

    tags = ["body", "div", "p", "p", "div", "a", "p"]
    parent = np.array([-1, 0, 1, 1, 0, 4, 0], dtype=np.int64)
    nth = sibling_structure(parent, tags)[0]
    compiled = xpaths(parent, tags, nth, "/html/body")
    assert compiled[0][3] == "/html/body/div[1]/p[2]" and compiled[1][5] == "/html/body/div/a"
    strided = np.repeat(parent, 2)[::2]  # not contiguous
    assert xpaths(strided, tags, nth, "/html/body") == compiled
    shuffled = np.array([-1, 0, 3, 0, 0, 4, 0], dtype=np.int64)  # row 2's parent comes after it
    assert EXT.paths(shuffled, list(tags), "/r") is None
    got = xpaths(shuffled, tags, nth, "/html/body")
    monkeypatch.setattr(native, "ext", None)
    assert xpaths(parent, tags, nth, "/html/body") == compiled
    assert xpaths(shuffled, tags, nth, "/html/body") == got


def _random_tree(rng, n):
    """A random tree of n rows in document order: (parent, tags)."""
    parent = [-1]
    for i in range(1, n):
        parent.append(rng.randrange(i) if rng.random() < 0.3 else i - 1 - rng.randrange(min(i, 3)))
    tags = ["body"] + [rng.choice(["div", "p", "a", "li", "span", "td", "x-y"]) for _ in range(n - 1)]
    return parent, tags


def test_own_text_equals_the_python_join(monkeypatch):
    """``own_text`` (compiled) gives each row's segments joined by one space, as ``_own_text``
    does in numpy: random owners (rows with none, one and several segments), mixed widths."""
    import random

    rng = random.Random(7)
    words = ["a", "b c", "\u00e9t\u00e9", "\u65e5\u672c", "\U0001f600", "x" * 40]
    for _ in range(300):
        n = rng.randint(1, 60)
        m = rng.randint(0, 80)
        owner = np.sort(np.array([rng.randrange(n) for _ in range(m)], dtype=np.int64))
        if rng.random() < 0.5:
            rng.shuffle(owner)  # tails come after children's segments: owners are not sorted
        texts = [rng.choice(words) for _ in range(m)]
        got = walk._own_text(owner, texts, n)
        assert EXT.own_text(owner, texts, n) == got
        monkeypatch.setattr(native, "ext", None)
        assert walk._own_text(owner, texts, n) == got
        monkeypatch.setattr(native, "ext", EXT)
    assert EXT.own_text(np.array([3], dtype=np.int64), ["x"], 2) is None  # out of range: Python decides
    for rows in (sys.maxsize, sys.maxsize // 8):  # n + 1 offsets: sys.maxsize + 1 overflowed (UBSan)
        for own in (EXT.own_text, EXT.own_text_utf8):
            with pytest.raises(MemoryError):
                own(np.zeros(0, dtype=np.int64), [], rows)


def test_xpaths_equal_the_python_steps(monkeypatch):
    """``measures.xpaths`` compiled (one pass, ``xpaths``) equals its Python steps on random
    trees; a non-ASCII tag or root hands the page to the Python code."""
    import random

    from hwnoise.features.measures import sibling_structure, tag_factor, xpaths

    rng = random.Random(11)
    for k in range(200):
        parent, tags = _random_tree(rng, rng.randint(1, 400))
        if k % 20 == 0:
            tags[-1] = "\u00e9l\u00e9ment"
        parent = np.array(parent, dtype=np.int64)
        nth = sibling_structure(parent, tags)[0]
        root = "/html/body" if k % 7 else "/\u00e9/body"
        factor = tag_factor(tags)
        if k % 20 == 0 or k % 7 == 0:
            assert EXT.xpaths(parent, factor[0], factor[1], nth, root) is None
        got = xpaths(parent, tags, nth, root)
        monkeypatch.setattr(native, "ext", None)
        assert xpaths(parent, tags, nth, root) == got
        monkeypatch.setattr(native, "ext", EXT)
    shuffled = np.array([-1, 0, 3, 0], dtype=np.int64)
    assert EXT.xpaths(shuffled, np.zeros(4, np.int64), ["p"], np.ones(4, np.int64), "/r") is None


def test_style_sheets_equal_the_python_loop():
    """``css._style_sheets`` compiled (one pass over libxml2's nodes) equals ``root.iter("style")``
    with the ``<noscript>`` check, each sheet with its ``media`` attribute: sheets in head and body, nested and sibling noscripts,
    empty and CDATA sheets, a style inside a style's text, the fixtures."""
    from hwnoise.features.css import _style_sheets, _style_sheets_python

    pages = [
        "<html><head><style>.a{display:none}</style><noscript><style>.b{x:1}</style></noscript>"
        "<style></style><style> </style></head><body><style>#c{}</style><div><noscript><p>"
        "<style>.d{}</style></p></noscript><style>.e{}</style></div><noscript></noscript>"
        "<style>.f{}</style><style><![CDATA[.g{}]]>.h{}</style></body></html>",
        "<style>only</style>", "<p>no sheets</p>", "<noscript><noscript><style>x</style></noscript>"
        "<style>y</style></noscript><style>z</style>",
        *FIXTURES.values(),
    ]
    seen = 0
    for html in pages:
        root, _ = parse_html(html)
        want = _style_sheets_python(root)
        assert EXT.style_sheets(root) == want, html
        assert _style_sheets(root) == [t for t, _ in want]
        seen += len(want)
    assert seen >= 8
    root, _ = parse_html(pages[0])
    assert EXT.style_sheets(root) == [(t, None) for t in (".a{display:none}", " ", "#c{}", ".e{}", ".f{}",
                                                          "<![CDATA[.g{}]]>.h{}")]
    root, _ = parse_html('<style media="print">.p{}</style><style media="">.q{}</style><style Media=screen>.r{}</style>')
    assert EXT.style_sheets(root) == _style_sheets_python(root) == [(".p{}", "print"), (".q{}", ""), (".r{}", "screen")]
    assert _style_sheets(root) == [".q{}", ".r{}"]  # the print sheet does not apply to the screen
    ns = etree.fromstring('<html xmlns:v="urn:x"><body><v:style>a</v:style></body></html>')
    assert EXT.style_sheets(ns) is None  # a namespaced element: the Python loop decides


def test_fold_ascii_equals_the_python_fold(monkeypatch):
    """``fold_ascii`` (compiled) lower-cases the ASCII texts and leaves the others to
    ``normalize``, as ``walk._fold_ascii``'s Python code does: every ASCII character, random
    texts of mixed widths, empty texts."""
    import random

    rng = random.Random(5)
    pieces = ["abc", "ABC", "Zz@[`{", "", "\u00c9", "\u0130", "\U0001f600", "\x00", "9 ", "\u212a"]
    cases = [[chr(c) for c in range(128)], []]
    cases += [["".join(rng.choice(pieces) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(0, 30))]
              for _ in range(300)]
    for texts in cases:
        got = EXT.fold_ascii(texts)
        monkeypatch.setattr(native, "ext", None)
        assert walk._fold_ascii(texts) == got, texts
        monkeypatch.setattr(native, "ext", EXT)
        assert walk._fold_ascii(texts) == got
    assert EXT.fold_ascii(["a", 1]) is None


def test_inline_styles_are_judged_as_hides_judges_them():
    """The compiled visit asks ``css.hides`` only about inline styles that could hide (ASCII ones
    without "none", "hidden" or "collapse" in any case are shown): the same rows as the Python
    visit for styles in every case, with entities, with non-ASCII letters that IGNORECASE
    matches (dotless i, long s, Kelvin sign) and empty ones."""
    styles = ["display:none", "DISPLAY:NONE", "Display : None !important", "visibility:Hidden",
              "visibility: COLLAPSE", "color:red", "", " ", "display:nonE;color:x", "display:block",
              "visibility:h\u0131dden", "visibility:colla\u017fe", "display:n&#111;ne", "x:none",
              "font-family:None", "display:\u00e9none", "display:none\u2003", "visibility:hidden;"]
    html = "<body>" + "".join(f'<div style="{st}"><p>{k}</p></div>tail{k}' for k, st in enumerate(styles))
    root, _ = parse_html(html)
    for attrs in (False, True):
        py, c = both(root, (), attrs, False)
        assert c == py
    shown = set(py[5])
    assert "5" in shown and "0" not in shown and "1" not in shown and "tail0" in shown
    assert "10" not in shown  # dotless i: IGNORECASE matches it to "hidden"


def test_drop_rows_on_arrays_equals_the_python_drop():
    """``_drop_rows`` on the compiled visit's arrays (numpy) equals the Python one on lists:
    random sets of rows (nested ones too) dropped from the fixtures and a generated page; the
    renumbered ``last`` is each kept row's subtree."""
    import random

    from hwnoise.features.measures import subtree_last

    rng = random.Random(9)
    pages = list(FIXTURES.values()) + ["<body>" + "".join(
        f"<div class=c{k}><p>a{k}<a href=x>l</a>t</p><ul><li>x</li><li>y</li></ul></div>tail{k}" for k in range(40))]
    tried = 0
    for html in pages:
        root, _ = parse_html(html)
        for attrs, keep in ((False, False), (True, False), (True, True)):
            c = walk._visit(root, set(), attrs, keep)
            n = len(c[0])
            if n < 3:
                continue
            for _ in range(15):
                rows = sorted(rng.sample(range(1, n), rng.randint(1, min(6, n - 1))))
                got = walk._drop_rows(c, rows)
                assert isinstance(got[1], np.ndarray)
                want = walk._drop_rows(walk.visit_lists(c), rows)
                assert walk.visit_lists(got)[:12] == want[:12], (html[:40], rows)
                assert got[12].tolist() == subtree_last(got[1]).tolist()
                assert got[13].tolist() == [len(t) for t in got[5]]
                tried += 1
    assert tried > 100


def test_attribute_scan_finds_tags_at_every_offset_of_wide_text():
    """The scan's jump to the next "<" (memchr on 1-byte text, four characters a step on 2-byte
    text) misses no tag: a tag over the cap at every offset after text of each width."""
    tag = "<p " + " ".join(f"a{k}" for k in range(4)) + ">"
    for fill in ("x", "\u00e9", "\u2014", "\U0001f600"):
        for k in range(12):
            text = fill * k + "<b>" * (k % 2) + fill * (k % 5) + tag + fill * k
            assert EXT.over_attributes(text, 3), (fill, k)
            assert not EXT.over_attributes(text, 4), (fill, k)


def _random_selectors(rng, tags, classes, ids, count):
    """Selectors as css.parse_simple makes them, from a page's own tags, classes and ids (and
    some absent ones), with both combinators and a leading plain ``html`` now and then."""
    toks = sorted({c for v in classes if v for c in v.split()}) or ["none"]
    names = sorted({i for i in ids if i}) or ["none"]
    tagset = sorted(set(tags)) + ["blink"]
    out = []
    for _ in range(count):
        comps = []
        for _ in range(rng.randint(1, 4)):
            tag = rng.choice(tagset + [None, None])
            cl = frozenset(rng.sample(toks, min(len(toks), rng.randint(0, 2))))
            id_ = rng.choice(names) if rng.random() < 0.2 else None
            if tag is None and not cl and id_ is None:
                tag = "div"
            comps.append((tag, cl, id_))
        if rng.random() < 0.2:
            comps[0] = ("html", frozenset(), None)
        out.append((tuple(comps), tuple(rng.choice([" ", ">"]) for _ in range(len(comps) - 1))))
    return out


@pytest.mark.datasets
@pytest.mark.skipif(not (DATASETS / "big9").is_dir(), reason="../shared/datasets not present")
def test_match_rows_equals_the_python_matcher():
    """``css.match_rows`` compiled equals its Python code: the hiding rules of every 4th bench
    page, random selectors made of each page's own classes, ids and tags (child and descendant
    combinators, ``html`` on the left), and a page built for it."""
    import random

    from hwnoise.decode import decode_html
    from hwnoise.features.css import match_rows

    rng = random.Random(21)
    built = ("<body><div id=a class='x y'><p class=x>1</p><div class='y z'><p class='x z'>2</p></div></div>"
             "<ul class=x><li class=y>3</li><li id=b>4</li></ul><p class=z>5</p></body>")
    htmls = [built] + [decode_html(p.read_bytes(), None)[0] for p in _corpus_sample(step=8)]
    nonempty = 0
    for html in htmls:
        root, _ = parse_html(html)
        style = page_style(root, html)
        c = walk._visit(root, style.elements, attrs=True)
        tags, parents, classes, ids, factor = c[0], c[1], c[9], c[10], c[14]
        for simple in [style.simple] + [_random_selectors(rng, tags, classes, ids, 12) for _ in range(2)]:
            if not simple:
                continue
            want = match_rows(simple, tags, parents.tolist(), classes, ids)
            assert EXT.match_rows(list(simple), parents, factor[0], factor[1], classes, ids) == want
            assert match_rows(simple, tags, parents, classes, ids, factor=factor) == want
            nonempty += bool(want)
    assert nonempty > 50
    assert EXT.match_rows([("div",)], np.array([-1, 0], dtype=np.int64), np.zeros(2, np.int64), ["body"],
                          [None, None], [None, None]) is None  # not parse_simple's form: Python decides


def test_match_rows_leaves_a_first_row_with_a_parent_to_the_python_matcher():
    """Row 0's parent, which the ancestors' climb reads when a compound does not match row 0, must
    be negative (body's): one out of range was read past the rows (a segfault), 0 made the
    climb loop forever. Either is handed back (None), as rows not in document order are."""
    sel = [((("span", frozenset(), None), (None, frozenset(), None)), (" ",))]
    for first in (10**6, 3, 0):
        parents = np.array([first, 0, 1], dtype=np.int64)
        assert EXT.match_rows(sel, parents, np.zeros(3, np.int64), ["div", "span"], [None] * 3, [None] * 3) is None


def test_match_rows_leaves_str_subclasses_to_the_python_matcher():
    """The compiled matcher hashes the tags and ids it is given, and a str subclass's
    ``__hash__`` is Python code that may change the lists under it (freed items were read):
    such lists are handed back (None), as a value that is no str is."""
    sel, ids, n = [], [], 200

    class Shrinking(str):
        def __hash__(self):
            sel.clear()
            ids.clear()
            return str.__hash__(self)

    sel.append((((None, frozenset(), "y"),), ()))
    ids.extend(["y"] * (n - 1) + [Shrinking("y")])
    parents, codes = np.array([-1] + [0] * (n - 1), dtype=np.int64), np.zeros(n, np.int64)
    assert EXT.match_rows(sel, parents, codes, ["p"], [None] * n, ids) is None
    ids[:] = ["y"] * n
    assert EXT.match_rows(sel, parents, codes, [Shrinking("p")], [None] * n, ids) is None
    assert EXT.match_rows(sel, parents, codes, ["p"], [None] * n, ids) == list(range(1, n))


def test_key_counts_equal_the_binary_search(monkeypatch):
    """sitelevel's look-up of each row's pages count: ``_key_table``/``_key_counts`` (compiled
    hash table) equal ``counts[np.searchsorted(uniq, keys)]``, the reference, on random keys
    with collisions in the table's low bits; a repeated key or a count below 1 makes no table,
    an absent key no answer (the numpy line then runs)."""
    from hwnoise.features import build

    monkeypatch.setattr(native, "ext", EXT)
    rng = np.random.default_rng(0)
    for size in (1, 7, 1000, 50_000):
        keys = rng.integers(0, 2**64, size=size, dtype=np.uint64)
        keys[: size // 3] &= np.uint64(0xFFFF)  # many keys alike in their low bits
        pages = [rng.choice(keys, size=rng.integers(1, size + 1)) for _ in range(5)]
        uniq, counts = np.unique(np.concatenate([np.unique(p) for p in pages]), return_counts=True)
        rows = np.concatenate(pages)
        table = build._key_table(uniq, counts)
        assert table is not None
        got = build._key_counts(uniq, counts, rows, table)
        assert got.dtype == np.int64 and got.tolist() == counts[np.searchsorted(uniq, rows)].tolist()
    assert EXT.key_table(np.array([3, 3], np.uint64), np.array([1, 2], np.int64)) is None
    assert EXT.key_table(np.array([3], np.uint64), np.array([0], np.int64)) is None
    table = EXT.key_table(np.array([3, 5], np.uint64), np.array([1, 2], np.int64))
    assert EXT.key_counts(table, np.array([5, 3, 5], np.uint64)) == np.array([2, 1, 2], np.int64).tobytes()
    assert EXT.key_counts(table, np.array([4], np.uint64)) is None
    # a buffer that key_table did not make may have no empty slot: an absent key ended no search
    assert EXT.key_counts(b"\x01" * 16, np.zeros(1, np.uint64)) is None
    assert EXT.key_counts(np.ones(8, np.uint64), np.zeros(1, np.uint64)) is None
    monkeypatch.setattr(native, "ext", None)
    assert build._key_table(uniq, counts) is None


def test_find_segments_equals_the_joined_find(monkeypatch):
    """``find_segments`` (compiled: first-character and first-pair tables, or a hash of the
    first three characters when every key has three or more) picks the segments that
    ``walk._prefiltered``'s Python code finds by ``str.find`` over the segments joined by NUL:
    keys of one, two, three and more characters, keys starting or going on above U+00FF,
    keys longer than the texts, texts of every width, a key at a text's start and end."""
    import random

    rng = random.Random(11)
    alphabet = ["a", "b", "n", "e", "w", "s", "2", "0", " ", "\u00e9", "\u0101", "\u4e2d", "\U0001f600", "\u00ff"]
    key_sets = [("news", "amd", "2009"), ("a",), ("ne", "ws"), ("\u4e2d\u00e9a",), ("\u0101b", "news"),
                ("\U0001f600s", "bb", "e"), ("abcdefghijkl",), ("s\u00ff\u00ff",)]
    for _ in range(150):
        key_sets.append(tuple(dict.fromkeys(
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(1, 6)))))
    for keys in key_sets:
        texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(60)]
        texts += [k for k in keys] + [k[:-1] for k in keys] + ["x" + k + "y" for k in keys[:1]]
        texts += ["xx" + k for k in keys] + [k + "yy" for k in keys]
        got = EXT.find_segments(texts, keys)
        monkeypatch.setattr(native, "ext", None)
        want = walk._prefiltered(texts, [keys])
        monkeypatch.setattr(native, "ext", EXT)
        assert got == want, (keys, texts)
        assert walk._prefiltered(texts, [keys[:1], keys[1:]]) == want
    assert EXT.find_segments(["a", 1], ("a",)) is None
    assert EXT.find_segments(["ab", "c"], ("",)) == [0, 1]  # as str.find: "" is in every text


def _random_bytes(rng, alphabet, count, longest):
    return [b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


def test_plain_utf8_equals_the_python_check():
    """``plain_utf8`` (valid UTF-8 without NUL or U+FFFD, checked without decoding) equals
    ``hwnoise.decode.plain_utf8`` (the decode itself): seeded random bytes around every rule of
    the decoder (overlong forms, surrogates, past U+10FFFF, cut sequences, eight-byte ASCII
    steps with a NUL), and the first and last code point of each length."""
    import random

    from hwnoise.decode import plain_utf8

    rng = random.Random(15)
    alphabet = [b"a", b"abcdefg", b"<p>", b" ", b"\x00", b"\x7f", b"\x80", b"\x8f", b"\x90", b"\x9f",
                b"\xa0", b"\xbd", b"\xbf", b"\xc0", b"\xc1", b"\xc2", b"\xdf", b"\xe0", b"\xe2", b"\xed",
                b"\xef", b"\xf0", b"\xf4", b"\xf5", b"\xff", "\ufffd".encode(), "\u00e9".encode()]
    seen = {True: 0, False: 0}
    for data in _random_bytes(rng, alphabet, 60000, 12):
        want = plain_utf8(data)
        assert EXT.plain_utf8(data) is want, data
        seen[want] += 1
    assert min(seen.values()) > 3000  # both answers were tried
    for cp in (0, 1, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFD, 0xFFFF,
               0x10000, 0x10FFFF):
        one = chr(cp).encode("utf-8", "surrogatepass")
        for data in (one, b"abcdefgh" + one, one + b"abcdefgh", (b"abcdefgh" + one)[:-1]):
            assert EXT.plain_utf8(data) is plain_utf8(data), (hex(cp), data)
    with pytest.raises(TypeError):
        EXT.plain_utf8("text")


def test_attribute_scan_reads_utf8_bytes_as_their_text():
    """``over_attributes`` on a text's UTF-8 bytes gives the text's answer: each character's
    bytes read as the character, so that the multi-byte whitespace of ``\\s`` (U+0085, U+00A0,
    U+2003, U+3000 ...) separates attributes in the bytes as in the text."""
    import random

    rng = random.Random(16)
    alphabet = list("<<<aAb ==\"'/>>\t\nx-9\x0b\x1c\x1f\u0085\u00a0\u1680\u2003\u2028\u202f\u205f\u3000"
                    "\u00e9\u4e2d\U0001f600") + ["<a ", " x=1", ' y="a\u3000>b"', "\u00a0z='<'", "<1"]
    seen = {True: 0, False: 0}
    for _ in range(30000):
        n = rng.randrange(4)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        want = EXT.over_attributes(text, n)
        assert EXT.over_attributes(text.encode("utf-8"), n) is want, (text, n)
        seen[want] += 1
    assert min(seen.values()) > 1000
    tag = "<p " + "\u3000".join(f"a{k}" for k in range(4)) + ">"
    for fill in ("x", "\u00e9", "\u2014", "\U0001f600"):
        for k in range(12):
            text = (fill * k + "<b>" * (k % 2) + fill * (k % 5) + tag + fill * k).encode("utf-8")
            assert EXT.over_attributes(text, 3) and not EXT.over_attributes(text, 4), (fill, k)


def _undecoded_pages() -> dict[str, bytes]:
    many = "".join(f"div[data-k{k}] {{ display: none }} " for k in range(12))  # > 8 complex selectors
    return {
        "utf-8 meta": '<meta charset="utf-8"><p class="a\u00a0b">caf\u00e9 \u4e2d\u6587</p>'.encode(),
        "undeclared utf-8": "<p>na\u00efve \u3000 text</p><p id=x>\U0001f600</p>".encode(),
        "windows-1252 declared, valid utf-8": '<meta charset="windows-1252"><p>caf\u00e9</p>'.encode(),
        "ascii undeclared": b"<p class='a b'>plain</p>",
        "ascii windows-1252": b"<meta http-equiv='Content-Type' content='text/html; charset=iso-8859-1'><p>x</p>",
        "complex selectors": (f"<style>{many}</style><div data-k3=1 class='c\u00a0d'>hid\u00e9</div>"
                              "<p id='k\u00e9'>shown</p>").encode(),
        "deep": ("<div>" * 3000 + "deep \u00e9" + "</div>" * 3000 + "<p>after</p>").encode(),
    }


@pytest.mark.parametrize("name", sorted(_undecoded_pages()))
def test_undecoded_walk_equals_the_decoded_walk(name, monkeypatch):
    """Pages whose text would be their own UTF-8 are parsed from their bytes without being
    decoded (``walk._undecoded``); the rows, segments, classes and ids equal those of the walk
    that decodes them (compiled) and of the Python walk (which always decodes)."""
    html = _undecoded_pages()[name]
    assert walk._undecoded(html, None) is not None, name
    undecoded = walk_page(html, ["caf\u00e9", "plain"])
    monkeypatch.setattr(walk, "_undecoded", lambda html, charset: None)
    decoded = walk_page(html, ["caf\u00e9", "plain"])
    monkeypatch.setattr(native, "ext", None)
    python = walk_page(html, ["caf\u00e9", "plain"])
    for other in (decoded, python):
        assert undecoded.rows.equals(other.rows), name
        assert undecoded.segments == other.segments and undecoded.encoding == other.encoding
        assert undecoded.classes == other.classes and undecoded.ids == other.ids


def test_undecoded_walk_leaves_other_pages_to_the_decoder():
    """What ``_undecoded`` declines (decode_html's text would not be the bytes' UTF-8, or a cap
    would change it): a BOM, a NUL, U+FFFD, invalid UTF-8, ASCII declared in an encoding that is
    not windows-1252 or UTF-8, a tag over the attribute cap, a page over ``MAX_TEXT_RUN``."""
    from hwnoise.features.limits import MAX_ATTRIBUTES, MAX_TEXT_RUN

    ok = "<p>caf\u00e9</p>".encode()
    assert walk._undecoded(ok, None) == "utf-8"
    assert walk._undecoded(b"<p>x</p>", "utf-16") is None
    assert walk._undecoded(b"<p>x</p>", "utf-8") == "utf-8"
    for page in (b"\xef\xbb\xbf" + ok, ok + b"\x00", ok + "\ufffd".encode(), ok + b"\xe9",
                 b"<meta charset=iso-2022-jp><p>x</p>",
                 b"<p " + b" ".join(b"a%d" % k for k in range(MAX_ATTRIBUTES + 1)) + b">x</p>",
                 b"<p>" + b"x" * MAX_TEXT_RUN + b"</p>"):
        assert walk._undecoded(page, None) is None, page[:40]


@pytest.mark.datasets
@pytest.mark.skipif(not (DATASETS / "big9").is_dir(), reason="../shared/datasets not present")
def test_undecoded_walk_equals_the_decoded_walk_on_the_bench_corpora(monkeypatch):
    """Every 4th page of the bench corpora: the walk's rows are the same whether the pages that
    may be parsed undecoded are, or are decoded first (most of them are UTF-8 or ASCII)."""
    pages = [p.read_bytes() for p in _corpus_sample(step=4)]
    undecoded = [walk_page(html, ["search", "results"]) for html in pages]
    assert sum(walk._undecoded(html, None) is not None for html in pages) > len(pages) // 2
    monkeypatch.setattr(walk, "_undecoded", lambda html, charset: None)
    for html, u in zip(pages, undecoded):
        d = walk_page(html, ["search", "results"])
        assert u.rows.equals(d.rows) and u.encoding == d.encoding and u.classes == d.classes


def _arrow(values):
    """The Arrow string array the features stage makes of a list of str (its reference)."""
    from hwnoise.features.build import _str_array

    return _str_array(values)


def _utf8_array(col):
    from hwnoise.features.build import SCHEMA, page_columns

    return page_columns({"xpath": col}, SCHEMA)["xpath"]


def test_utf8_columns_equal_the_lists(monkeypatch):
    """``xpaths_utf8`` and ``own_text_utf8`` (the features stage's xpath, tag path and text
    columns as Arrow buffers, no str per row) give the strings of the Python code, and
    ``site_keys_utf8`` its keys: random trees, owners in any order, rows with none, one and
    several segments (empty ones too), every width of UTF-8; what the Python code must decide
    (a non-ASCII tag, an owner out of range, a lone surrogate) gives None."""
    import random

    from hwnoise.features.measures import Utf8Column, sibling_structure, tag_factor, xpaths

    rng = random.Random(15)
    words = ["a", "b c", "", "\u00e9t\u00e9", "\u65e5\u672c", "\U0001f600", "x" * 40, "\u00a0"]
    for k in range(200):
        parent, tags = _random_tree(rng, rng.randint(1, 300))
        parent = np.array(parent, dtype=np.int64)
        nth = sibling_structure(parent, tags)[0]
        m = rng.randint(0, 2 * len(tags))
        owner = np.array([rng.randrange(len(tags)) for _ in range(m)], dtype=np.int64)
        if k % 2:
            owner.sort()
        texts = [rng.choice(words) for _ in range(m)]
        xp, tp = xpaths(parent, tags, nth, "/html/body", utf8=True)
        text = walk._own_text(owner, texts, len(tags), utf8=True)
        assert isinstance(xp, Utf8Column) and isinstance(tp, Utf8Column) and isinstance(text, Utf8Column)
        keys = np.empty(len(tags), np.uint64)
        assert EXT.site_keys_utf8(tp.offsets, tp.data, text.offsets, text.data, keys) is True
        monkeypatch.setattr(native, "ext", None)  # the reference: the Python code
        want_xp, want_tp = xpaths(parent, tags, nth, "/html/body")
        want_text = walk._own_text(owner, texts, len(tags))
        w = walk.PageWalk(columns={"node": np.arange(len(tags)), "text": want_text}, tagpath=want_tp)
        want_keys = w.site_keys
        monkeypatch.setattr(native, "ext", EXT)
        assert xp.tolist() == want_xp and tp.tolist() == want_tp and text.tolist() == want_text
        assert _utf8_array(xp).equals(_arrow(want_xp)) and _utf8_array(text).equals(_arrow(want_text))
        assert np.array_equal(keys, want_keys)
    factor = tag_factor(["body", "\u00e9"])
    assert EXT.xpaths_utf8(np.array([-1, 0]), factor[0], factor[1], np.ones(2, np.int64), "/r") is None
    assert EXT.own_text_utf8(np.array([3], dtype=np.int64), ["x"], 2) is None
    assert EXT.own_text_utf8(np.array([0], dtype=np.int64), ["a\ud800"], 1) is None
    with pytest.raises(ValueError):  # offsets past the data
        EXT.site_keys_utf8(np.array([0, 5], np.int32).tobytes(), b"ab", np.array([0, 0], np.int32).tobytes(),
                           b"", np.empty(1, np.uint64))


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_walk_with_utf8_columns_equals_the_python_walk(name, monkeypatch):
    """``walk_page(..., utf8_columns=True)``: the xpath and text columns as the Arrow arrays the
    features stage writes, and the site keys, equal those of the Python walk's lists."""
    html = FIXTURES[name]
    got = walk_page(html, ["text"], utf8_columns=True)
    monkeypatch.setattr(native, "ext", None)
    want = walk_page(html, ["text"])
    for c in ("xpath", "text"):
        assert got.column(c) == want.columns[c], name
        assert _utf8_array(got.columns[c]).equals(_arrow(want.columns[c])), name
    assert np.array_equal(got.site_keys, want.site_keys) and got.tagpath == want.tagpath
    assert got.rows.equals(want.rows), name


@pytest.mark.datasets
@pytest.mark.skipif(not (DATASETS / "big9").is_dir(), reason="../shared/datasets not present")
def test_walk_with_utf8_columns_equals_the_python_walk_on_the_bench_corpora(monkeypatch):
    """Every 8th page of the bench corpora: the same as above, page by page."""
    pages = [p.read_bytes() for p in _corpus_sample(step=8)]
    got = [walk_page(html, ["search", "results"], utf8_columns=True) for html in pages]
    assert all(isinstance(g.columns["xpath"], walk.Utf8Column) for g in got if len(g))
    monkeypatch.setattr(native, "ext", None)
    for html, g in zip(pages, got):
        w = walk_page(html, ["search", "results"])
        for c in ("xpath", "text"):
            assert _utf8_array(g.columns[c]).equals(_arrow(w.columns[c]))
        assert np.array_equal(g.site_keys, w.site_keys)

/* The walk's visit in C (optional): ``features.walk._visit`` over libxml2's nodes directly.
 *
 * ``visit(body, drop, hidden, hides, attrs, keep)`` returns what the Python ``_visit`` returns
 * (without ``path0``, which the caller adds), its numbers as int64 / bool buffers instead of
 * lists (``walk._visit`` wraps them with ``numpy.frombuffer``), plus each segment's length and
 * ``measures.tag_factor`` of the rows' tags (each row's code, the distinct tags) and a 3 x rows
 * int64 buffer of each row's own characters, own characters inside a link and characters
 * before it (``walk._measure`` computes them so from the lists), and whether an element it
 * skipped is a part streamed out of order (React's ``hidden`` segment with an ``id`` "S:...",
 * Marko's fragment with an ``id`` "af...<digit>"; ``features/streamed.py``), or None when the tree holds
 * something the Python walk treats in its own way (a comment, processing instruction or
 * entity reference among the visited nodes, a namespaced element, an attribute value made
 * of other than text): the caller then runs the Python walk, the reference.
 *
 * What it reproduces, node for node, from lxml 6 (``etree.iterwalk`` and ``_Element``):
 * - the visited nodes: elements, in document order, children found as ``iterwalk`` finds
 *   them (element, comment, entity reference and PI nodes; the non-elements make it bail);
 * - ``.text`` / ``.tail``: the contents of the consecutive text and CDATA nodes (XInclude
 *   markers skipped), as lxml's ``_collectText`` joins them;
 * - ``" ".join(s.split())``: whitespace is what ``str.isspace`` calls whitespace (the table
 *   below; ``squash`` exposes it so that a test compares it with Python on every code point);
 * - ``el.get(name)``: the first attribute of that name with no namespace, its text children
 *   joined, "" when it has none;
 * - ``el in hidden``: the same libxml2 node (lxml keeps one proxy per node);
 * - an inline ``style`` is judged by the Python ``hides`` (called only when one exists).
 *
 * It reads libxml2's structures (``libxml/tree.h`` from ``lxml.get_include()``) and calls no
 * libxml2 function; lxml's public C API (``elementFactory``, from ``lxml.etree.__pyx_capi__``)
 * makes the element proxies of ``keep``.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <libxml/tree.h>
#include "lxml.etree.h"
#include "_buffers.h"

typedef struct LxmlElement *(*element_factory_t)(struct LxmlDocument *, xmlNode *);
static element_factory_t element_factory = NULL;
static PyTypeObject *element_type = NULL;

/* -- growable buffers ------------------------------------------------------------------ */
typedef struct { char *p; Py_ssize_t n, cap; } Bytes;

static int bytes_reserve(Bytes *b, Py_ssize_t extra) {
    if (b->n + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    char *p = PyMem_Realloc(b->p, cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p; b->cap = cap;
    return 0;
}

/* -- whitespace as str.isspace: " ".join(s.split()) on UTF-8 ---------------------------- */
/* Length of the UTF-8 sequence at s (at most left bytes) and whether it is whitespace. */
static inline int utf8_space(const unsigned char *s, Py_ssize_t left, int *len) {
    unsigned char c = s[0];
    if (c < 0x80) {
        *len = 1;
        return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    }
    if (c < 0xE0) {
        *len = left >= 2 ? 2 : (int)left;
        return c == 0xC2 && left >= 2 && (s[1] == 0x85 || s[1] == 0xA0);
    }
    if (c < 0xF0) {
        *len = left >= 3 ? 3 : (int)left;
        if (left < 3) return 0;
        if (c == 0xE1) return s[1] == 0x9A && s[2] == 0x80;                  /* U+1680 */
        if (c == 0xE2) {
            if (s[1] == 0x80) return s[2] <= 0x8A || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF;
            return s[1] == 0x81 && s[2] == 0x9F;                                 /* U+205F */
        }
        if (c == 0xE3) return s[1] == 0x80 && s[2] == 0x80;                  /* U+3000 */
        return 0;
    }
    *len = left >= 4 ? 4 : (int)left;
    return 0;
}

/* Append s to out with whitespace runs collapsed; *gap says a space is pending (only after
 * something was written). */
static int squash_into(Bytes *out, const unsigned char *s, Py_ssize_t n, int *gap) {
    if (bytes_reserve(out, n + 1) < 0) return -1;
    char *w = out->p + out->n;
    Py_ssize_t i = 0;
    int g = *gap;
    while (i < n) {
        if ((unsigned char)(s[i] - 0x21) < 0x5F) {  /* a run of ASCII non-space bytes (most): copied */
            if (g && w != out->p) *w++ = ' ';
            g = 0;
            do *w++ = (char)s[i++]; while (i < n && (unsigned char)(s[i] - 0x21) < 0x5F);
            continue;
        }
        int len;
        if (utf8_space(s + i, n - i, &len)) {
            g = 1;
        } else {
            if (g && w != out->p) *w++ = ' ';
            g = 0;
            for (int k = 0; k < len; k++) w[k] = (char)s[i + k];
            w += len;
        }
        i += len;
    }
    out->n = w - out->p;
    *gap = g;
    return 0;
}

static inline int is_text(xmlNode *n) {
    return n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE;
}

/* lxml's _textNodeOrSkip */
static inline xmlNode *text_or_skip(xmlNode *n) {
    while (n) {
        if (is_text(n)) return n;
        if (n->type == XML_XINCLUDE_START || n->type == XML_XINCLUDE_END) n = n->next;
        else return NULL;
    }
    return NULL;
}

/* The squashed text of the text nodes from n on (.text with n = children, .tail with
 * n = next): a new str, or NULL with no exception when it is empty. */
static PyObject *squashed_text(xmlNode *n, Bytes *buf, int *err) {
    buf->n = 0;
    int gap = 0;
    for (n = text_or_skip(n); n; n = text_or_skip(n->next)) {
        if (n->content && n->content[0]
                && squash_into(buf, n->content, (Py_ssize_t)strlen((const char *)n->content), &gap) < 0) {
            *err = 1;
            return NULL;
        }
    }
    if (!buf->n) return NULL;
    PyObject *s = PyUnicode_DecodeUTF8(buf->p, buf->n, NULL);
    if (!s) *err = 1;
    return s;
}

/* -- iterwalk's steps ------------------------------------------------------------------ */
static inline int walked(xmlNode *n) {  /* lxml's _isElement */
    return n->type == XML_ELEMENT_NODE || n->type == XML_COMMENT_NODE
        || n->type == XML_ENTITY_REF_NODE || n->type == XML_PI_NODE;
}

static inline xmlNode *first_walked(xmlNode *n) {
    for (n = n->children; n && !walked(n); n = n->next) {}
    return n;
}

static inline xmlNode *next_walked(xmlNode *n) {
    for (n = n->next; n && !walked(n); n = n->next) {}
    return n;
}

/* -- attributes ------------------------------------------------------------------------ */
/* el.get(name): 1 and *value set (new str) when present, 0 when absent, -1 on error, -2 when
 * the value holds other than text (the Python walk decides). */
static int attr_value(xmlAttr *a, PyObject **value, Bytes *buf) {
    xmlNode *c = a->children;
    if (!c) { *value = PyUnicode_FromStringAndSize("", 0); return *value ? 1 : -1; }
    if (!c->next && is_text(c)) {
        const char *s = c->content ? (const char *)c->content : "";
        *value = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), NULL);
        return *value ? 1 : -1;
    }
    buf->n = 0;
    for (; c; c = c->next) {
        if (!is_text(c)) return -2;
        if (c->content) {
            Py_ssize_t k = (Py_ssize_t)strlen((const char *)c->content);
            if (bytes_reserve(buf, k) < 0) return -1;
            memcpy(buf->p + buf->n, c->content, k);
            buf->n += k;
        }
    }
    *value = PyUnicode_DecodeUTF8(buf->p ? buf->p : "", buf->n, NULL);
    return *value ? 1 : -1;
}

/* Whether ``needle`` (lower-case ASCII) occurs in s[0:n] with ASCII letters in any case. */
static int ascii_icontains(const unsigned char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) {
        size_t j = 0;
        while (j < k && (s[i + j] | 0x20) == (unsigned char)needle[j]) j++;
        if (j == k) return 1;
    }
    return 0;
}

/* An inline style that css.hides surely finds showing, without calling it: its value is one
 * text node, ASCII, and holds none of "none", "hidden", "collapse" in any case (the words the
 * pattern needs; on ASCII text its IGNORECASE matches ASCII case variants only). */
static int plainly_shown(xmlAttr *a) {
    xmlNode *c = a->children;
    if (!c) return 1;  /* "": not hidden */
    if (c->next || !is_text(c)) return 0;
    const unsigned char *v = c->content ? c->content : (const unsigned char *)"";
    size_t n = strlen((const char *)v);
    for (size_t i = 0; i < n; i++)
        if (v[i] >= 0x80) return 0;
    return !ascii_icontains(v, n, "none") && !ascii_icontains(v, n, "hidden")
        && !ascii_icontains(v, n, "collapse");
}

enum { A_STYLE, A_HIDDEN, A_CLASS, A_ID, A_N };

/* The first no-namespace attribute of each name we read. */
static void find_attrs(xmlNode *n, xmlAttr **found) {
    for (int k = 0; k < A_N; k++) found[k] = NULL;
    for (xmlAttr *a = n->properties; a; a = a->next) {
        if (a->ns || !a->name) continue;
        const char *nm = (const char *)a->name;
        int k = -1;
        switch (nm[0]) {
        case 's': if (!strcmp(nm, "style")) k = A_STYLE; break;
        case 'h': if (!strcmp(nm, "hidden")) k = A_HIDDEN; break;
        case 'c': if (!strcmp(nm, "class")) k = A_CLASS; break;
        case 'i': if (!strcmp(nm, "id")) k = A_ID; break;
        }
        if (k >= 0 && !found[k]) found[k] = a;
    }
}

/* What an element's id says of a streamed part (features/streamed.py), read from the attribute's
 * text children: 1 when it starts with "S:" (React's segment), 2 when it is "af", ASCII letters,
 * digits or "_", and ends with a digit (Marko's async fragment), else 0; -1 when a child is not a
 * text node (the caller counts that as a segment: the placement step looks at the page then). */
#define STREAMED_ID_MAX 128  /* longer ids are no Marko fragment's */
static int streamed_id(xmlAttr *a) {
    char got[STREAMED_ID_MAX + 1];
    int k = 0;
    for (xmlNode *c = a->children; c; c = c->next) {
        if (!is_text(c)) return -1;
        for (const unsigned char *v = c->content; v && *v; v++) {
            if (k == STREAMED_ID_MAX) return k >= 2 && got[0] == 'S' && got[1] == ':';
            got[k++] = (char)*v;
        }
    }
    if (k >= 2 && got[0] == 'S' && got[1] == ':') return 1;
    if (k < 3 || got[0] != 'a' || got[1] != 'f' || got[k - 1] < '0' || got[k - 1] > '9') return 0;
    for (int j = 2; j < k; j++) {
        char ch = got[j];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return 0;
    }
    return 2;
}

/* -- tag names: one str per libxml2 name pointer (names come from the document's dict) ---- */
#define TAGS 512
typedef struct { const xmlChar *name; PyObject *str; int drop, is_a; Py_ssize_t code1; } TagSlot;  /* code1: code + 1, 0 before its first row */

static TagSlot *tag_of(TagSlot *cache, const xmlChar *name, PyObject *drop) {
    size_t h = (size_t)(((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ULL) >> 55) & (TAGS - 1);
    for (size_t k = 0; k < TAGS; k++) {
        TagSlot *t = &cache[(h + k) & (TAGS - 1)];
        if (t->name == name) return t;
        if (!t->name) {
            PyObject *s = PyUnicode_DecodeUTF8((const char *)name, (Py_ssize_t)strlen((const char *)name), NULL);
            if (!s) return NULL;
            int d = PySet_Contains(drop, s);
            if (d < 0) { Py_DECREF(s); return NULL; }
            t->name = name; t->str = s; t->drop = d;
            t->is_a = name[0] == 'a' && name[1] == 0;
            return t;
        }
    }
    PyErr_SetString(PyExc_OverflowError, "too many distinct tags");  /* caller falls back */
    return NULL;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static int in_hidden(const uintptr_t *hid, Py_ssize_t nh, xmlNode *n) {
    uintptr_t key = (uintptr_t)n;
    Py_ssize_t lo = 0, hi = nh;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (hid[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < nh && hid[lo] == key;
}

/* -- the visit ------------------------------------------------------------------------- */
/* One text segment (the squashed text of the text nodes from ``first`` on, if any) owned by
 * row ``owner``, inside a link or not: appended to the visit's segment lists. */
static int add_segment(PyObject *seg_text, Ints *owners, Ints *links, Ints *lens, xmlNode *first,
                       Bytes *buf, Py_ssize_t owner, int link) {
    int err = 0;
    PyObject *t = squashed_text(first, buf, &err);
    if (err) return -1;
    if (!t) return 0;
    Py_ssize_t len = PyUnicode_GET_LENGTH(t);
    int r = PyList_Append(seg_text, t);
    Py_DECREF(t);
    if (r < 0 || ints_push(owners, owner) < 0 || ints_push(links, link) < 0 || ints_push(lens, len) < 0)
        return -1;
    return 0;
}

typedef struct { xmlNode *node; Py_ssize_t row; int in_link; } Frame;

/* The visit's numbers as buffers for numpy.frombuffer (no Python int per row): int64 ... */
static PyObject *ints_buffer(const Ints *a) {
    PyObject *b = PyByteArray_FromStringAndSize(NULL, a->n * (Py_ssize_t)sizeof(int64_t));
    if (!b) return NULL;
    int64_t *d = (int64_t *)PyByteArray_AS_STRING(b);
    for (Py_ssize_t i = 0; i < a->n; i++) d[i] = (int64_t)a->p[i];
    return b;
}

/* ... and bool (one byte each, 0 or 1). */
static PyObject *bools_buffer(const Ints *a) {
    PyObject *b = PyByteArray_FromStringAndSize(NULL, a->n);
    if (!b) return NULL;
    char *d = PyByteArray_AS_STRING(b);
    for (Py_ssize_t i = 0; i < a->n; i++) d[i] = a->p[i] ? 1 : 0;
    return b;
}

#define FAIL do { goto fail; } while (0)
#define BAIL do { bail = 1; goto fail; } while (0)
#define CHECK(x) do { if ((x) < 0) FAIL; } while (0)

static PyObject *visit(PyObject *self, PyObject *args) {
    PyObject *body_obj, *drop, *hidden, *hides;
    int attrs, keep;
    if (!PyArg_ParseTuple(args, "OOOOpp", &body_obj, &drop, &hidden, &hides, &attrs, &keep)) return NULL;
    if (!PyAnySet_Check(drop)) { PyErr_SetString(PyExc_TypeError, "drop must be a set"); return NULL; }
    if (!PyObject_TypeCheck(body_obj, element_type)) {
        PyErr_SetString(PyExc_TypeError, "body must be an lxml element");
        return NULL;
    }
    struct LxmlElement *body_el = (struct LxmlElement *)body_obj;
    xmlNode *body = body_el->_c_node;
    if (!body || body->type != XML_ELEMENT_NODE || body->ns) Py_RETURN_NONE;

    PyObject *result = NULL;
    int bail = 0;
    TagSlot *cache = PyMem_Calloc(TAGS, sizeof(TagSlot));
    Bytes buf = {0}, abuf = {0};
    Ints parents = {0}, depths = {0}, seg_start = {0}, seg_owner = {0}, seg_link = {0}, link_flag = {0}, lasts = {0},
          seg_len = {0}, codes = {0};
    Frame *stack = NULL;
    Py_ssize_t sp = 0, scap = 0;
    uintptr_t *hid = NULL;
    Py_ssize_t nh = 0;
    PyObject *tags = PyList_New(0), *seg_text = PyList_New(0);
    PyObject *classes = PyList_New(0), *ids = PyList_New(0), *elements = PyList_New(0);
    PyObject *uniq = PyList_New(0);  /* the distinct tags in order of their first row */
    if (!cache || !tags || !seg_text || !classes || !ids || !elements || !uniq) FAIL;

    /* the hidden set as sorted node pointers */
    if (hidden != Py_None && PyObject_IsTrue(hidden)) {
        PyObject *it = PyObject_GetIter(hidden), *item;
        if (!it) FAIL;
        Py_ssize_t cap = 16;
        hid = PyMem_Malloc(cap * sizeof(uintptr_t));
        if (!hid) { Py_DECREF(it); PyErr_NoMemory(); FAIL; }
        while ((item = PyIter_Next(it))) {
            if (PyObject_TypeCheck(item, element_type)) {
                if (nh == cap) {
                    uintptr_t *p = PyMem_Realloc(hid, 2 * cap * sizeof(uintptr_t));
                    if (!p) { Py_DECREF(item); Py_DECREF(it); PyErr_NoMemory(); FAIL; }
                    hid = p; cap *= 2;
                }
                hid[nh++] = (uintptr_t)((struct LxmlElement *)item)->_c_node;
            }
            Py_DECREF(item);
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) FAIL;
        qsort(hid, nh, sizeof(uintptr_t), cmp_ptr);
    }

    Py_ssize_t cur = -1;
    int in_link = 0, segment = 0;  /* segment: a skipped element is a streamed part (streamed_id) */
    xmlNode *n = body;
    int entering = 1;  /* n is an element to start (else: the element on top just ended) */
    for (;;) {
        if (entering) {
            if (n->type != XML_ELEMENT_NODE || n->ns || !n->name) BAIL;
            TagSlot *t = tag_of(cache, n->name, drop);
            if (!t) { if (PyErr_ExceptionMatches(PyExc_OverflowError)) { PyErr_Clear(); BAIL; } FAIL; }
            xmlAttr *found[A_N];
            find_attrs(n, found);
            int skip = 0;
            if (n != body) {
                if (t->drop) {
                    skip = 1;
                } else {
                    if (found[A_STYLE] && !plainly_shown(found[A_STYLE])) {
                        PyObject *st;
                        int r = attr_value(found[A_STYLE], &st, &abuf);
                        if (r == -2) BAIL;
                        CHECK(r);
                        PyObject *v = PyObject_CallOneArg(hides, st);
                        Py_DECREF(st);
                        if (!v) FAIL;
                        skip = PyObject_IsTrue(v);
                        Py_DECREF(v);
                        CHECK(skip);
                    }
                    if (!skip && found[A_HIDDEN]) skip = 1;
                    if (!skip && nh && in_hidden(hid, nh, n)) skip = 1;
                    if (skip && found[A_ID] && !segment) {
                        int kind = streamed_id(found[A_ID]);
                        if (kind == 2 || (kind != 0 && found[A_HIDDEN])) segment = 1;
                    }
                }
            }
            if (skip) {
                CHECK(add_segment(seg_text, &seg_owner, &seg_link, &seg_len, n->next, &buf, cur, in_link));
                xmlNode *nx = next_walked(n);
                if (nx) { n = nx; continue; }
                entering = 0;
                continue;
            }
            Py_ssize_t i = PyList_GET_SIZE(tags);
            CHECK(PyList_Append(tags, t->str));
            if (!t->code1) {  /* the tag's first row: its code (another name pointer may spell it) */
                Py_ssize_t nu = PyList_GET_SIZE(uniq), k = 0;
                for (; k < nu; k++) {
                    int r = PyUnicode_Compare(PyList_GET_ITEM(uniq, k), t->str);
                    if (r == -1 && PyErr_Occurred()) FAIL;
                    if (r == 0) break;
                }
                if (k == nu) CHECK(PyList_Append(uniq, t->str));
                t->code1 = k + 1;
            }
            CHECK(ints_push(&codes, t->code1 - 1));
            CHECK(ints_push(&parents, cur));
            CHECK(ints_push(&depths, sp));
            CHECK(ints_push(&seg_start, PyList_GET_SIZE(seg_text)));
            CHECK(ints_push(&lasts, i));
            CHECK(ints_push(&link_flag, t->is_a));
            if (attrs) {
                for (int k = A_CLASS; k <= A_ID; k++) {
                    PyObject *v = Py_None;
                    if (found[k]) {
                        int r = attr_value(found[k], &v, &abuf);
                        if (r == -2) BAIL;
                        CHECK(r);
                    } else {
                        Py_INCREF(v);
                    }
                    int r = PyList_Append(k == A_CLASS ? classes : ids, v);
                    Py_DECREF(v);
                    CHECK(r);
                }
            }
            if (keep) {
                PyObject *e = (PyObject *)element_factory(body_el->_doc, n);
                if (!e) FAIL;
                int r = PyList_Append(elements, e);
                Py_DECREF(e);
                CHECK(r);
            }
            if (sp == scap) {
                Py_ssize_t cap = scap ? 2 * scap : 64;
                Frame *p = PyMem_Realloc(stack, cap * sizeof(Frame));
                if (!p) { PyErr_NoMemory(); FAIL; }
                stack = p; scap = cap;
            }
            stack[sp].node = n; stack[sp].row = cur; stack[sp].in_link = in_link;
            sp++;
            cur = i;
            in_link = in_link || t->is_a;
            CHECK(add_segment(seg_text, &seg_owner, &seg_link, &seg_len, n->children, &buf, i, in_link));
            xmlNode *c = first_walked(n);
            if (c) { n = c; continue; }
            entering = 0;
            continue;
        }
        /* the element on top of the stack ends */
        sp--;
        xmlNode *el = stack[sp].node;
        lasts.p[cur] = PyList_GET_SIZE(tags) - 1;
        cur = stack[sp].row;
        in_link = stack[sp].in_link;
        if (el == body) break;
        CHECK(add_segment(seg_text, &seg_owner, &seg_link, &seg_len, el->next, &buf, cur, in_link));
        xmlNode *nx = next_walked(el);
        if (nx) { n = nx; entering = 1; }
    }

    {
        PyObject *l_par = ints_buffer(&parents), *l_dep = ints_buffer(&depths), *l_start = ints_buffer(&seg_start);
        PyObject *l_own = ints_buffer(&seg_owner), *l_link = bools_buffer(&seg_link);
        PyObject *l_flag = bools_buffer(&link_flag), *l_last = ints_buffer(&lasts);
        PyObject *l_len = ints_buffer(&seg_len), *l_codes = ints_buffer(&codes);
        /* each row's own characters, those inside a link, and the characters before it */
        Py_ssize_t nrow = parents.n, nseg = seg_len.n;
        PyObject *l_sums = PyByteArray_FromStringAndSize(NULL, 3 * nrow * (Py_ssize_t)sizeof(int64_t));
        if (l_sums) {
            int64_t *own_c = (int64_t *)PyByteArray_AS_STRING(l_sums), *own_l = own_c + nrow, *prior = own_l + nrow;
            memset(own_c, 0, 2 * nrow * sizeof(int64_t));
            Py_ssize_t si = 0;
            int64_t total = 0;
            for (Py_ssize_t i = 0; i < nrow; i++) {  /* seg_start is non-decreasing */
                for (; si < seg_start.p[i] && si < nseg; si++) total += seg_len.p[si];
                prior[i] = total;
            }
            for (Py_ssize_t j = 0; j < nseg; j++) {
                Py_ssize_t o = seg_owner.p[j];
                if (o < 0 || o >= nrow) continue;
                own_c[o] += seg_len.p[j];
                if (seg_link.p[j]) own_l[o] += seg_len.p[j];
            }
        }
        if (l_par && l_dep && l_start && l_own && l_link && l_flag && l_last && l_len && l_codes && l_sums)
            result = PyTuple_Pack(17, tags, l_par, l_dep, l_start, l_own, seg_text, l_link, l_flag,
                                  classes, ids, elements, l_last, l_len, l_codes, uniq, l_sums,
                                  segment ? Py_True : Py_False);
        Py_XDECREF(l_codes); Py_XDECREF(l_sums);
        Py_XDECREF(l_par); Py_XDECREF(l_dep); Py_XDECREF(l_start); Py_XDECREF(l_own);
        Py_XDECREF(l_link); Py_XDECREF(l_flag); Py_XDECREF(l_last); Py_XDECREF(l_len);
    }
fail:
    if (bail && !result) {
        PyErr_Clear();
        result = Py_None;
        Py_INCREF(result);
    }
    if (cache) {
        for (int k = 0; k < TAGS; k++) Py_XDECREF(cache[k].str);
        PyMem_Free(cache);
    }
    PyMem_Free(buf.p); PyMem_Free(abuf.p);
    PyMem_Free(parents.p); PyMem_Free(depths.p); PyMem_Free(seg_start.p); PyMem_Free(seg_owner.p);
    PyMem_Free(seg_link.p); PyMem_Free(link_flag.p); PyMem_Free(lasts.p); PyMem_Free(seg_len.p);
    PyMem_Free(codes.p); Py_XDECREF(uniq);
    PyMem_Free(stack); PyMem_Free(hid);
    Py_XDECREF(tags); Py_XDECREF(seg_text); Py_XDECREF(classes); Py_XDECREF(ids); Py_XDECREF(elements);
    return result;
}

static PyObject *squash(PyObject *self, PyObject *arg) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!s) return NULL;
    Bytes out = {0};
    int gap = 0;
    if (squash_into(&out, (const unsigned char *)s, n, &gap) < 0) { PyMem_Free(out.p); return NULL; }
    PyObject *r = PyUnicode_DecodeUTF8(out.p ? out.p : "", out.n, NULL);
    PyMem_Free(out.p);
    return r;
}

/* paths(parent, steps, root): out[0] = root, out[i] = out[parent[i]] + steps[i], for
 * measures.xpaths; None when a row's parent does not come before it (not document order). */
static PyObject *paths(PyObject *self, PyObject *args) {
    PyObject *parent_obj, *steps, *root;
    if (!PyArg_ParseTuple(args, "OO!U", &parent_obj, &PyList_Type, &steps, &root)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(parent_obj, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(steps);
    PyObject *out = NULL;
    if (view.itemsize != 8 || !view.format || strchr("qlQL", view.format[view.format[0] == '<' || view.format[0] == '=' || view.format[0] == '@'])
            == NULL || view.len / 8 != n) {
        PyErr_SetString(PyExc_TypeError, "parent must be int64 with one entry per step");
        goto done;
    }
    const int64_t *parent = view.buf;
    out = PyList_New(n);
    if (!out || !n) goto done;
    Py_INCREF(root);
    PyList_SET_ITEM(out, 0, root);
    for (Py_ssize_t i = 1; i < n; i++) {
        int64_t p = parent[i];
        if (p < 0 || p >= i) {  /* not a tree in document order: the caller's loop decides */
            Py_CLEAR(out);
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        PyObject *v = PyUnicode_Concat(PyList_GET_ITEM(out, p), PyList_GET_ITEM(steps, i));
        if (!v) { Py_CLEAR(out); goto done; }
        PyList_SET_ITEM(out, i, v);
    }
done:
    PyBuffer_Release(&view);
    return out;
}


/* The arguments of own_text and own_text_utf8: (owner, texts, n), owner int64 with one entry
 * per text (a list of m), n >= 0 rows. */
typedef struct { Py_buffer view; const int64_t *owner; PyObject *texts; Py_ssize_t n, m; } OwnerArgs;

/* Parse them into a: -1 on an error (set; nothing held), else 0 with owner's buffer held (the
 * caller releases a->view). */
static int owner_args(PyObject *args, OwnerArgs *a) {
    PyObject *owner_obj;
    if (!PyArg_ParseTuple(args, "OO!n", &owner_obj, &PyList_Type, &a->texts, &a->n)) return -1;
    if (PyObject_GetBuffer(owner_obj, &a->view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    a->m = PyList_GET_SIZE(a->texts);
    a->owner = a->view.buf;
    if (a->view.itemsize != 8 || a->view.len / 8 != a->m || a->n < 0) {
        PyBuffer_Release(&a->view);
        PyErr_SetString(PyExc_TypeError, "own_text: int64 owners, one per text");
        return -1;
    }
    if (a->n > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t) - 1) {  /* no n + 1 offsets (n + 1 overflowed) */
        PyBuffer_Release(&a->view);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* own_text(owner, texts, n): walk._own_text, each row's own text: its segments (texts[j]
 * owned by row owner[j], int64) joined by one space in document order, "" for none. None
 * when an owner is out of range (the Python code decides). */
static PyObject *own_text(PyObject *self, PyObject *args) {
    OwnerArgs A;
    if (owner_args(args, &A) < 0) return NULL;
    PyObject *texts = A.texts, *out = NULL, *empty = NULL, *space = NULL;
    Py_ssize_t n = A.n, m = A.m, *count = NULL;
    const int64_t *owner = A.owner;
    for (Py_ssize_t j = 0; j < m; j++) {
        if (owner[j] < 0 || owner[j] >= n || !PyUnicode_Check(PyList_GET_ITEM(texts, j))) {
            out = Py_None; Py_INCREF(out);
            goto done;
        }
    }
    count = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    empty = PyUnicode_New(0, 0);
    space = PyUnicode_FromStringAndSize(" ", 1);
    out = count && empty && space ? PyList_New(n) : NULL;
    if (!out) { if (!count) PyErr_NoMemory(); goto done; }
    for (Py_ssize_t j = 0; j < m; j++) count[owner[j]]++;
    for (Py_ssize_t i = 0; i < n; i++) { Py_INCREF(empty); PyList_SET_ITEM(out, i, empty); }
    for (Py_ssize_t j = 0; j < m; j++) {
        Py_ssize_t o = owner[j];
        PyObject *t = PyList_GET_ITEM(texts, j), *cur = PyList_GET_ITEM(out, o), *v;
        if (cur == empty) { Py_INCREF(t); v = t; }  /* the first (often the only) segment */
        else {                                       /* rows with several: a few */
            PyObject *a = PyUnicode_Concat(cur, space);
            v = a ? PyUnicode_Concat(a, t) : NULL;
            Py_XDECREF(a);
            if (!v) { Py_CLEAR(out); goto done; }
        }
        PyList_SET_ITEM(out, o, v);
        Py_DECREF(cur);
    }
done:
    PyMem_Free(count);
    Py_XDECREF(empty); Py_XDECREF(space);
    PyBuffer_Release(&A.view);
    return out;
}

/* v in decimal into out (no NUL; 20 digits and a sign at most): its length (printf's %lld). */
static inline int decimal(int64_t v, char *out) {
    char tmp[24];
    int k = 0, neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[k++] = (char)('0' + u % 10); u /= 10; } while (u);
    int n = 0;
    if (neg) out[n++] = '-';
    while (k) out[n++] = tmp[--k];
    return n;
}

/* The arguments of xpaths and xpaths_utf8: (parent, codes, tags, nth, root), parent, codes and
 * nth int64 of one length (the rows). */
typedef struct { Py_buffer p, c, n; PyObject *tags, *root; Py_ssize_t rows; } XpathArgs;

/* Parse them into a: -1 on an error (set; nothing held), else 1 when the rows may be made here
 * and 0 when the Python code must decide (a tag or root not ASCII, a code out of range, a
 * row's parent not before it); the caller then releases a's buffers (xpath_args_release). */
static int xpath_args(PyObject *args, XpathArgs *a) {
    PyObject *parent_obj, *codes_obj, *nth_obj;
    if (!PyArg_ParseTuple(args, "OOO!OU", &parent_obj, &codes_obj, &PyList_Type, &a->tags, &nth_obj, &a->root))
        return -1;
    if (PyObject_GetBuffer(parent_obj, &a->p, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(codes_obj, &a->c, PyBUF_C_CONTIGUOUS) < 0) { PyBuffer_Release(&a->p); return -1; }
    if (PyObject_GetBuffer(nth_obj, &a->n, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&a->p); PyBuffer_Release(&a->c); return -1;
    }
    if (a->p.itemsize != 8 || a->c.itemsize != 8 || a->n.itemsize != 8 || a->c.len != a->p.len
            || a->n.len != a->p.len) {
        PyBuffer_Release(&a->p); PyBuffer_Release(&a->c); PyBuffer_Release(&a->n);
        PyErr_SetString(PyExc_TypeError, "xpaths: int64 parent, codes and nth of one length");
        return -1;
    }
    Py_ssize_t n = a->rows = a->p.len / 8, nt = PyList_GET_SIZE(a->tags);
    const int64_t *parent = a->p.buf, *code = a->c.buf;
    int ok = PyUnicode_IS_ASCII(a->root);
    for (Py_ssize_t k = 0; ok && k < nt; k++) {
        PyObject *t = PyList_GET_ITEM(a->tags, k);
        ok = PyUnicode_Check(t) && PyUnicode_IS_ASCII(t);
    }
    for (Py_ssize_t i = 0; ok && i < n; i++)
        ok = code[i] >= 0 && code[i] < nt && (i == 0 || (parent[i] >= 0 && parent[i] < i));
    return ok;
}

static void xpath_args_release(XpathArgs *a) {
    PyBuffer_Release(&a->p); PyBuffer_Release(&a->c); PyBuffer_Release(&a->n);
}

/* xpaths(parent, codes, tags, nth, root): measures.xpaths' (xpath, tag path) of each row, made
 * in one pass: row i's xpath is its parent's plus "/" tags[codes[i]] "[" nth[i] "]", its tag
 * path its parent's plus "/" tags[codes[i]]; row 0's are root. None when a tag or root is not
 * ASCII, a code out of range, or a row's parent does not come before it (the Python code
 * decides). parent, codes, nth: int64, one per row. */
static PyObject *xpaths(PyObject *self, PyObject *args) {
    XpathArgs A;
    int ok = xpath_args(args, &A);
    if (ok < 0) return NULL;
    PyObject *res = NULL, *xp = NULL, *tp = NULL, *tags = A.tags, *root = A.root;
    Py_ssize_t n = A.rows;
    const int64_t *parent = A.p.buf, *code = A.c.buf, *nth = A.n.buf;
    if (!ok) { res = Py_None; Py_INCREF(res); goto done; }
    xp = PyList_New(n);
    tp = xp ? PyList_New(n) : NULL;
    if (!tp) goto done;
    if (n) {
        Py_INCREF(root); PyList_SET_ITEM(xp, 0, root);
        Py_INCREF(root); PyList_SET_ITEM(tp, 0, root);
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        PyObject *pa = PyList_GET_ITEM(xp, parent[i]), *pt = PyList_GET_ITEM(tp, parent[i]);
        PyObject *t = PyList_GET_ITEM(tags, code[i]);
        Py_ssize_t lt = PyUnicode_GET_LENGTH(t), la = PyUnicode_GET_LENGTH(pa), lpt = PyUnicode_GET_LENGTH(pt);
        char num[24];
        int ln = decimal(nth[i], num);
        PyObject *a = PyUnicode_New(la + 1 + lt + 2 + ln, 127);
        if (!a) goto done;
        char *w = (char *)PyUnicode_DATA(a);
        memcpy(w, PyUnicode_DATA(pa), la); w += la;
        *w++ = '/';
        memcpy(w, PyUnicode_DATA(t), lt); w += lt;
        *w++ = '[';
        memcpy(w, num, ln); w += ln;
        *w = ']';
        PyList_SET_ITEM(xp, i, a);
        PyObject *b = PyUnicode_New(lpt + 1 + lt, 127);
        if (!b) goto done;
        w = (char *)PyUnicode_DATA(b);
        memcpy(w, PyUnicode_DATA(pt), lpt); w += lpt;
        *w++ = '/';
        memcpy(w, PyUnicode_DATA(t), lt);
        PyList_SET_ITEM(tp, i, b);
    }
    res = PyTuple_Pack(2, xp, tp);
done:
    Py_XDECREF(xp); Py_XDECREF(tp);
    xpath_args_release(&A);
    return res;
}


/* -- css.page_style's style sheets ----------------------------------------------------- */
/* style_sheets(root): css._style_sheets_python, ``(text, media)`` for each ``<style>`` element
 * of root's subtree (root included) in document order that has no ``<noscript>`` ancestor: its
 * ``el.text`` (empty ones left out) and its ``media`` attribute (None without one); None when an
 * element has a namespace or the media attribute is made of other than text (the Python code
 * decides). One pass over libxml2's nodes, where ``root.iter("style")`` makes lxml step through
 * every node. */
static PyObject *style_sheets(PyObject *self, PyObject *arg) {
    if (!PyObject_TypeCheck(arg, element_type)) {
        PyErr_SetString(PyExc_TypeError, "root must be an lxml element");
        return NULL;
    }
    xmlNode *top = ((struct LxmlElement *)arg)->_c_node;
    if (!top || top->type != XML_ELEMENT_NODE) Py_RETURN_NONE;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    Bytes buf = {0}, abuf = {0};
    Py_ssize_t noscript = 0;  /* open <noscript> ancestors */
    xmlNode *n = top;
    for (;;) {
        if (n->type == XML_ELEMENT_NODE) {
            if (n->ns || !n->name) { Py_DECREF(out); PyMem_Free(buf.p); PyMem_Free(abuf.p); Py_RETURN_NONE; }
            const char *nm = (const char *)n->name;
            if (!noscript && !strcmp(nm, "style")) {  /* el.text: the first run of text nodes */
                buf.n = 0;
                for (xmlNode *c = text_or_skip(n->children); c; c = text_or_skip(c->next)) {
                    if (!c->content) continue;
                    Py_ssize_t k = (Py_ssize_t)strlen((const char *)c->content);
                    if (bytes_reserve(&buf, k) < 0) { Py_DECREF(out); PyMem_Free(buf.p); PyMem_Free(abuf.p); return NULL; }
                    memcpy(buf.p + buf.n, c->content, k);
                    buf.n += k;
                }
                if (buf.n) {
                    PyObject *t = PyUnicode_DecodeUTF8(buf.p, buf.n, NULL), *media = NULL, *pair = NULL;
                    if (t) {
                        xmlAttr *a = NULL;
                        for (xmlAttr *p = n->properties; p; p = p->next)
                            if (!p->ns && p->name && !strcmp((const char *)p->name, "media")) { a = p; break; }
                        if (a) {
                            int r = attr_value(a, &media, &abuf);
                            if (r == -2) { Py_DECREF(t); Py_DECREF(out); PyMem_Free(buf.p); PyMem_Free(abuf.p); Py_RETURN_NONE; }
                        } else {
                            media = Py_None; Py_INCREF(media);
                        }
                        if (media) pair = PyTuple_Pack(2, t, media);
                    }
                    Py_XDECREF(t); Py_XDECREF(media);
                    if (!pair || PyList_Append(out, pair) < 0) {
                        Py_XDECREF(pair); Py_DECREF(out); PyMem_Free(buf.p); PyMem_Free(abuf.p); return NULL;
                    }
                    Py_DECREF(pair);
                }
            }
            if (n->children) {
                noscript += !strcmp(nm, "noscript");
                n = n->children;
                continue;
            }
        }
        while (n != top && !n->next) {  /* climb out of the subtrees that end here */
            n = n->parent;
            if (n->type == XML_ELEMENT_NODE && n->name && !strcmp((const char *)n->name, "noscript")) noscript--;
        }
        if (n == top) break;
        n = n->next;
    }
    PyMem_Free(buf.p);
    PyMem_Free(abuf.p);
    return out;
}


/* fold_ascii(texts): walk._fold_ascii, ``(folded, rest)``: each ASCII text lower-cased (the
 * text itself when it has no capital), None for a text that is not ASCII, and the indices of
 * those; None when an item is not a str (the Python code decides). */
static PyObject *fold_ascii(PyObject *self, PyObject *arg) {
    if (!PyList_Check(arg)) { PyErr_SetString(PyExc_TypeError, "fold_ascii: a list"); return NULL; }
    Py_ssize_t m = PyList_GET_SIZE(arg);
    for (Py_ssize_t j = 0; j < m; j++)
        if (!PyUnicode_Check(PyList_GET_ITEM(arg, j))) Py_RETURN_NONE;
    PyObject *out = PyList_New(m), *rest = PyList_New(0);
    if (!out || !rest) goto fail;
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *t = PyList_GET_ITEM(arg, j), *v;
        if (!PyUnicode_IS_ASCII(t)) {
            PyObject *k = PyLong_FromSsize_t(j);
            if (!k || PyList_Append(rest, k) < 0) { Py_XDECREF(k); goto fail; }
            Py_DECREF(k);
            Py_INCREF(Py_None);
            PyList_SET_ITEM(out, j, Py_None);
            continue;
        }
        const unsigned char *d = PyUnicode_DATA(t);
        Py_ssize_t len = PyUnicode_GET_LENGTH(t), i = 0;
        while (i < len && !(d[i] >= 'A' && d[i] <= 'Z')) i++;
        if (i == len) {
            Py_INCREF(t);
            v = t;
        } else {
            v = PyUnicode_New(len, 127);
            if (!v) goto fail;
            unsigned char *w = PyUnicode_DATA(v);
            memcpy(w, d, i);
            for (; i < len; i++) w[i] = (d[i] >= 'A' && d[i] <= 'Z') ? (unsigned char)(d[i] + 32) : d[i];
        }
        PyList_SET_ITEM(out, j, v);
    }
    return Py_BuildValue("NN", out, rest);
fail:
    Py_XDECREF(out); Py_XDECREF(rest);
    return NULL;
}


/* -- css.match_rows ---------------------------------------------------------------------- */
/* match_rows(simple, parents, codes, uniq, classes, ids): css.match_rows over a compiled visit
 * (parents, codes: int64, one per row; uniq: the distinct tags, codes index it), the same rows
 * in order; None when ``simple`` is not made as css.parse_simple makes it (the Python code
 * decides). Every row but body is tried against each selector's last compound (the Python
 * code narrows the candidates by id, class or tag first: the same matches), then its
 * ancestors as in ``left_ok``. Class tokens are ``str.split`` of the attribute, looked up in
 * a dict of the classes the selectors name; a row's classes are a bit set of those. */
typedef struct { Py_ssize_t tag, id, c0, nc; } Comp;  /* tag: -1 any, -2 not on the page */
typedef struct { Py_ssize_t c0, n, comb0; int html_left; } Sel;

typedef struct {
    const int64_t *parent, *code;
    const uint64_t *mask;  /* W words per row */
    const Py_ssize_t *row_id, *cls;
    const Comp *comp;
    const char *comb;  /* '>' or ' ' */
    Py_ssize_t W;
} Match;

static int comp_ok(const Match *m, Py_ssize_t r, const Comp *c) {
    if (c->tag != -1 && m->code[r] != c->tag) return 0;
    if (c->id != -1 && m->row_id[r] != c->id) return 0;
    for (Py_ssize_t a = 0; a < c->nc; a++) {
        Py_ssize_t k = m->cls[c->c0 + a];
        if (!(m->mask[r * m->W + k / 64] >> (k % 64) & 1)) return 0;
    }
    return 1;
}

static int left_ok(const Match *m, Py_ssize_t r, const Sel *s, Py_ssize_t k) {
    if (k == 0) return 1;
    int64_t p = m->parent[r];
    int is_html = k == 1 && s->html_left;
    const Comp *c = &m->comp[s->c0 + k - 1];
    if (m->comb[s->comb0 + k - 1] == '>') {
        if (p < 0) return is_html;
        return comp_ok(m, p, c) && left_ok(m, p, s, k - 1);
    }
    while (p >= 0) {
        if (comp_ok(m, p, c) && left_ok(m, p, s, k - 1)) return 1;
        p = m->parent[p];
    }
    return is_html;
}

/* index of key in d, adding it when absent; -1 on error */
static Py_ssize_t index_of(PyObject *d, PyObject *key) {
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v) return PyLong_AsSsize_t(v);
    if (PyErr_Occurred()) return -1;
    Py_ssize_t k = PyDict_GET_SIZE(d);
    PyObject *o = PyLong_FromSsize_t(k);
    if (!o || PyDict_SetItem(d, key, o) < 0) { Py_XDECREF(o); return -1; }
    Py_DECREF(o);
    return k;
}

static PyObject *match_rows(PyObject *self, PyObject *args) {
    PyObject *simple, *par_obj, *code_obj, *uniq, *classes, *ids;
    if (!PyArg_ParseTuple(args, "O!OOO!O!O!", &PyList_Type, &simple, &par_obj, &code_obj, &PyList_Type, &uniq,
                          &PyList_Type, &classes, &PyList_Type, &ids)) return NULL;
    Py_buffer vp, vc;
    if (PyObject_GetBuffer(par_obj, &vp, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(code_obj, &vc, PyBUF_C_CONTIGUOUS) < 0) { PyBuffer_Release(&vp); return NULL; }
    PyObject *res = NULL, *tag_ix = PyDict_New(), *cls_ix = PyDict_New(), *id_ix = PyDict_New();
    Comp *comp = NULL; Sel *sel = NULL; char *comb = NULL;
    Ints cls = {0};
    uint64_t *mask = NULL; Py_ssize_t *row_id = NULL; char *hit = NULL;
    Py_ssize_t n = vp.len / 8, ns = PyList_GET_SIZE(simple), ncomp = 0, ncomb = 0;
    int bail = 0;
    if (!tag_ix || !cls_ix || !id_ix) goto done;
    if (vp.itemsize != 8 || vc.itemsize != 8 || vc.len != vp.len || PyList_GET_SIZE(classes) != n
            || PyList_GET_SIZE(ids) != n) {
        PyErr_SetString(PyExc_TypeError, "match_rows: int64 parents and codes, a class and an id per row");
        goto done;
    }
    const int64_t *parent = vp.buf, *code = vc.buf;
    if (!ns || n <= 1) { res = PyList_New(0); goto done; }
    /* the tags and ids hashed below are exact strs: a subclass's __hash__ (Python code) could change
     * the lists read here (the Python code decides) */
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(uniq); k++) {
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(uniq, k))) { bail = 1; goto done; }
        PyObject *o = PyLong_FromSsize_t(k);
        if (!o || PyDict_SetItem(tag_ix, PyList_GET_ITEM(uniq, k), o) < 0) { Py_XDECREF(o); goto done; }
        Py_DECREF(o);
    }
    for (Py_ssize_t i = 0; i < n; i++)  /* row 0's parent too: left_ok climbs to it */
        if (i ? parent[i] < 0 || parent[i] >= i : parent[0] >= 0) { bail = 1; goto done; }
    /* the selectors, each as css.parse_simple makes it: ((tag|None, frozenset, id|None), ...), (comb, ...) */
    for (Py_ssize_t j = 0; j < ns; j++) {
        PyObject *s = PyList_GET_ITEM(simple, j);
        if (!PyTuple_Check(s) || PyTuple_GET_SIZE(s) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(s, 0))
            || !PyTuple_Check(PyTuple_GET_ITEM(s, 1))) { bail = 1; goto done; }
        Py_ssize_t k = PyTuple_GET_SIZE(PyTuple_GET_ITEM(s, 0));
        if (!k || PyTuple_GET_SIZE(PyTuple_GET_ITEM(s, 1)) != k - 1) { bail = 1; goto done; }
        ncomp += k; ncomb += k - 1;
    }
    comp = PyMem_Malloc(ncomp * sizeof(Comp));
    sel = PyMem_Malloc(ns * sizeof(Sel));
    comb = PyMem_Malloc(ncomb + 1);
    if (!comp || !sel || !comb) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t j = 0, c0 = 0, b0 = 0; j < ns; j++) {
        PyObject *s = PyList_GET_ITEM(simple, j), *comps = PyTuple_GET_ITEM(s, 0), *combs = PyTuple_GET_ITEM(s, 1);
        Py_ssize_t k = PyTuple_GET_SIZE(comps);
        sel[j].c0 = c0; sel[j].n = k; sel[j].comb0 = b0; sel[j].html_left = 0;
        for (Py_ssize_t a = 0; a < k; a++, c0++) {
            PyObject *cp = PyTuple_GET_ITEM(comps, a);
            if (!PyTuple_Check(cp) || PyTuple_GET_SIZE(cp) != 3) { bail = 1; goto done; }
            PyObject *tag = PyTuple_GET_ITEM(cp, 0), *cl = PyTuple_GET_ITEM(cp, 1), *id = PyTuple_GET_ITEM(cp, 2);
            if ((tag != Py_None && !PyUnicode_CheckExact(tag)) || !PyFrozenSet_CheckExact(cl)
                || (id != Py_None && !PyUnicode_CheckExact(id))) { bail = 1; goto done; }
            Comp *c = &comp[c0];
            c->tag = -1;
            if (tag != Py_None) {
                PyObject *v = PyDict_GetItemWithError(tag_ix, tag);
                if (!v && PyErr_Occurred()) goto done;
                c->tag = v ? PyLong_AsSsize_t(v) : -2;
            }
            c->id = id == Py_None ? -1 : index_of(id_ix, id);
            if (id != Py_None && c->id < 0) goto done;
            c->c0 = cls.n; c->nc = 0;
            Py_ssize_t pos = 0; PyObject *name; Py_hash_t h;
            while (_PySet_NextEntry(cl, &pos, &name, &h)) {
                if (!PyUnicode_CheckExact(name)) { bail = 1; goto done; }
                Py_ssize_t ix = index_of(cls_ix, name);
                if (ix < 0 || ints_push(&cls, ix) < 0) goto done;
                c->nc++;
            }
            if (a == 0 && tag != Py_None && id == Py_None && c->nc == 0
                && PyUnicode_CompareWithASCIIString(tag, "html") == 0) sel[j].html_left = 1;
        }
        for (Py_ssize_t a = 0; a < k - 1; a++, b0++) {
            PyObject *cb = PyTuple_GET_ITEM(combs, a);
            if (!PyUnicode_Check(cb)) { bail = 1; goto done; }
            if (PyUnicode_CompareWithASCIIString(cb, ">") == 0) comb[b0] = '>';
            else if (PyUnicode_CompareWithASCIIString(cb, " ") == 0) comb[b0] = ' ';
            else { bail = 1; goto done; }
        }
    }
    /* each row's classes (as a bit set of the selectors' classes) and id (as an index) */
    Py_ssize_t K = PyDict_GET_SIZE(cls_ix), W = K ? (K + 63) / 64 : 1;
    mask = PyMem_Calloc((size_t)n * W, sizeof(uint64_t));
    row_id = PyMem_Malloc(n * sizeof(Py_ssize_t));
    hit = PyMem_Calloc(n, 1);
    if (!mask || !row_id || !hit) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *v = PyList_GET_ITEM(classes, r);
        if (K && v != Py_None) {
            if (!PyUnicode_Check(v)) { bail = 1; goto done; }
            if (PyUnicode_GET_LENGTH(v)) {
                PyObject *toks = PyUnicode_Split(v, NULL, -1);
                if (!toks) goto done;
                for (Py_ssize_t a = 0; a < PyList_GET_SIZE(toks); a++) {
                    PyObject *ix = PyDict_GetItemWithError(cls_ix, PyList_GET_ITEM(toks, a));
                    if (!ix) { if (PyErr_Occurred()) { Py_DECREF(toks); goto done; } continue; }
                    Py_ssize_t b = PyLong_AsSsize_t(ix);
                    mask[r * W + b / 64] |= (uint64_t)1 << (b % 64);
                }
                Py_DECREF(toks);
            }
        }
        row_id[r] = -1;
        v = PyList_GET_ITEM(ids, r);
        if (v != Py_None && PyDict_GET_SIZE(id_ix)) {
            if (!PyUnicode_CheckExact(v)) { bail = 1; goto done; }
            PyObject *ix = PyDict_GetItemWithError(id_ix, v);
            if (!ix && PyErr_Occurred()) goto done;
            if (ix) row_id[r] = PyLong_AsSsize_t(ix);
        }
    }
    Match m = {parent, code, mask, row_id, cls.p, comp, comb, W};
    for (Py_ssize_t j = 0; j < ns; j++) {
        const Comp *last = &comp[sel[j].c0 + sel[j].n - 1];
        if (last->tag == -2) continue;  /* its tag is not on the page */
        for (Py_ssize_t r = 1; r < n; r++)
            if (!hit[r] && comp_ok(&m, r, last) && left_ok(&m, r, &sel[j], sel[j].n - 1)) hit[r] = 1;
    }
    res = PyList_New(0);
    for (Py_ssize_t r = 1; res && r < n; r++) {
        if (!hit[r]) continue;
        PyObject *o = PyLong_FromSsize_t(r);
        if (!o || PyList_Append(res, o) < 0) { Py_XDECREF(o); Py_CLEAR(res); break; }
        Py_DECREF(o);
    }
done:
    if (bail && !res) { PyErr_Clear(); res = Py_None; Py_INCREF(res); }
    Py_XDECREF(tag_ix); Py_XDECREF(cls_ix); Py_XDECREF(id_ix);
    PyMem_Free(comp); PyMem_Free(sel); PyMem_Free(comb); PyMem_Free(cls.p);
    PyMem_Free(mask); PyMem_Free(row_id); PyMem_Free(hit);
    PyBuffer_Release(&vp); PyBuffer_Release(&vc);
    return res;
}

/* -- the attribute cap's scan (features.limits) ----------------------------------------- */
/* Py_UNICODE_ISSPACE is what the regex module's \s and str.isspace use. The scan also reads
 * valid UTF-8 bytes (walk: a page parsed from its own bytes, not decoded), as "kind" UTF8_KIND:
 * a position is a byte offset, and every byte of a character reads as that character, so that
 * each loop of the scan steps over a character's bytes as it steps over the character and stops
 * only at the start of one (tests/test_walk_compiled.py: the bytes give the text's answer). */
#define UTF8_KIND 8

/* The character whose UTF-8 bytes hold s[i] (valid UTF-8; read within [0, len) whatever). */
static inline Py_UCS4 utf8_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t i) {
    Py_UCS4 c = s[i];
    if (c < 0x80) return c;
    while (i > 0 && (s[i] & 0xC0) == 0x80) i--;
    c = s[i];
    Py_ssize_t m = c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
    if (i + m >= len) return 0xFFFD;
    c &= 0x3F >> m;
    for (Py_ssize_t k = 1; k <= m; k++) c = (c << 6) | (s[i + k] & 0x3F);
    return c;
}

#define CH(i) ((kind) == UTF8_KIND ? utf8_at((const unsigned char *)data, len, (i)) \
                                   : PyUnicode_READ((kind) == UTF8_KIND ? 1 : (kind), data, (i)))

/* One ATTR of features.limits at i ((?>\s+[^\s=/>"'<]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)):
 * its end, or -1 when none starts there. */
#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

/* What a character ends in the scan, for the first 256 code points (filled at import from
 * Py_UNICODE_ISSPACE); above them only whitespace ends anything. */
enum { C_SPACE = 1, C_NAME_END = 2, C_VALUE_END = 4, C_TAG_END = 8 };
static unsigned char char_class[256];

static void fill_char_class(void) {
    for (int c = 0; c < 256; c++) {
        int sp = Py_UNICODE_ISSPACE((Py_UCS4)c) ? 1 : 0;
        char_class[c] = (unsigned char)((sp ? C_SPACE : 0)
            | (sp || c == '=' || c == '/' || c == '>' || c == '"' || c == '\'' || c == '<' ? C_NAME_END : 0)
            | (sp || c == '>' || c == '"' || c == '\'' ? C_VALUE_END : 0)
            | (sp || c == '/' || c == '>' ? C_TAG_END : 0));
    }
}

INLINE int char_is(Py_UCS4 c, int what) {
    if (c < 256) return char_class[c] & what;
    return Py_UNICODE_ISSPACE(c) ? what : 0;  /* every class holds whitespace */
}

INLINE Py_ssize_t attr_at(int kind, const void *data, Py_ssize_t len, Py_ssize_t i) {
    Py_ssize_t j = i;
    while (j < len && char_is(CH(j), C_SPACE)) j++;
    if (j == i) return -1;
    Py_ssize_t k = j;
    while (k < len && !char_is(CH(k), C_NAME_END)) k++;
    if (k == j) return -1;
    /* the optional value */
    Py_ssize_t v = k;
    while (v < len && char_is(CH(v), C_SPACE)) v++;
    if (v >= len || CH(v) != '=') return k;
    v++;
    while (v < len && char_is(CH(v), C_SPACE)) v++;
    if (v >= len) return k;
    Py_UCS4 q = CH(v);
    if (q == '"' || q == '\'') {
        if (kind == PyUnicode_1BYTE_KIND || kind == UTF8_KIND) {  /* the same search, by memchr */
            const char *e = v + 1 < len ? memchr((const char *)data + v + 1, (int)q, len - v - 1) : NULL;
            return e ? e - (const char *)data + 1 : k;
        }
        for (Py_ssize_t e = v + 1; e < len; e++)
            if (CH(e) == q) return e + 1;
        return k;  /* unterminated: no value */
    }
    if (q == '>') return k;
    Py_ssize_t e = v;
    while (e < len && !char_is(CH(e), C_VALUE_END)) e++;
    return e > v ? e : k;
}

static inline int ascii_letter(Py_UCS4 c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

/* over_attributes(text, n): whether some tag of text has more than n attributes, as the
 * ``skip`` pattern of features.limits finds them (it stops before the end of the text exactly
 * then): tags are read from each "<" and a letter, past the attributes they have. */
/* The index of the first "<" at or after i (len when none): memchr on 1-byte text, four
 * characters a step on 2-byte text (a zero 16-bit lane of x ^ "<<<<" marks one). */
INLINE Py_ssize_t next_lt(int kind, const void *data, Py_ssize_t len, Py_ssize_t i) {
    if (kind == PyUnicode_1BYTE_KIND || kind == UTF8_KIND) {
        const char *lt = memchr((const char *)data + i, '<', len - i);
        return lt ? lt - (const char *)data : len;
    }
    if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *d = data;
        for (; i + 4 <= len; i += 4) {
            uint64_t x;
            memcpy(&x, d + i, 8);
            x ^= 0x003C003C003C003CULL;
            if ((x - 0x0001000100010001ULL) & ~x & 0x8000800080008000ULL) break;
        }
        for (; i < len && d[i] != '<'; i++) {}
        return i;
    }
    const Py_UCS4 *d = data;
    for (; i < len && d[i] != '<'; i++) {}
    return i;
}

/* The scan, inlined once per string kind (a constant there, so that each character is read
 * without a switch on the kind). */
INLINE int over_scan(int kind, const void *data, Py_ssize_t len, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < len) {
        if (CH(i) != '<') {  /* the same steps: jump to the next "<" */
            i = next_lt(kind, data, len, i);
            if (i >= len) break;
        }
        if (CH(i) != '<' || i + 1 >= len || !ascii_letter(CH(i + 1))) { i++; continue; }
        Py_ssize_t j = i + 2;
        while (j < len && !char_is(CH(j), C_TAG_END)) j++;
        Py_ssize_t count = 0;
        for (;;) {
            Py_ssize_t e = attr_at(kind, data, len, j);
            if (e < 0) break;
            if (++count > n) return 1;
            j = e;
        }
        i = j;
    }
    return 0;
}

static PyObject *over_attributes(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "On", &text, &n)) return NULL;
    if (PyBytes_Check(text)) {  /* valid UTF-8 (the caller checked: plain_utf8) */
        int over = over_scan(UTF8_KIND, PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text), n);
        return PyBool_FromLong(over);
    }
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "over_attributes: text must be str or bytes");
        return NULL;
    }
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int over;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND: over = over_scan(PyUnicode_1BYTE_KIND, data, len, n); break;
    case PyUnicode_2BYTE_KIND: over = over_scan(PyUnicode_2BYTE_KIND, data, len, n); break;
    default: over = over_scan(PyUnicode_4BYTE_KIND, data, len, n); break;
    }
    return PyBool_FromLong(over);
}

#undef CH
#define CH(i) PyUnicode_READ(kind, data, (i))

/* plain_utf8(data): whether data.decode("utf-8") succeeds (Unicode's table 3-7: no overlong
 * form, no surrogate, nothing above U+10FFFF) and the text has no NUL and no U+FFFD; eight
 * ASCII bytes a step, without making the str (hwnoise.decode.own_utf8's check). */
static PyObject *plain_utf8(PyObject *self, PyObject *obj) {
    if (!PyBytes_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "plain_utf8: data must be bytes");
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(obj);
    Py_ssize_t len = PyBytes_GET_SIZE(obj), i = 0;
    while (i < len) {
        if (i + 8 <= len) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            /* no byte with its high bit set, and no zero byte */
            if (!((x | ((x - 0x0101010101010101ULL) & ~x)) & 0x8080808080808080ULL)) { i += 8; continue; }
        }
        unsigned c = s[i];
        if (c < 0x80) {
            if (!c) Py_RETURN_FALSE;
            i++;
            continue;
        }
        Py_ssize_t m;
        unsigned lo = 0x80, hi = 0xBF;  /* the second byte's range */
        if (c >= 0xC2 && c <= 0xDF) m = 1;
        else if (c >= 0xE0 && c <= 0xEF) { m = 2; if (c == 0xE0) lo = 0xA0; else if (c == 0xED) hi = 0x9F; }
        else if (c >= 0xF0 && c <= 0xF4) { m = 3; if (c == 0xF0) lo = 0x90; else if (c == 0xF4) hi = 0x8F; }
        else Py_RETURN_FALSE;
        if (i + m >= len) Py_RETURN_FALSE;
        if (s[i + 1] < lo || s[i + 1] > hi) Py_RETURN_FALSE;
        for (Py_ssize_t k = 2; k <= m; k++)
            if ((s[i + k] & 0xC0) != 0x80) Py_RETURN_FALSE;
        if (c == 0xEF && s[i + 1] == 0xBF && s[i + 2] == 0xBD) Py_RETURN_FALSE;  /* U+FFFD */
        i += m + 1;
    }
    Py_RETURN_TRUE;
}

/* -- walk._match_counts' pre-filter --------------------------------------------------- */
/* The keys, each as UCS4, grouped by first character: for a first character below 256 the
 * keys key_at[lo[c]..lo[c+1]) start with c; the keys with a wider first character follow
 * (from wide_lo), looked through one by one. */
typedef struct {
    Py_ssize_t n, wide_lo, min_len;
    Py_UCS4 **key;         /* key[k]: its characters */
    Py_ssize_t *len;       /* len[k] */
    Py_ssize_t lo[257];
    int empty;             /* an empty key: every text holds it */
    int wide;              /* a key whose first character is 256 or above */
    unsigned char first[256];    /* c starts a key of two or more characters */
    unsigned char one[256];      /* the key c alone */
    unsigned char pair[256][32]; /* bit d of pair[c]: a key starts with c, d (both below 256) */
    unsigned char tri[1 << 13];  /* when every key has three characters or more: bit h of the
                                  * 65,536 set when a key's first three hash to h (tri_hash) */
} Keys;

INLINE unsigned tri_hash(Py_UCS4 a, Py_UCS4 b, Py_UCS4 c) {
    return ((a * 0x9E3779B1u) ^ (b * 0x85EBCA77u) ^ (c * 0xC2B2AE3Du)) >> 16;
}

/* Whether one of the keys K->key[a..b) (those starting with c) starts at position i of the text. */
INLINE int key_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, const Keys *K,
                  Py_ssize_t a, Py_ssize_t b, Py_UCS4 c) {
    for (Py_ssize_t k = a; k < b; k++) {
        const Py_UCS4 *key = K->key[k];
        Py_ssize_t m = K->len[k], j;
        if (key[0] != c || i + m > n) continue;
        for (j = 1; j < m && CH(i + j) == key[j]; j++) {}
        if (j == m) return 1;
    }
    return 0;
}

/* holds_key when every key has three characters or more: a position is looked at only when
 * the hash of its three characters is a key's (rare in text: few mispredicted branches). */
INLINE int holds_key3(int kind, const void *data, Py_ssize_t n, const Keys *K) {
    if (n < 3) return 0;
    Py_UCS4 x = CH(0), y = CH(1);
    for (Py_ssize_t i = 0; i + K->min_len <= n; i++) {
        Py_UCS4 z = CH(i + 2);
        unsigned h = tri_hash(x, y, z);
        if (K->tri[h >> 3] & (1u << (h & 7))) {
            if (x < 256 ? key_at(kind, data, n, i, K, K->lo[x], K->lo[x + 1], x)
                        : key_at(kind, data, n, i, K, K->wide_lo, K->n, x)) return 1;
        }
        x = y; y = z;
    }
    return 0;
}

/* Whether the text (kind constant where inlined) holds one of the keys. Most characters are
 * passed over by the first-character and first-pair tables; the keys are compared only where
 * both agree (or a character is 256 or above). */
INLINE int holds_key(int kind, const void *data, Py_ssize_t n, const Keys *K) {
    if (K->empty) return 1;
    for (Py_ssize_t i = 0; i + K->min_len <= n; i++) {
        Py_UCS4 c = CH(i);
        Py_ssize_t a, b;
        if (c < 256) {
            if (K->one[c]) return 1;
            if (!K->first[c] || i + 1 >= n) continue;
            Py_UCS4 d = CH(i + 1);
            if (d < 256 && !(K->pair[c][d >> 3] & (1u << (d & 7)))) continue;
            a = K->lo[c]; b = K->lo[c + 1];
        } else {
            if (!K->wide) continue;
            a = K->wide_lo; b = K->n;
        }
        if (key_at(kind, data, n, i, K, a, b, c)) return 1;
    }
    return 0;
}

/* find_segments(texts, keys): the indices (ascending) of the texts that hold one of the keys
 * as a substring: walk._match_counts' pre-filter (its reference, ``_find_segments``, runs
 * str.find over the texts joined by NUL; a key holds no NUL). None when an item is not a str. */
static PyObject *find_segments(PyObject *self, PyObject *args) {
    PyObject *texts, *keys;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &texts, &PyTuple_Type, &keys)) return NULL;
    Py_ssize_t nk = PyTuple_GET_SIZE(keys), nt = PyList_GET_SIZE(texts);
    Keys K;
    memset(&K, 0, sizeof K);
    PyObject *res = NULL;
    Py_UCS4 **raw = PyMem_Calloc(nk ? nk : 1, sizeof(Py_UCS4 *));
    K.key = PyMem_Calloc(nk ? nk : 1, sizeof(Py_UCS4 *));
    K.len = PyMem_Calloc(nk ? nk : 1, sizeof(Py_ssize_t));
    Py_ssize_t *rawlen = PyMem_Calloc(nk ? nk : 1, sizeof(Py_ssize_t));
    if (!raw || !K.key || !K.len || !rawlen) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *key = PyTuple_GET_ITEM(keys, k);
        if (!PyUnicode_Check(key)) { res = Py_None; Py_INCREF(res); goto done; }
        rawlen[k] = PyUnicode_GET_LENGTH(key);
        if (rawlen[k] == 0) K.empty = 1;
        raw[k] = PyUnicode_AsUCS4Copy(key);
        if (!raw[k]) goto done;
    }
    /* group by first character: counting sort over 0..255, the wide ones last */
    Py_ssize_t count[257] = {0};
    K.min_len = PY_SSIZE_T_MAX;
    for (Py_ssize_t k = 0; k < nk; k++) {
        if (rawlen[k] == 0) continue;
        Py_UCS4 c = raw[k][0];
        count[c < 256 ? c : 256]++;
        if (rawlen[k] < K.min_len) K.min_len = rawlen[k];
    }
    if (K.min_len == PY_SSIZE_T_MAX) K.min_len = 1;
    Py_ssize_t at = 0;
    for (int c = 0; c < 257; c++) { K.lo[c] = at; at += count[c]; }
    K.wide_lo = K.lo[256];
    K.n = at;
    Py_ssize_t fill[257];
    memcpy(fill, K.lo, sizeof fill);
    for (Py_ssize_t k = 0; k < nk; k++) {
        if (rawlen[k] == 0) continue;
        Py_UCS4 c = raw[k][0];
        Py_ssize_t slot = fill[c < 256 ? c : 256]++;
        K.key[slot] = raw[k];
        K.len[slot] = rawlen[k];
        if (c >= 256) K.wide = 1;
        else if (rawlen[k] == 1) K.one[c] = 1;
        else {
            K.first[c] = 1;
            Py_UCS4 d = raw[k][1];
            if (d < 256) K.pair[c][d >> 3] |= (unsigned char)(1u << (d & 7));
        }
        if (rawlen[k] >= 3) {
            unsigned h = tri_hash(raw[k][0], raw[k][1], raw[k][2]);
            K.tri[h >> 3] |= (unsigned char)(1u << (h & 7));
        }
    }
    int three = !K.empty && K.min_len >= 3;
    res = PyList_New(0);
    if (!res) goto done;
    for (Py_ssize_t t = 0; t < nt; t++) {
        PyObject *text = PyList_GET_ITEM(texts, t);
        if (!PyUnicode_Check(text)) { Py_DECREF(res); res = Py_None; Py_INCREF(res); goto done; }
        const void *data = PyUnicode_DATA(text);
        Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        int hit;
        switch (PyUnicode_KIND(text) | (three << 4)) {
        case PyUnicode_1BYTE_KIND: hit = holds_key(PyUnicode_1BYTE_KIND, data, n, &K); break;
        case PyUnicode_2BYTE_KIND: hit = holds_key(PyUnicode_2BYTE_KIND, data, n, &K); break;
        case PyUnicode_4BYTE_KIND: hit = holds_key(PyUnicode_4BYTE_KIND, data, n, &K); break;
        case PyUnicode_1BYTE_KIND | 16: hit = holds_key3(PyUnicode_1BYTE_KIND, data, n, &K); break;
        case PyUnicode_2BYTE_KIND | 16: hit = holds_key3(PyUnicode_2BYTE_KIND, data, n, &K); break;
        default: hit = holds_key3(PyUnicode_4BYTE_KIND, data, n, &K); break;
        }
        if (hit) {
            PyObject *j = PyLong_FromSsize_t(t);
            if (!j || PyList_Append(res, j) < 0) { Py_XDECREF(j); Py_CLEAR(res); goto done; }
            Py_DECREF(j);
        }
    }
done:
    if (raw) for (Py_ssize_t k = 0; k < nk; k++) PyMem_Free(raw[k]);
    PyMem_Free(raw); PyMem_Free(K.key); PyMem_Free(K.len); PyMem_Free(rawlen);
    return res;
}
#undef CH

/* -- walk.stable_hashes ------------------------------------------------------------------ */
/* After a failed UTF-8 encoding: False (a new reference) when it failed for a lone surrogate,
 * which the caller's numpy code handles; NULL with the error set otherwise. */
static PyObject *not_utf8(void) {
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return NULL;
    PyErr_Clear();
    Py_INCREF(Py_False);
    return Py_False;
}

/* Whether a buffer got with PyBUF_FORMAT holds numbers (no format: bytes): an output of the
 * right item size may still hold object references (a numpy object array), which writing
 * numbers over would corrupt. */
static int numbers(const Py_buffer *v) {
    const char *f = v->format;
    if (!f) return 1;
    if (*f && strchr("@=<>!", *f)) f++;
    return *f && f[1] == 0 && strchr("bBhHiIlLqQnNefd?", *f) != NULL;
}

/* walk.stable_hashes' hash of one string's UTF-8 bytes */
static inline uint64_t stable_hash(const unsigned char *b, Py_ssize_t len) {
    /* h = sum over k of (b[k] + 1) * P**(k + 1), mod 2**64: four bytes a step, each with its
     * own power (integer sums and products mod 2**64 in any order are the same number), so
     * that the multiplications of a step do not wait on each other */
    const uint64_t P = 0xC2B2AE3D27D4EB4FULL, P2 = P * P, P3 = P2 * P, P4 = P3 * P;
    uint64_t h = 0, pw = 1;
    Py_ssize_t k = 0;
    for (; k + 4 <= len; k += 4) {
        h += ((uint64_t)b[k] + 1) * (pw * P) + ((uint64_t)b[k + 1] + 1) * (pw * P2)
             + ((uint64_t)b[k + 2] + 1) * (pw * P3) + ((uint64_t)b[k + 3] + 1) * (pw * P4);
        pw *= P4;
    }
    for (; k < len; k++) {
        pw *= P;
        h += ((uint64_t)b[k] + 1) * pw;
    }
    return mix64(mix64((uint64_t)len + 1) ^ mix64(h));
}

/* site_keys(paths, texts, out): out[i] = PageWalk.site_keys' key of (paths[i], texts[i]),
 * mix64(hash(text) ^ mix64(hash(path) ^ 0x9E3779B97F4A7C15)); False when a string has no
 * UTF-8 form (the caller's numpy code decides). */
static PyObject *site_keys(PyObject *self, PyObject *args) {
    PyObject *paths, *texts, *out_obj;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyList_Type, &paths, &PyList_Type, &texts, &out_obj)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(out_obj, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(paths);
    PyObject *res = NULL;
    if (view.itemsize != 8 || !numbers(&view) || view.len / 8 != n || PyList_GET_SIZE(texts) != n) {
        PyErr_SetString(PyExc_TypeError, "site_keys: as many paths, texts and uint64 outputs");
        goto done;
    }
    uint64_t *out = view.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = PyList_GET_ITEM(paths, i), *t = PyList_GET_ITEM(texts, i);
        if (!PyUnicode_Check(p) || !PyUnicode_Check(t)) { PyErr_SetString(PyExc_TypeError, "strings only"); goto done; }
        Py_ssize_t lp, lt;
        const unsigned char *bp = (const unsigned char *)PyUnicode_AsUTF8AndSize(p, &lp);
        const unsigned char *bt = bp ? (const unsigned char *)PyUnicode_AsUTF8AndSize(t, &lt) : NULL;
        if (!bt) { res = not_utf8(); goto done; }
        out[i] = mix64(stable_hash(bt, lt) ^ mix64(stable_hash(bp, lp) ^ 0x9E3779B97F4A7C15ULL));
    }
    res = Py_True;
    Py_INCREF(res);
done:
    PyBuffer_Release(&view);
    return res;
}

/* stable_hashes(strings, out): out[i] = walk.stable_hashes' hash of strings[i] (out: a
 * writable uint64 buffer). False when a string has no UTF-8 form (a lone surrogate: the
 * caller hashes in numpy, with surrogatepass). */
static PyObject *stable_hashes(PyObject *self, PyObject *args) {
    PyObject *strings, *out_obj;
    if (!PyArg_ParseTuple(args, "O!O", &PyList_Type, &strings, &out_obj)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(out_obj, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(strings);
    PyObject *res = NULL;
    if (view.itemsize != 8 || !numbers(&view) || view.len / 8 != n) {
        PyErr_SetString(PyExc_TypeError, "out must be uint64 with one entry per string");
        goto done;
    }
    uint64_t *out = view.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyList_GET_ITEM(strings, i);
        if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_TypeError, "strings only"); goto done; }
        Py_ssize_t len;
        const unsigned char *b = (const unsigned char *)PyUnicode_AsUTF8AndSize(s, &len);
        if (!b) { res = not_utf8(); goto done; }
        out[i] = stable_hash(b, len);
    }
    res = Py_True;
    Py_INCREF(res);
done:
    PyBuffer_Release(&view);
    return res;
}

/* -- measures.tree_measures' sums over the tree --------------------------------------------- */
/* tree_sums(ins, outs_i, outs_f, n_codes): the integer and sibling measures of
 * ``measures.tree_measures`` in one pass, equal to its numpy reference (``subtree_sum``,
 * ``sibling_structure``, ``query_scores``) to the bit. ``ins``: int64, C-contiguous, 8 rows of
 * n: parent, last, own_chars, own_link_chars, is_a, tag codes (0 .. n_codes-1), matches,
 * own_matches. ``outs_i``: int64 5 x n: chars, link_chars, link_tags, nth, children.
 * ``outs_f``: float64 3 x n: sibling_same_tag, query_score, own_query_score. False (outputs
 * unspecified) when the rows are not a tree in document order (parent[0] = -1, 0 <= parent[i]
 * < i, i <= last[i] < n) or a code is out of range: the numpy code then runs.
 * QueryScore adds level by level, in row order within a level, as ``numpy.add.at`` does, so
 * the floating sums are the same. */
static void query_sum(const int64_t *parent, const int64_t *m, double *qs, Py_ssize_t n,
                      Py_ssize_t *cur, double *val) {
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        qs[i] = 0.0;
        if (m[i]) { cur[k] = i; val[k] = (double)m[i]; k++; }
    }
    double dist = 1.0;
    while (k) {
        Py_ssize_t j = 0;
        for (Py_ssize_t a = 0; a < k; a++) qs[cur[a]] += val[a] / dist;
        for (Py_ssize_t a = 0; a < k; a++) {
            int64_t p = parent[cur[a]];
            if (p >= 0) { cur[j] = p; val[j] = val[a]; j++; }
        }
        k = j;
        dist += 1.0;
    }
}

static PyObject *tree_sums(PyObject *self, PyObject *args) {
    PyObject *in_obj, *oi_obj, *of_obj;
    Py_ssize_t n_codes;
    if (!PyArg_ParseTuple(args, "OOOn", &in_obj, &oi_obj, &of_obj, &n_codes)) return NULL;
    Py_buffer vin, vi, vf;
    if (PyObject_GetBuffer(in_obj, &vin, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(oi_obj, &vi, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vin);
        return NULL;
    }
    if (PyObject_GetBuffer(of_obj, &vf, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vin);
        PyBuffer_Release(&vi);
        return NULL;
    }
    PyObject *res = NULL;
    Py_ssize_t *cstart = NULL, *cidx = NULL, *cur = NULL, *count = NULL;
    double *val = NULL;
    const Py_ssize_t n = vin.len / 64;
    if (vin.itemsize != 8 || vi.itemsize != 8 || vf.itemsize != 8 || !numbers(&vi) || !numbers(&vf) || vin.len != 64 * n
        || vi.len != 40 * n || vf.len != 24 * n || n_codes < 0) {
        PyErr_SetString(PyExc_TypeError, "tree_sums: int64 8 x n, int64 5 x n and float64 3 x n");
        goto done;
    }
    const int64_t *parent = vin.buf, *last = parent + n, *own = last + n, *own_link = own + n,
                  *is_a = own_link + n, *code = is_a + n, *match = code + n, *own_match = match + n;
    int64_t *chars = vi.buf, *link_chars = chars + n, *link_tags = link_chars + n,
            *nth = link_tags + n, *children = nth + n;
    double *same_tag = vf.buf, *qs = same_tag + n, *own_qs = qs + n;
    int good = 0;
    if (!n || parent[0] != -1) goto ok;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((i && (parent[i] < 0 || parent[i] >= i)) || last[i] < i || last[i] >= n
            || code[i] < 0 || code[i] >= n_codes) goto ok;
    }
    cstart = PyMem_Calloc(n + 1, sizeof(Py_ssize_t));
    cidx = PyMem_Malloc(n * sizeof(Py_ssize_t));
    cur = PyMem_Malloc(n * sizeof(Py_ssize_t));
    val = PyMem_Malloc(n * sizeof(double));
    count = PyMem_Calloc(n_codes ? n_codes : 1, sizeof(Py_ssize_t));
    if (!cstart || !cidx || !cur || !val || !count) { PyErr_NoMemory(); goto done; }
    /* subtree sums: prefix sums over document order, row i's subtree is i .. last[i] */
    int64_t s0 = 0, s1 = 0, s2 = 0;
    for (Py_ssize_t i = 0; i < n; i++) {  /* prefix sums before row i, kept in the outputs */
        chars[i] = s0; link_chars[i] = s1; link_tags[i] = s2;
        s0 += own[i]; s1 += own_link[i]; s2 += is_a[i];
    }
    for (Py_ssize_t i = 0; i < n; i++) {  /* last[i] >= i: the prefix at last+1 is not yet overwritten */
        Py_ssize_t e = last[i] + 1;
        int64_t a0 = e < n ? chars[e] : s0, a1 = e < n ? link_chars[e] : s1, a2 = e < n ? link_tags[e] : s2;
        chars[i] = a0 - chars[i]; link_chars[i] = a1 - link_chars[i]; link_tags[i] = a2 - link_tags[i];
    }
    /* children of each row, in document order (a counting sort by parent) */
    for (Py_ssize_t i = 1; i < n; i++) cstart[parent[i] + 1]++;
    for (Py_ssize_t i = 0; i < n; i++) { children[i] = cstart[i + 1]; cstart[i + 1] += cstart[i]; }
    for (Py_ssize_t i = 1; i < n; i++) cidx[cstart[parent[i]]++] = i;  /* cstart[p] -> end of p's */
    nth[0] = 1;
    same_tag[0] = 0.0;
    for (Py_ssize_t p = 0, end0 = 0; p < n; p++) {
        Py_ssize_t end = cstart[p], beg = end0;
        end0 = end;
        for (Py_ssize_t a = beg; a < end; a++) nth[cidx[a]] = ++count[code[cidx[a]]];
        int64_t sib = (int64_t)(end - beg) - 1;
        for (Py_ssize_t a = beg; a < end; a++) {
            Py_ssize_t c = cidx[a];
            same_tag[c] = sib > 0 ? (double)(count[code[c]] - 1) / (double)sib : 0.0;
        }
        for (Py_ssize_t a = beg; a < end; a++) count[code[cidx[a]]] = 0;
    }
    query_sum(parent, match, qs, n, cur, val);
    query_sum(parent, own_match, own_qs, n, cur, val);
    good = 1;
ok:
    res = good ? Py_True : Py_False;
    Py_INCREF(res);
done:
    PyMem_Free(cstart); PyMem_Free(cidx); PyMem_Free(cur); PyMem_Free(val); PyMem_Free(count);
    PyBuffer_Release(&vin); PyBuffer_Release(&vi); PyBuffer_Release(&vf);
    return res;
}


/* -- measures.tree_measures' columns after the sums ------------------------------------ */
/* tree_tail(ins, outs, masks): the arithmetic of ``measures.tree_measures`` around CTD's logs,
 * in the numpy code's order of operations (so the same doubles: each is one IEEE operation,
 * built with -ffp-contract=off). ``ins`` int64 6 x n: chars, tags, link_chars, link_tags,
 * parent, chars_prior. ``outs`` float64 7 x n: extra + e, the ratio's log argument, C / T,
 * td, link_density, position, chars_before. ``masks`` bool 2 x n: extra == 0, C == 0. The
 * logs stay in numpy (``measures._ctd_from_parts``). False when n is 0. */
static PyObject *tree_tail(PyObject *self, PyObject *args) {
    PyObject *in_obj, *of_obj, *om_obj;
    if (!PyArg_ParseTuple(args, "OOO", &in_obj, &of_obj, &om_obj)) return NULL;
    Py_buffer vin, vf, vm;
    if (PyObject_GetBuffer(in_obj, &vin, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(of_obj, &vf, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) { PyBuffer_Release(&vin); return NULL; }
    if (PyObject_GetBuffer(om_obj, &vm, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vin); PyBuffer_Release(&vf); return NULL;
    }
    PyObject *res = NULL;
    const Py_ssize_t n = vin.len / 48;
    if (vin.itemsize != 8 || vf.itemsize != 8 || vm.itemsize != 1 || !numbers(&vf) || vin.len != 48 * n || vf.len != 56 * n
            || vm.len != 2 * n) {
        PyErr_SetString(PyExc_TypeError, "tree_tail: int64 6 x n, float64 7 x n and bool 2 x n");
        goto done;
    }
    if (!n) { res = Py_False; Py_INCREF(res); goto done; }
    const int64_t *chars = vin.buf, *tags = chars + n, *lchars = tags + n, *ltags = lchars + n, *prior = ltags + 2 * n;
    double *arg = vf.buf, *ratio1 = arg + n, *cdt = ratio1 + n, *td = cdt + n, *ld = td + n, *pos = ld + n, *before = pos + n;
    char *extra_zero = vm.buf, *c_zero = extra_zero + n;
    const double cb = (double)chars[0], lcb = (double)lchars[0], cb1 = cb != 0.0 ? cb : 1.0;
    const double lcb_cb = lcb / cb1, n1 = (double)(n > 1 ? n : 1);
    const double prior_div = (double)(chars[0] ? chars[0] : 1);
    for (Py_ssize_t i = 0; i < n; i++) {
        double c = (double)chars[i], lc = (double)lchars[i];
        double t1 = tags[i] == 0 ? 1.0 : (double)tags[i];
        double lc1 = lc == 0.0 ? 1.0 : lc;
        double lt1 = ltags[i] == 0 ? 1.0 : (double)ltags[i];
        double nonlink = c - lc;
        double nonlink1 = nonlink == 0.0 ? 1.0 : nonlink;
        double extra = (c / nonlink1) * lc + lcb_cb * c;
        arg[i] = extra + 2.718281828459045;
        extra_zero[i] = extra == 0.0;
        double ratio = (c / lc1) * (t1 / lt1);
        ratio1[i] = ratio > 0.0 ? ratio : 1.0;
        cdt[i] = c / t1;
        c_zero[i] = c == 0.0;
        td[i] = (double)chars[i] / (double)tags[i];
        ld[i] = chars[i] > 0 ? (double)lchars[i] / (double)chars[i] : 0.0;
        pos[i] = (double)i / n1;
        before[i] = (double)prior[i] / prior_div;
    }
    res = Py_True;
    Py_INCREF(res);
done:
    PyBuffer_Release(&vin); PyBuffer_Release(&vf); PyBuffer_Release(&vm);
    return res;
}

/* ctd_tail(parent, ctd, out): density_sum (each row's children's CTD added in row order, as
 * numpy.add.at does) and parent_ctd into out (float64 2 x n); False when the rows are not a
 * tree in document order. */
static PyObject *ctd_tail(PyObject *self, PyObject *args) {
    PyObject *p_obj, *c_obj, *o_obj;
    if (!PyArg_ParseTuple(args, "OOO", &p_obj, &c_obj, &o_obj)) return NULL;
    Py_buffer vp, vc, vo;
    if (PyObject_GetBuffer(p_obj, &vp, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(c_obj, &vc, PyBUF_C_CONTIGUOUS) < 0) { PyBuffer_Release(&vp); return NULL; }
    if (PyObject_GetBuffer(o_obj, &vo, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vp); PyBuffer_Release(&vc); return NULL;
    }
    PyObject *res = NULL;
    const Py_ssize_t n = vp.len / 8;
    if (vp.itemsize != 8 || vc.itemsize != 8 || vo.itemsize != 8 || !numbers(&vo) || vc.len != vp.len || vo.len != 2 * vp.len) {
        PyErr_SetString(PyExc_TypeError, "ctd_tail: int64 parent, float64 ctd and float64 2 x n");
        goto done;
    }
    const int64_t *parent = vp.buf;
    const double *ctd = vc.buf;
    double *dsum = vo.buf, *pctd = dsum + n;
    int good = n > 0 && parent[0] == -1;
    for (Py_ssize_t i = 1; good && i < n; i++) good = parent[i] >= 0 && parent[i] < i;
    if (good) {
        for (Py_ssize_t i = 0; i < n; i++) dsum[i] = 0.0;
        for (Py_ssize_t i = 1; i < n; i++) dsum[parent[i]] += ctd[i];
        pctd[0] = 0.0;
        for (Py_ssize_t i = 1; i < n; i++) pctd[i] = ctd[parent[i]];
    }
    res = good ? Py_True : Py_False;
    Py_INCREF(res);
done:
    PyBuffer_Release(&vp); PyBuffer_Release(&vc); PyBuffer_Release(&vo);
    return res;
}

/* str_column(values): an Arrow string column of a list of str or None, as
 * ``features.build._str_array`` makes it: ``(validity bytes or None, null count, int32
 * offsets bytes, UTF-8 data bytes)``; None when a value is neither str nor None, has no UTF-8
 * form (a lone surrogate) or the data passes 32-bit offsets: the Python code then decides. */
static PyObject *str_column(PyObject *self, PyObject *arg) {
    if (!PyList_Check(arg)) { PyErr_SetString(PyExc_TypeError, "str_column: a list"); return NULL; }
    Py_ssize_t n = PyList_GET_SIZE(arg), total = 0, nulls = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyList_GET_ITEM(arg, i);
        if (v == Py_None) { nulls++; continue; }
        if (!PyUnicode_Check(v)) Py_RETURN_NONE;
        Py_ssize_t len;
        if (PyUnicode_IS_ASCII(v)) len = PyUnicode_GET_LENGTH(v);
        else if (!PyUnicode_AsUTF8AndSize(v, &len)) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return NULL;
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        total += len;
        if (total > INT32_MAX) Py_RETURN_NONE;
    }
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
    PyObject *data = offsets ? PyBytes_FromStringAndSize(NULL, total) : NULL;
    PyObject *valid = NULL;
    if (data && nulls) {
        if ((valid = PyBytes_FromStringAndSize(NULL, (n + 7) / 8)))
            memset(PyBytes_AS_STRING(valid), 0, (n + 7) / 8);
    }
    if (!data || (nulls && !valid)) { Py_XDECREF(offsets); Py_XDECREF(data); return NULL; }
    int32_t *off = (int32_t *)PyBytes_AS_STRING(offsets);
    char *dst = PyBytes_AS_STRING(data);
    unsigned char *bits = valid ? (unsigned char *)PyBytes_AS_STRING(valid) : NULL;
    Py_ssize_t at = 0;
    off[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyList_GET_ITEM(arg, i);
        if (v != Py_None) {
            Py_ssize_t len;
            const char *src = PyUnicode_IS_ASCII(v) ? (const char *)PyUnicode_DATA(v)
                                                     : PyUnicode_AsUTF8AndSize(v, &len);
            if (PyUnicode_IS_ASCII(v)) len = PyUnicode_GET_LENGTH(v);
            memcpy(dst + at, src, len);
            at += len;
            if (bits) bits[i >> 3] |= (unsigned char)(1u << (i & 7));
        }
        off[i + 1] = (int32_t)at;
    }
    if (!valid) { valid = Py_None; Py_INCREF(valid); }
    return Py_BuildValue("NnNN", valid, nulls, offsets, data);
}

/* -- the features stage's string columns as Arrow buffers -------------------------------- */
/* Where the page's xpath, tag path and text columns go straight to Arrow (``walk_page(...,
 * utf8=True)``, the features stage): each column as an Arrow string array's buffers, int32
 * offsets (one more than rows) and UTF-8 data, both bytes, with no str made per row. The
 * functions above that give lists of str stay the reference (tests/test_walk_compiled.py). */

/* offsets (int64, n + 1, from 0) as an int32 offsets buffer; None when past 32-bit offsets */
static PyObject *int32_offsets(const int64_t *o, Py_ssize_t n) {
    if (o[n] > INT32_MAX) Py_RETURN_NONE;
    PyObject *b = PyBytes_FromStringAndSize(NULL, (n + 1) * (Py_ssize_t)sizeof(int32_t));
    if (!b) return NULL;
    int32_t *w = (int32_t *)PyBytes_AS_STRING(b);
    for (Py_ssize_t i = 0; i <= n; i++) w[i] = (int32_t)o[i];
    return b;
}

/* xpaths_utf8(parent, codes, tags, nth, root): xpaths' (xpath, tag path) columns as
 * ``(xpath offsets, xpath data, tag path offsets, tag path data)`` (ASCII data); None where
 * xpaths gives None or a column passes 32-bit offsets. */
static PyObject *xpaths_utf8(PyObject *self, PyObject *args) {
    XpathArgs A;
    int ok = xpath_args(args, &A);
    if (ok < 0) return NULL;
    PyObject *res = NULL, *xo = NULL, *xd = NULL, *to = NULL, *td = NULL, *tags = A.tags, *root = A.root;
    int64_t *xoff = NULL, *toff = NULL;
    Py_ssize_t n = A.rows;
    const int64_t *parent = A.p.buf, *code = A.c.buf, *nth = A.n.buf;
    if (!ok) { res = Py_None; Py_INCREF(res); goto done; }
    xoff = PyMem_Malloc((n + 1) * sizeof(int64_t));
    toff = PyMem_Malloc((n + 1) * sizeof(int64_t));
    if (!xoff || !toff) { PyErr_NoMemory(); goto done; }
    Py_ssize_t lr = PyUnicode_GET_LENGTH(root);
    xoff[0] = toff[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {  /* each row's length: its parent's plus its step */
        int64_t lx = lr, lt = lr;
        if (i) {
            int64_t p = parent[i], lname = PyUnicode_GET_LENGTH(PyList_GET_ITEM(tags, code[i]));
            char num[24];
            lx = (xoff[p + 1] - xoff[p]) + 1 + lname + 2 + decimal(nth[i], num);
            lt = (toff[p + 1] - toff[p]) + 1 + lname;
        }
        xoff[i + 1] = xoff[i] + lx;
        toff[i + 1] = toff[i] + lt;
        if (xoff[i + 1] > INT32_MAX) { res = Py_None; Py_INCREF(res); goto done; }
    }
    xo = int32_offsets(xoff, n);
    to = xo ? int32_offsets(toff, n) : NULL;
    if (!to) goto done;
    if (xo == Py_None || to == Py_None) { res = Py_None; Py_INCREF(res); goto done; }
    xd = PyBytes_FromStringAndSize(NULL, xoff[n]);
    td = xd ? PyBytes_FromStringAndSize(NULL, toff[n]) : NULL;
    if (!td) goto done;
    char *X = PyBytes_AS_STRING(xd), *T = PyBytes_AS_STRING(td);
    for (Py_ssize_t i = 0; i < n; i++) {
        char *wx = X + xoff[i], *wt = T + toff[i];
        if (!i) {
            memcpy(wx, PyUnicode_DATA(root), lr);
            memcpy(wt, PyUnicode_DATA(root), lr);
            continue;
        }
        int64_t p = parent[i];
        PyObject *t = PyList_GET_ITEM(tags, code[i]);
        Py_ssize_t lname = PyUnicode_GET_LENGTH(t);
        memcpy(wx, X + xoff[p], xoff[p + 1] - xoff[p]); wx += xoff[p + 1] - xoff[p];
        *wx++ = '/';
        memcpy(wx, PyUnicode_DATA(t), lname); wx += lname;
        *wx++ = '[';
        wx += decimal(nth[i], wx);
        *wx = ']';
        memcpy(wt, T + toff[p], toff[p + 1] - toff[p]); wt += toff[p + 1] - toff[p];
        *wt++ = '/';
        memcpy(wt, PyUnicode_DATA(t), lname);
    }
    res = PyTuple_Pack(4, xo, xd, to, td);
done:
    Py_XDECREF(xo); Py_XDECREF(xd); Py_XDECREF(to); Py_XDECREF(td);
    PyMem_Free(xoff); PyMem_Free(toff);
    xpath_args_release(&A);
    return res;
}

/* own_text_utf8(owner, texts, n): own_text's column as ``(offsets, data)``: each row's
 * segments' UTF-8 joined by one space, a space only after a row's text that is not empty (as
 * walk._own_text joins); None where own_text gives None, a text has no UTF-8 form (a lone
 * surrogate) or the data passes 32-bit offsets. */
static PyObject *own_text_utf8(PyObject *self, PyObject *args) {
    OwnerArgs A;
    if (owner_args(args, &A) < 0) return NULL;
    int64_t *off = NULL, *at = NULL;  /* each row's offset, and where its next segment goes */
    const char **src = NULL;          /* each segment's UTF-8, and its length */
    Py_ssize_t n = A.n, m = A.m, *len = NULL;
    PyObject *texts = A.texts, *res = NULL, *offsets = NULL, *data = NULL;
    const int64_t *owner = A.owner;
    off = PyMem_Calloc(n + 1, sizeof(int64_t));
    at = PyMem_Malloc((n + 1) * sizeof(int64_t));
    src = PyMem_Malloc((m ? m : 1) * sizeof(char *));
    len = PyMem_Malloc((m ? m : 1) * sizeof(Py_ssize_t));
    if (!off || !at || !src || !len) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *t = PyList_GET_ITEM(texts, j);
        if (owner[j] < 0 || owner[j] >= n || !PyUnicode_Check(t)) { res = Py_None; Py_INCREF(res); goto done; }
        if (PyUnicode_IS_ASCII(t)) { src[j] = (const char *)PyUnicode_DATA(t); len[j] = PyUnicode_GET_LENGTH(t); }
        else if (!(src[j] = PyUnicode_AsUTF8AndSize(t, &len[j]))) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto done;
            PyErr_Clear();
            res = Py_None; Py_INCREF(res);
            goto done;
        }
        int64_t *row = &off[owner[j] + 1];  /* the row's length so far */
        *row += (*row ? 1 : 0) + len[j];
    }
    for (Py_ssize_t i = 0; i < n; i++) { at[i] = off[i]; off[i + 1] += off[i]; }
    if (!(offsets = int32_offsets(off, n))) goto done;
    if (offsets == Py_None) { res = offsets; offsets = NULL; goto done; }
    if (!(data = PyBytes_FromStringAndSize(NULL, off[n]))) goto done;
    char *D = PyBytes_AS_STRING(data);
    for (Py_ssize_t j = 0; j < m; j++) {
        Py_ssize_t o = owner[j];
        if (at[o] > off[o]) D[at[o]++] = ' ';
        memcpy(D + at[o], src[j], len[j]);
        at[o] += len[j];
    }
    res = PyTuple_Pack(2, offsets, data);
done:
    Py_XDECREF(offsets); Py_XDECREF(data);
    PyMem_Free(off); PyMem_Free(at); PyMem_Free((void *)src); PyMem_Free(len);
    PyBuffer_Release(&A.view);
    return res;
}

/* one (offsets, data) column's buffers checked: n + 1 int32 offsets from 0, rising, within data */
static int utf8_column(Py_buffer *o, Py_buffer *d, Py_ssize_t n) {
    if (o->len != (n + 1) * (Py_ssize_t)sizeof(int32_t)) return 0;
    const int32_t *off = o->buf;
    if (off[0] != 0) return 0;
    for (Py_ssize_t i = 0; i < n; i++) if (off[i + 1] < off[i]) return 0;
    return off[n] <= d->len;
}

/* site_keys_utf8(path offsets, path data, text offsets, text data, out): site_keys of the
 * columns of xpaths_utf8 and own_text_utf8 (the same UTF-8 bytes hashed: the same keys). */
static PyObject *site_keys_utf8(PyObject *self, PyObject *args) {
    PyObject *objs[5];
    if (!PyArg_ParseTuple(args, "OOOOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4])) return NULL;
    Py_buffer v[5];
    int got = 0;
    PyObject *res = NULL;
    for (; got < 5; got++)
        if (PyObject_GetBuffer(objs[got], &v[got], got == 4 ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT
                                                             : PyBUF_C_CONTIGUOUS) < 0) goto done;
    Py_ssize_t n = v[4].len / 8;
    if (v[4].itemsize != 8 || !numbers(&v[4]) || !utf8_column(&v[0], &v[1], n) || !utf8_column(&v[2], &v[3], n)) {
        PyErr_SetString(PyExc_ValueError, "site_keys_utf8: two columns of as many rows as uint64 outputs");
        goto done;
    }
    const int32_t *po = v[0].buf, *to = v[2].buf;
    const unsigned char *pd = v[1].buf, *td = v[3].buf;
    uint64_t *out = v[4].buf;
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = mix64(stable_hash(td + to[i], to[i + 1] - to[i])
                       ^ mix64(stable_hash(pd + po[i], po[i + 1] - po[i]) ^ 0x9E3779B97F4A7C15ULL));
    res = Py_True;
    Py_INCREF(res);
done:
    while (got--) PyBuffer_Release(&v[got]);
    return res;
}

/* -- labels.label_page's rule over the page's words ----------------------------------------- */
/* label_rule(owner, mask, last, out): labels.half_rule of the rows' word counts in one pass,
 * the counts made here: owner (int64, the row of each word of the page), mask (bool, one per
 * word: aligned with the gold), last (int64, each row's last descendant), out (bool, one per
 * row; True = content). Equal to ``half_rule(last, bincount(owner, minlength=n),
 * bincount(owner[mask], minlength=n))`` (tests/test_labels.py); False (out unspecified) when an
 * owner or a last is out of range or there is not a last per row: the numpy code then runs.
 * With noise and content (two byte values; 0 and 1 when left out) a row gets one of those
 * instead: ``labels.label_bytes`` asks for "S" and "N", the label column's UTF-8 data. */
static PyObject *label_rule(PyObject *self, PyObject *args) {
    PyObject *objs[4];
    unsigned char noise = 0, content = 1;
    if (!PyArg_ParseTuple(args, "OOOO|bb", &objs[0], &objs[1], &objs[2], &objs[3], &noise, &content))
        return NULL;
    Py_buffer v[4];
    int got = 0;
    PyObject *res = NULL;
    int64_t *cw = NULL, *cm = NULL;
    for (; got < 4; got++)
        if (PyObject_GetBuffer(objs[got], &v[got], got == 3 ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT
                                                             : PyBUF_C_CONTIGUOUS) < 0) goto done;
    Py_ssize_t m = v[0].len / 8, n = v[3].len;
    if (v[0].itemsize != 8 || v[1].itemsize != 1 || v[1].len != m || v[2].itemsize != 8 || v[3].itemsize != 1) {
        PyErr_SetString(PyExc_TypeError, "label_rule: int64 owners, a bool per word, int64 lasts, a bool out per row");
        goto done;
    }
    if (v[2].len / 8 != n) { res = Py_False; Py_INCREF(res); goto done; }  /* not a last per row */
    const int64_t *owner = v[0].buf, *last = v[2].buf;
    const unsigned char *mask = v[1].buf;
    unsigned char *out = v[3].buf;
    cw = PyMem_Calloc(n + 1, sizeof(int64_t));  /* own words of row i at i + 1, then prefix sums */
    cm = PyMem_Calloc(n + 1, sizeof(int64_t));
    if (!cw || !cm) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t j = 0; j < m; j++) {
        int64_t o = owner[j];
        if (o < 0 || o >= n) { res = Py_False; Py_INCREF(res); goto done; }
        cw[o + 1]++;
        cm[o + 1] += mask[j] != 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (last[i] < i || last[i] >= n) { res = Py_False; Py_INCREF(res); goto done; }
        out[i] = cw[i + 1] > 0 ? 2 * cm[i + 1] >= cw[i + 1] : 2;  /* 2: no own words, below */
        cw[i + 1] += cw[i];
        cm[i + 1] += cm[i];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = out[i];
        if (c == 2) {
            int64_t words = cw[last[i] + 1] - cw[i], marked = cm[last[i] + 1] - cm[i];
            c = words > 0 && 2 * marked >= words;
        }
        out[i] = c ? content : noise;
    }
    res = Py_True;
    Py_INCREF(res);
done:
    PyMem_Free(cw); PyMem_Free(cm);
    while (got--) PyBuffer_Release(&v[got]);
    return res;
}

/* -- sitelevel's look-up: how many pages hold each row's key ----------------------------- */
/* key_table(uniq, counts): the distinct site keys (uint64) and the pages holding each (int64,
 * at least 1) as an open-addressing hash table, bytes of (key, count) pairs, a count of 0 an
 * empty slot; None when a count is not positive or a key repeats (the caller looks up in
 * numpy). key_counts(table, keys): int64 bytes of each key's count, None when a key is not in
 * the table. Together ``counts[np.searchsorted(uniq, keys)]`` of features.build (its
 * reference and fallback; tests/test_walk_compiled.py), without a binary search per row. */
static PyObject *key_table(PyObject *self, PyObject *args) {
    Py_buffer bu, bc;
    if (!PyArg_ParseTuple(args, "y*y*", &bu, &bc)) return NULL;
    PyObject *res = NULL;
    Py_ssize_t n = bu.len / 8;
    if (bc.len / 8 != n) { PyErr_SetString(PyExc_ValueError, "key_table: as many counts as keys"); goto done; }
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap <<= 1;
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(cap * 16));
    if (!res) goto done;
    uint64_t *slots = (uint64_t *)PyBytes_AS_STRING(res);
    memset(slots, 0, cap * 16);
    const uint64_t *u = (const uint64_t *)bu.buf;
    const int64_t *c = (const int64_t *)bc.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (c[i] <= 0) goto none;
        size_t at = (size_t)mix64(u[i]) & (cap - 1);
        while (slots[2 * at + 1]) {
            if (slots[2 * at] == u[i]) goto none;
            at = (at + 1) & (cap - 1);
        }
        slots[2 * at] = u[i];
        slots[2 * at + 1] = (uint64_t)c[i];
    }
    goto done;
none:
    Py_DECREF(res);
    res = Py_None;
    Py_INCREF(res);
done:
    PyBuffer_Release(&bu);
    PyBuffer_Release(&bc);
    return res;
}

static PyObject *key_counts(PyObject *self, PyObject *args) {
    Py_buffer bt, bk;
    if (!PyArg_ParseTuple(args, "y*y*", &bt, &bk)) return NULL;
    PyObject *res = NULL;
    size_t cap = (size_t)bt.len / 16;
    if (cap == 0 || (cap & (cap - 1)) || (size_t)bt.len != cap * 16) {
        PyErr_SetString(PyExc_ValueError, "key_counts: not a key_table");
        goto done;
    }
    Py_ssize_t n = bk.len / 8;
    res = PyBytes_FromStringAndSize(NULL, n * 8);
    if (!res) goto done;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(res);
    const uint64_t *slots = (const uint64_t *)bt.buf, *k = (const uint64_t *)bk.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t at = (size_t)mix64(k[i]) & (cap - 1), left = cap;  /* a table key_table did not make may be full */
        for (;;) {
            if (!left-- || !slots[2 * at + 1]) {  /* not in the table */
                Py_DECREF(res);
                res = Py_None;
                Py_INCREF(res);
                goto done;
            }
            if (slots[2 * at] == k[i]) break;
            at = (at + 1) & (cap - 1);
        }
        out[i] = (int64_t)slots[2 * at + 1];
    }
done:
    PyBuffer_Release(&bt);
    PyBuffer_Release(&bk);
    return res;
}

static PyMethodDef methods[] = {
    {"site_keys", site_keys, METH_VARARGS,
     "site_keys(paths, texts, out): PageWalk.site_keys into out; False when a string is not UTF-8-encodable."},
    {"str_column", str_column, METH_O,
     "str_column(values): an Arrow string column's (validity, null count, offsets, data) of a list "
     "of str or None (features.build._str_array); None when the Python code must decide."},
    {"tree_sums", tree_sums, METH_VARARGS,
     "tree_sums(ins, outs_i, outs_f, n_codes): measures.tree_measures' sums and sibling measures; "
     "False when the rows are not a tree in document order."},
    {"stable_hashes", stable_hashes, METH_VARARGS,
     "stable_hashes(strings, out): walk.stable_hashes into out; False when a string is not UTF-8-encodable."},
    {"find_segments", find_segments, METH_VARARGS,
     "find_segments(texts, keys): the indices of the texts holding one of keys as a substring "
     "(walk._match_counts' pre-filter); None when an item is not a str."},
    {"over_attributes", over_attributes, METH_VARARGS,
     "over_attributes(text, n): whether a tag has more than n attributes (features.limits' scan); "
     "text a str, or bytes of valid UTF-8 (read as their text)."},
    {"plain_utf8", plain_utf8, METH_O,
     "plain_utf8(data): whether bytes data decodes as UTF-8 (bytes.decode('utf-8')) to a text without "
     "NUL or U+FFFD (hwnoise.decode.own_utf8's check)."},
    {"paths", paths, METH_VARARGS,
     "paths(parent, steps, root): each row's path, its parent's path plus its step (measures.xpaths); "
     "None when a parent does not come before its row."},
    {"style_sheets", style_sheets, METH_O,
     "style_sheets(root): (text, media or None) of the non-empty <style> elements outside <noscript> "
     "(css._style_sheets_python); "
     "None when the Python code must decide."},
    {"fold_ascii", fold_ascii, METH_O,
     "fold_ascii(texts): (each ASCII text lower-cased, None for the others; their indices) "
     "(walk._fold_ascii); None when an item is not a str."},
    {"match_rows", match_rows, METH_VARARGS,
     "match_rows(simple, parents, codes, uniq, classes, ids): css.match_rows over a compiled visit; "
     "None when the Python code must decide."},
    {"tree_tail", tree_tail, METH_VARARGS,
     "tree_tail(ins, outs, masks): measures.tree_measures' arithmetic around CTD's logs."},
    {"ctd_tail", ctd_tail, METH_VARARGS,
     "ctd_tail(parent, ctd, out): density_sum and parent_ctd; False when not a tree in document order."},
    {"own_text", own_text, METH_VARARGS,
     "own_text(owner, texts, n): each row's own text (walk._own_text); None when an owner is out of range."},
    {"xpaths", xpaths, METH_VARARGS,
     "xpaths(parent, codes, tags, nth, root): measures.xpaths' (xpath, tag path) lists; None when the "
     "Python code must decide."},
    {"visit", visit, METH_VARARGS,
     "visit(body, drop, hidden, hides, attrs, keep): features.walk._visit's lists (without path0; "
     "numbers as int64/bool buffers) and the segments' lengths, or None when the Python walk must decide."},
    {"squash", squash, METH_O, "squash(s): ' '.join(s.split()), as the visit computes it."},
    {"xpaths_utf8", xpaths_utf8, METH_VARARGS,
     "xpaths_utf8(parent, codes, tags, nth, root): xpaths' two columns as Arrow string buffers "
     "(xpath offsets, data, tag path offsets, data); None when the Python code must decide."},
    {"own_text_utf8", own_text_utf8, METH_VARARGS,
     "own_text_utf8(owner, texts, n): own_text's column as Arrow string buffers (offsets, data); "
     "None when the Python code must decide."},
    {"site_keys_utf8", site_keys_utf8, METH_VARARGS,
     "site_keys_utf8(path offsets, path data, text offsets, text data, out): site_keys of two "
     "Arrow string columns into out."},
    {"label_rule", label_rule, METH_VARARGS,
     "label_rule(owner, mask, last, out[, noise, content]): labels.half_rule of the words' owners and aligned "
     "mask into out (noise and content: the bytes written, 0 and 1 by default); False when an owner or a last "
     "is out of range."},
    {"key_table", key_table, METH_VARARGS,
     "key_table(uniq, counts): a hash table (bytes) of uint64 keys to int64 counts; None when a count "
     "is not positive or a key repeats."},
    {"key_counts", key_counts, METH_VARARGS,
     "key_counts(table, keys): int64 bytes of each key's count in a key_table; None when one is absent."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__walk(void) {
    fill_char_class();
    PyObject *etree = PyImport_ImportModule("lxml.etree");
    if (!etree) return NULL;
    element_type = (PyTypeObject *)PyObject_GetAttrString(etree, "_Element");
    PyObject *capi = PyObject_GetAttrString(etree, "__pyx_capi__");
    Py_DECREF(etree);
    if (!element_type || !capi) { Py_XDECREF(capi); return NULL; }
    if (!PyType_Check((PyObject *)element_type)) {
        Py_DECREF(capi);
        PyErr_SetString(PyExc_ImportError, "lxml.etree._Element is not a type");
        return NULL;
    }
    PyObject *cap = PyDict_GetItemString(capi, "elementFactory");
    const char *sig = "struct LxmlElement *(struct LxmlDocument *, xmlNode *)";
    if (!cap || !PyCapsule_IsValid(cap, sig)) {
        Py_DECREF(capi);
        PyErr_SetString(PyExc_ImportError, "lxml.etree exports no elementFactory of the expected signature");
        return NULL;
    }
    element_factory = (element_factory_t)PyCapsule_GetPointer(cap, sig);
    Py_DECREF(capi);
    if (!element_factory) return NULL;
    return PyModule_Create(&module);
}

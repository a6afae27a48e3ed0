/* The tokeniser and word ids in C (optional): ``hwnoise.text``'s ``words``, ``nul_words``,
 * ``nul_word_ids`` and ``lcs_blocks``' ids, equal to their Python code (the reference,
 * tests/test_text_words.py). It needs no lxml, so ``hwnoise.text``, a base module, loads it
 * through ``hwnoise.native`` without importing any stage. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_buffers.h"

/* -- the tokeniser's words ------------------------------------------------------------ */
/* words(text, nul): ``WORD_RE.findall(text)`` of hwnoise/text.py, ``\w+(?:['’]\w+)*``, with
 * ``\w`` as sre's Unicode word character (``Py_UNICODE_ISALNUM`` or "_"). With ``nul`` the
 * text is NUL-separated texts and it returns ``(words, segs, nuls)``: ``segs`` the bytes of
 * an int64 array, for each word the number of NULs before it (the index of its text), and
 * ``nuls`` the number of NULs (``hwnoise.text.nul_words``). A match is greedy and never
 * backtracks: a run of word characters, then an apostrophe followed by a word character
 * continues it. */
static unsigned char latin1_word[256];  /* is_word of U+0000-U+00FF, made at import */

static inline int is_word(Py_UCS4 c) {
    return c < 256 ? latin1_word[c] : (Py_UNICODE_ISALNUM(c) || c == '_');
}

/* The next word at or after *i: its span is [*start, *i) after the call; the NULs skipped on
 * the way are added to *nuls. 0 when there is none. The one scanner of words and text_ids. */
static inline int next_word(int kind, const void *data, Py_ssize_t n, Py_ssize_t *i,
                            Py_ssize_t *start, Py_ssize_t *nuls) {
    Py_ssize_t j = *i;
    for (; j < n; j++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, j);
        if (is_word(c)) break;
        *nuls += c == 0;
    }
    if (j >= n) { *i = j; return 0; }
    *start = j++;
    for (;;) {
        while (j < n && is_word(PyUnicode_READ(kind, data, j))) j++;
        if (j + 1 < n) {
            Py_UCS4 a = PyUnicode_READ(kind, data, j);
            if ((a == '\'' || a == 0x2019) && is_word(PyUnicode_READ(kind, data, j + 1))) {
                j += 2;
                continue;
            }
        }
        break;
    }
    *i = j;
    return 1;
}

static PyObject *int64_bytes(const Ints *a) {
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(a->n * sizeof(int64_t)));
    if (!b) return NULL;
    int64_t *dst = (int64_t *)PyBytes_AS_STRING(b);
    for (Py_ssize_t k = 0; k < a->n; k++) dst[k] = (int64_t)a->p[k];
    return b;
}

static PyObject *words(PyObject *self, PyObject *args) {
    PyObject *text;
    int nul = 0;
    if (!PyArg_ParseTuple(args, "U|p", &text, &nul)) return NULL;
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(0), *w;
    if (!out) return NULL;
    Ints segs = {0};
    Py_ssize_t i = 0, start = 0, nuls = 0;
    while (next_word(kind, data, n, &i, &start, &nuls)) {
        if (!(w = PyUnicode_Substring(text, start, i))) goto fail;
        int r = PyList_Append(out, w);
        Py_DECREF(w);
        if (r < 0 || (nul && ints_push(&segs, nuls) < 0)) goto fail;
    }
    if (!nul) return out;
    PyObject *seg_bytes = int64_bytes(&segs);
    if (!seg_bytes) goto fail;
    PyMem_Free(segs.p);
    return Py_BuildValue("NNn", out, seg_bytes, nuls);
fail:
    PyMem_Free(segs.p);
    Py_DECREF(out);
    return NULL;
}

/* text_ids(text, other): ``hwnoise.text.nul_word_ids``: the words of ``text`` (NUL-separated
 * texts) and of ``other`` as int64 ids, equal words equal ids (ids in order of first
 * appearance, text first), without making the words: ``(text's ids, each word's text index,
 * number of NULs in text, other's ids)``, bytes of int64. The words are found by next_word and
 * told apart by their code points, in a hash table of their spans. */
typedef struct { uint64_t hash; const void *data; int kind; Py_ssize_t start, len; } Span;
/* slots: 0 for an empty one, else the span's index + 1 in the low 32 bits and the high 32 bits
 * of its hash above them, so that a probe tells most other words apart without reading their
 * span (a text of more than 2^32 - 2 distinct words is a memory error) */
typedef struct { Span *spans; Py_ssize_t n, cap; uint64_t *slots; size_t mask; } Vocab;

/* memcmp(a, b, n) == 0 inline, 8 bytes a step: words are short, and a call of libc's memcmp
 * for each of them cost more than the comparison */
static inline int same_bytes(const char *a, const char *b, size_t n) {
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
    }
    for (; n; n--)
        if (*a++ != *b++) return 0;
    return 1;
}

static inline int span_eq(const Span *a, int kind, const void *data, Py_ssize_t start, Py_ssize_t len) {
    if (a->len != len) return 0;
    if (a->kind == kind)
        return same_bytes((const char *)a->data + a->start * kind, (const char *)data + start * kind,
                          (size_t)(len * kind));
    for (Py_ssize_t k = 0; k < len; k++)
        if (PyUnicode_READ(a->kind, a->data, a->start + k) != PyUnicode_READ(kind, data, start + k)) return 0;
    return 1;
}

#define SLOT_INDEX(x) ((Py_ssize_t)((x) & 0xffffffffULL) - 1)
#define SLOT_HIGH(h) ((h) & 0xffffffff00000000ULL)

static int vocab_grow(Vocab *v) {
    size_t cap = v->mask ? 2 * (v->mask + 1) : 1024;
    uint64_t *slots = PyMem_Calloc(cap, sizeof(uint64_t));
    if (!slots) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t k = 0; k < v->n; k++) {
        size_t at = (size_t)v->spans[k].hash & (cap - 1);
        while (slots[at]) at = (at + 1) & (cap - 1);
        slots[at] = SLOT_HIGH(v->spans[k].hash) | (uint64_t)(k + 1);
    }
    PyMem_Free(v->slots);
    v->slots = slots;
    v->mask = cap - 1;
    return 0;
}

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* the id of the word [start, start+len) of data, whose hash (FNV-1a over its code points,
 * then mix64) is h, added when new; -1 on a memory error (or past 2^32 - 2 distinct words) */
static Py_ssize_t vocab_id(Vocab *v, uint64_t h, int kind, const void *data, Py_ssize_t start, Py_ssize_t len) {
    if ((size_t)(v->n + 1) * 2 > v->mask + 1 && vocab_grow(v) < 0) return -1;
    size_t at = (size_t)h & v->mask;
    const uint64_t high = SLOT_HIGH(h);
    uint64_t x;
    while ((x = v->slots[at])) {
        if (SLOT_HIGH(x) == high) {
            Span *s = &v->spans[SLOT_INDEX(x)];
            if (s->hash == h && span_eq(s, kind, data, start, len)) return SLOT_INDEX(x);
        }
        at = (at + 1) & v->mask;
    }
    if (v->n >= (Py_ssize_t)0xfffffffeLL) { PyErr_NoMemory(); return -1; }  /* no room in a slot */
    if (v->n == v->cap) {
        Py_ssize_t cap = v->cap ? 2 * v->cap : 512;
        Span *sp = PyMem_Realloc(v->spans, cap * sizeof(Span));
        if (!sp) { PyErr_NoMemory(); return -1; }
        v->spans = sp;
        v->cap = cap;
    }
    v->spans[v->n] = (Span){h, data, kind, start, len};
    v->slots[at] = high | (uint64_t)(v->n + 1);
    return v->n++;
}

/* ids_of for one storage kind (T its code unit): next_word's scan over T directly, each word's
 * hash made as its characters are read (one read of each, no PyUnicode_READ switch); the
 * words, ids and NUL counts are next_word's + vocab_id's (tests/test_text_words.py). */
#define IDS_OF_KIND(NAME, T)                                                                    \
static int NAME(Vocab *v, const T *s, Py_ssize_t n, int kind, Ints *ids, Ints *segs,          \
                Py_ssize_t *nuls) {                                                           \
    Py_ssize_t j = 0;                                                                         \
    while (j < n) {                                                                           \
        Py_UCS4 c = s[j];                                                                     \
        if (!is_word(c)) { *nuls += c == 0; j++; continue; }                                  \
        Py_ssize_t start = j;                                                                 \
        uint64_t h = FNV_BASIS;                                                               \
        for (;;) {                                                                            \
            while (j < n && is_word(c = s[j])) { h = (h ^ c) * FNV_PRIME; j++; }              \
            if (j + 1 < n && (s[j] == '\'' || (Py_UCS4)s[j] == 0x2019) && is_word(s[j + 1])) { \
                h = (h ^ (Py_UCS4)s[j]) * FNV_PRIME;                                          \
                h = (h ^ (Py_UCS4)s[j + 1]) * FNV_PRIME;                                      \
                j += 2;                                                                       \
                continue;                                                                     \
            }                                                                                 \
            break;                                                                            \
        }                                                                                     \
        Py_ssize_t id = vocab_id(v, mix64(h), kind, s, start, j - start);                     \
        if (id < 0 || ints_push(ids, id) < 0 || (segs && ints_push(segs, *nuls) < 0)) return -1; \
    }                                                                                         \
    return 0;                                                                                 \
}
IDS_OF_KIND(ids_of_1, Py_UCS1)
IDS_OF_KIND(ids_of_2, Py_UCS2)
IDS_OF_KIND(ids_of_4, Py_UCS4)
#undef IDS_OF_KIND

static int ids_of(Vocab *v, PyObject *text, Ints *ids, Ints *segs, Py_ssize_t *nuls) {
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (kind == PyUnicode_1BYTE_KIND) return ids_of_1(v, data, n, kind, ids, segs, nuls);
    if (kind == PyUnicode_2BYTE_KIND) return ids_of_2(v, data, n, kind, ids, segs, nuls);
    return ids_of_4(v, data, n, kind, ids, segs, nuls);
}

/* ids_of over a list of strs read as if joined by NUL ("\0".join(texts), without making it):
 * a NUL counted between two texts, each word's index that of the joined string's. */
static int ids_of_joined(Vocab *v, PyObject *texts, Ints *ids, Ints *segs, Py_ssize_t *nuls) {
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(texts); k++) {
        PyObject *t = PyList_GET_ITEM(texts, k);
        if (!PyUnicode_Check(t)) { PyErr_SetString(PyExc_TypeError, "text_ids: a list of str"); return -1; }
        if (k) ++*nuls;
        if (ids_of(v, t, ids, segs, nuls) < 0) return -1;
    }
    return 0;
}

static PyObject *text_ids(PyObject *self, PyObject *args) {
    PyObject *text, *other, *res = NULL;
    if (!PyArg_ParseTuple(args, "OU", &text, &other)) return NULL;
    if (!PyUnicode_Check(text) && !PyList_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "text_ids: text is a str or a list of str");
        return NULL;
    }
    Vocab v = {0};
    Ints a = {0}, segs = {0}, b = {0};
    Py_ssize_t nuls = 0, other_nuls = 0;
    if ((PyList_Check(text) ? ids_of_joined(&v, text, &a, &segs, &nuls) : ids_of(&v, text, &a, &segs, &nuls)) == 0
        && ids_of(&v, other, &b, NULL, &other_nuls) == 0) {
        PyObject *ba = int64_bytes(&a), *bs = ba ? int64_bytes(&segs) : NULL, *bb = bs ? int64_bytes(&b) : NULL;
        if (bb) res = Py_BuildValue("NNnN", ba, bs, nuls, bb);
        else { Py_XDECREF(ba); Py_XDECREF(bs); }
    }
    PyMem_Free(v.spans); PyMem_Free(v.slots); PyMem_Free(a.p); PyMem_Free(segs.p); PyMem_Free(b.p);
    return res;
}


/* word_ids(a, b): each word of the lists a and b as an int64 id, equal words equal ids (one
 * dict over both, ids in order of first appearance): ``(bytes of a's ids, bytes of b's)``,
 * for ``hwnoise.text.lcs_blocks``, whose LCS then compares numbers instead of hashing strings.
 * The lists are read as tuples made first: a word's __hash__ or __eq__ (a str subclass's is
 * Python code) may change a list while it is read. */
static PyObject *ids_into(PyObject *vocab, PyObject *list) {
    Py_ssize_t n = PyTuple_GET_SIZE(list);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (!out) return NULL;
    int64_t *dst = (int64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *w = PyTuple_GET_ITEM(list, i);
        PyObject *v = PyDict_GetItemWithError(vocab, w);
        if (v) {
            dst[i] = (int64_t)PyLong_AsSsize_t(v);
            continue;
        }
        if (PyErr_Occurred()) { Py_DECREF(out); return NULL; }
        Py_ssize_t id = PyDict_GET_SIZE(vocab);
        if (!(v = PyLong_FromSsize_t(id))) { Py_DECREF(out); return NULL; }
        int r = PyDict_SetItem(vocab, w, v);
        Py_DECREF(v);
        if (r < 0) { Py_DECREF(out); return NULL; }
        dst[i] = (int64_t)id;
    }
    return out;
}

static PyObject *word_ids(PyObject *self, PyObject *args) {
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &a, &PyList_Type, &b)) return NULL;
    PyObject *ta = PyList_AsTuple(a), *tb = ta ? PyList_AsTuple(b) : NULL;
    PyObject *vocab = tb ? PyDict_New() : NULL;
    PyObject *ia = vocab ? ids_into(vocab, ta) : NULL, *ib = ia ? ids_into(vocab, tb) : NULL;
    Py_XDECREF(vocab); Py_XDECREF(ta); Py_XDECREF(tb);
    if (!ib) { Py_XDECREF(ia); return NULL; }
    return Py_BuildValue("NN", ia, ib);
}

/* -- one LCS of two id sequences, as rapidfuzz aligns them ------------------------------- */
/* lcs_mask(a, b): a and b int64 word ids (buffers; ids in [0, len(a) + len(b))): a bytearray
 * over a, 1 where a's word is part of the LCS that ``rapidfuzz.distance.LCSseq.opcodes(a, b)``
 * gives (hwnoise.text.lcs_mask through lcs_blocks, the reference; tests/test_text_words.py).
 * None when an id is out of range or the table of a's words' bits would pass 1 GB (the caller
 * then asks rapidfuzz). The same steps as rapidfuzz-cpp's lcs_seq_editops: the common prefix
 * and suffix are matched, then Hyyro's bit-parallel rows over the middles (S = (S + (S & M)) |
 * (S - u), one row per word of b, a's words as bits) are kept and walked back from the end: a
 * set bit deletes a's word, else b's word is inserted when the row above has the bit clear
 * too, else the two words match. Three changes that give the same walk, only cheaper:
 * - the rows are kept as each row's changed words (with their values before), and the walk
 *   back undoes a row to get the one above, instead of a whole bit matrix (512 MB written
 *   for the bench corpus's pages, most of it page faults);
 * - a's words that are not in b's middle and b's words not in a's middle are left out of the
 *   rows: such a word of a is a bit that stays 1 on every row and passes the carry through
 *   (the walk deletes it at once), such a word of b is a row equal to the one above (the walk
 *   inserts it after the same deletions);
 * - the bits of each word of a are looked up in a table by a dense id, not a hash map. */
static PyObject *lcs_mask(PyObject *self, PyObject *args) {
    Py_buffer ba, bb;
    if (!PyArg_ParseTuple(args, "y*y*", &ba, &bb)) return NULL;
    PyObject *res = NULL;
    unsigned char *in_a = NULL, *in_b = NULL;
    Py_ssize_t *keep = NULL, *dense = NULL;
    int64_t *cid = NULL, *rows_id = NULL;
    uint64_t *pm = NULL, *S = NULL, *old = NULL;
    uint32_t *at = NULL;
    Py_ssize_t *row_end = NULL;
    const int64_t *a = (const int64_t *)ba.buf, *b = (const int64_t *)bb.buf;
    Py_ssize_t na = ba.len / (Py_ssize_t)sizeof(int64_t), nb = bb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t V = na + nb;
    for (Py_ssize_t i = 0; i < na; i++) if (a[i] < 0 || a[i] >= V) { res = Py_None; Py_INCREF(res); goto done; }
    for (Py_ssize_t i = 0; i < nb; i++) if (b[i] < 0 || b[i] >= V) { res = Py_None; Py_INCREF(res); goto done; }
    res = PyByteArray_FromStringAndSize(NULL, na);
    if (!res) goto done;
    unsigned char *mask = (unsigned char *)PyByteArray_AS_STRING(res);
    memset(mask, 0, (size_t)na);
    /* the common prefix, then the common suffix of what is left */
    Py_ssize_t pre = 0;
    while (pre < na && pre < nb && a[pre] == b[pre]) mask[pre++] = 1;
    Py_ssize_t suf = 0;
    while (suf < na - pre && suf < nb - pre && a[na - 1 - suf] == b[nb - 1 - suf]) { mask[na - 1 - suf] = 1; suf++; }
    Py_ssize_t ma = na - pre - suf, mb = nb - pre - suf;
    if (ma == 0 || mb == 0) goto done;
    const int64_t *A = a + pre, *B = b + pre;
    in_a = PyMem_Calloc((size_t)V, 1); in_b = PyMem_Calloc((size_t)V, 1);
    dense = PyMem_Malloc((size_t)V * sizeof(Py_ssize_t));
    keep = PyMem_Malloc((size_t)ma * sizeof(Py_ssize_t));
    cid = PyMem_Malloc((size_t)ma * sizeof(int64_t)); rows_id = PyMem_Malloc((size_t)mb * sizeof(int64_t));
    if (!in_a || !in_b || !dense || !keep || !cid || !rows_id) { PyErr_NoMemory(); Py_CLEAR(res); goto done; }
    for (Py_ssize_t i = 0; i < ma; i++) in_a[A[i]] = 1;
    for (Py_ssize_t j = 0; j < mb; j++) in_b[B[j]] = 1;
    Py_ssize_t ka = 0, kb = 0, U = 0;  /* kept words of a and b, distinct kept words */
    for (Py_ssize_t i = 0; i < ma; i++) {
        int64_t w = A[i];
        if (!in_b[w]) continue;
        if (in_a[w] == 1) { in_a[w] = 2; dense[w] = U++; }  /* 2: has a dense id */
        keep[ka] = pre + i; cid[ka++] = dense[w];
    }
    for (Py_ssize_t j = 0; j < mb; j++) if (in_a[B[j]] == 2) rows_id[kb++] = dense[B[j]];
    if (ka == 0 || kb == 0) goto done;
    Py_ssize_t nw = (ka + 63) / 64;
    if ((double)U * (double)nw * 8.0 > 1073741824.0 || nw > (Py_ssize_t)UINT32_MAX) {
        Py_DECREF(res); res = Py_None; Py_INCREF(res); goto done;
    }
    pm = PyMem_Calloc((size_t)U * (size_t)nw, sizeof(uint64_t));
    S = PyMem_Malloc((size_t)nw * sizeof(uint64_t));
    row_end = PyMem_Malloc((size_t)kb * sizeof(Py_ssize_t));
    Py_ssize_t n_log = 0, cap = 4 * kb + 64;
    at = PyMem_Malloc((size_t)cap * sizeof(uint32_t));
    old = PyMem_Malloc((size_t)cap * sizeof(uint64_t));
    if (!pm || !S || !row_end || !at || !old) { PyErr_NoMemory(); Py_CLEAR(res); goto done; }
    for (Py_ssize_t k = 0; k < ka; k++) pm[cid[k] * nw + k / 64] |= (uint64_t)1 << (k % 64);
    for (Py_ssize_t w = 0; w < nw; w++) S[w] = ~(uint64_t)0;
    /* The rows are not kept whole: a row changes few of its words, so each change is logged
     * (the word and its value before) and the walk back undoes a row's changes to get the row
     * above: far less memory (and fewer page faults) than the whole bit matrix. */
    for (Py_ssize_t r = 0; r < kb; r++) {
        const uint64_t *M = pm + rows_id[r] * nw;
        uint64_t carry = 0;
        for (Py_ssize_t w = 0; w < nw; w++) {
            uint64_t s = S[w], u = s & M[w];
            uint64_t t = s + carry;
            uint64_t c1 = t < s;
            uint64_t x = t + u;
            carry = c1 | (x < t);
            uint64_t next = x | (s - u);
            if (next != s) {
                if (n_log == cap) {
                    Py_ssize_t ncap = 2 * cap;
                    uint32_t *at2 = PyMem_Realloc(at, (size_t)ncap * sizeof(uint32_t));
                    if (at2) at = at2;
                    uint64_t *old2 = at2 ? PyMem_Realloc(old, (size_t)ncap * sizeof(uint64_t)) : NULL;
                    if (!old2) { PyErr_NoMemory(); Py_CLEAR(res); goto done; }
                    old = old2; cap = ncap;
                }
                at[n_log] = (uint32_t)w; old[n_log++] = s;
                S[w] = next;
            }
        }
        row_end[r] = n_log;
    }
    /* the walk back (rapidfuzz-cpp's recover_alignment) from the last row, S being the row
     * row - 1 at each step: only the matches are kept */
    Py_ssize_t row = kb, col = ka;
#define BIT(c) ((S[(c) / 64] >> ((c) % 64)) & 1)
    while (row && col) {
        if (BIT(col - 1)) col--;                          /* a's word deleted */
        else {
            row--;
            if (row) {  /* undo row ``row``: S becomes row - 1 */
                for (Py_ssize_t k = row_end[row] - 1, stop = row_end[row - 1]; k >= stop; k--)
                    S[at[k]] = old[k];
                if (!BIT(col - 1)) continue;              /* b's word inserted */
            }
            col--;                                        /* a match */
            mask[keep[col]] = 1;
        }
    }
#undef BIT
done:
    PyMem_Free(in_a); PyMem_Free(in_b); PyMem_Free(dense); PyMem_Free(keep); PyMem_Free(cid);
    PyMem_Free(rows_id); PyMem_Free(pm); PyMem_Free(S); PyMem_Free(row_end); PyMem_Free(at);
    PyMem_Free(old);
    PyBuffer_Release(&ba); PyBuffer_Release(&bb);
    return res;
}

static PyMethodDef methods[] = {
    {"words", words, METH_VARARGS,
     "words(text, nul=False): hwnoise.text.WORD_RE.findall(text); with nul (NUL-separated texts) "
     "(words, int64 bytes of each word's text index, number of NULs)."},
    {"text_ids", text_ids, METH_VARARGS,
     "text_ids(text, other): hwnoise.text.nul_word_ids, as int64 bytes: (text's word ids, each word's "
     "text index, NULs in text, other's word ids); text a str or a list of str read as joined by NUL."},
    {"word_ids", word_ids, METH_VARARGS,
     "word_ids(a, b): the words of two lists as int64 ids (bytes), equal words equal ids."},
    {"lcs_mask", lcs_mask, METH_VARARGS,
     "lcs_mask(a, b): over the int64 ids a, 1 where the word is in rapidfuzz's LCS of a and b "
     "(LCSseq.opcodes), as a bytearray; None when an id is not in [0, len(a) + len(b))."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_tokens", NULL, -1, methods};

PyMODINIT_FUNC PyInit__tokens(void) {
    for (int c = 0; c < 256; c++) latin1_word[c] = Py_UNICODE_ISALNUM(c) || c == '_';
    return PyModule_Create(&module);
}

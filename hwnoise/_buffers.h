/* What the compiled helpers share (features/_walk.c, hwnoise/_tokens.c): a growable array of
 * indices and the 64-bit mix of their hashes. Header-only: each module has its own copy. */
#ifndef HWNOISE_BUFFERS_H
#define HWNOISE_BUFFERS_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct { Py_ssize_t *p; Py_ssize_t n, cap; } Ints;

static inline int ints_push(Ints *a, Py_ssize_t v) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? 2 * a->cap : 256;
        Py_ssize_t *p = PyMem_Realloc(a->p, cap * sizeof(Py_ssize_t));
        if (!p) { PyErr_NoMemory(); return -1; }
        a->p = p; a->cap = cap;
    }
    a->p[a->n++] = v;
    return 0;
}

/* splitmix64's finaliser */
static inline uint64_t mix64(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

#endif

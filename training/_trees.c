/* The descent of a gradient-boosted tree ensemble (hwnoise.training.ensemble.TreeEnsemble), and
 * its logistic link (expit, below):
 * every row down every tree, the leaves reached added to the baseline tree after tree, in the
 * order scikit-learn adds them, so the sums are the same doubles as the numpy code's (the
 * reference, tests/test_spec.py). numpy steps one tree level at a time over arrays; here a row
 * goes down one tree at a time, which is what made extraction spend a fifth of its time there. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* tree_sums(X, n_features, feature, threshold, missing_left, left, right, leaf, value, roots,
 * baseline): X float64 rows (C order, n x n_features); the trees' nodes in flat arrays (int64
 * feature, left, right as indices into them; float64 threshold, value; uint8 missing_left,
 * leaf), int64 roots the first node of each tree. Returns float64 bytes, one sum a row; None
 * when an index is out of range (the caller then runs the numpy code, which raises). */
static PyObject *tree_sums(PyObject *self, PyObject *args) {
    Py_buffer bx, bf, bt, bm, bl, br, bleaf, bv, broot;
    Py_ssize_t m;
    double baseline;
    if (!PyArg_ParseTuple(args, "y*ny*y*y*y*y*y*y*y*d", &bx, &m, &bf, &bt, &bm, &bl, &br, &bleaf,
                          &bv, &broot, &baseline))
        return NULL;
    PyObject *res = NULL;
    const Py_ssize_t nn = bf.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t nt = broot.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t n = m > 0 ? bx.len / (Py_ssize_t)sizeof(double) / m : 0;
    const double *X = (const double *)bx.buf, *thr = (const double *)bt.buf, *val = (const double *)bv.buf;
    const int64_t *feat = (const int64_t *)bf.buf, *lft = (const int64_t *)bl.buf;
    const int64_t *rgt = (const int64_t *)br.buf, *roots = (const int64_t *)broot.buf;
    const unsigned char *miss = (const unsigned char *)bm.buf, *leaf = (const unsigned char *)bleaf.buf;
    if (m <= 0 || bt.len != nn * (Py_ssize_t)sizeof(double) || bv.len != bt.len || bm.len != nn
        || bleaf.len != nn || bl.len != bf.len || br.len != bf.len || bx.len != n * m * (Py_ssize_t)sizeof(double))
        goto out_of_range;
    /* every index checked once here, so the descent needs no check: a split's feature is a
     * column, its children are later nodes (the descent ends), a root is a node */
    for (Py_ssize_t k = 0; k < nn; k++) {
        if (leaf[k]) continue;
        if (feat[k] < 0 || feat[k] >= m || lft[k] <= k || rgt[k] <= k || lft[k] >= nn || rgt[k] >= nn)
            goto out_of_range;
    }
    for (Py_ssize_t t = 0; t < nt; t++)
        if (roots[t] < 0 || roots[t] >= nn) goto out_of_range;
    res = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (!res) goto done;
    double *out = (double *)PyBytes_AS_STRING(res);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        const double *x = X + i * m;
        double raw = baseline;
        for (Py_ssize_t t = 0; t < nt; t++) {
            int64_t k = roots[t];
            while (!leaf[k]) {
                double v = x[feat[k]];
                int go_left = isnan(v) ? miss[k] : v <= thr[k];
                k = go_left ? lft[k] : rgt[k];
            }
            raw += val[k];
        }
        out[i] = raw;
    }
    Py_END_ALLOW_THREADS
    goto done;
out_of_range:
    res = Py_None;
    Py_INCREF(res);
done:
    PyBuffer_Release(&bx); PyBuffer_Release(&bf); PyBuffer_Release(&bt); PyBuffer_Release(&bm);
    PyBuffer_Release(&bl); PyBuffer_Release(&br); PyBuffer_Release(&bleaf); PyBuffer_Release(&bv);
    PyBuffer_Release(&broot);
    return res;
}

/* expit(raw): 1 / (1 + exp(-x)) of each float64, as float64 bytes: the logistic link of a binary
 * ensemble, written as scipy.special.expit computes it (C's exp, one division), which
 * scikit-learn's predict_proba uses; numpy's exp may differ from C's in the last bit. */
static PyObject *expit(PyObject *self, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b)) return NULL;
    const Py_ssize_t n = b.len / (Py_ssize_t)sizeof(double);
    PyObject *res = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (res) {
        const double *x = (const double *)b.buf;
        double *out = (double *)PyBytes_AS_STRING(res);
        for (Py_ssize_t i = 0; i < n; i++) out[i] = 1.0 / (1.0 + exp(-x[i]));
    }
    PyBuffer_Release(&b);
    return res;
}

static PyMethodDef methods[] = {
    {"tree_sums", tree_sums, METH_VARARGS,
     "tree_sums(X, n_features, feature, threshold, missing_left, left, right, leaf, value, roots, "
     "baseline): the ensemble's raw score of each row of X, as float64 bytes; None when an index "
     "is out of range."},
    {"expit", expit, METH_VARARGS,
     "expit(raw): the logistic of each float64 of raw (scipy.special.expit), as float64 bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trees", NULL, -1, methods};

PyMODINIT_FUNC PyInit__trees(void) { return PyModule_Create(&module); }

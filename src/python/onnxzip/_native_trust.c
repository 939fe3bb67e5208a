/* onnxzip._native: signed packages (issue 36) — who may have signed
 * (onnxzip_trust) and a verified signature (onnxzip_signed), one function
 * per library call. Arguments arrive checked by _trust.py: PEM and bundle
 * bytes already read from their files. The GIL is released while a
 * signature is read (a URL's model.sig is fetched) and while files are
 * hashed. A Signed holds its Trust, and neither is used by two threads at
 * once (_trust.py's lock): onnxzip_signed_check() records what it checked. */
#include "_native.h"

typedef struct {
    PyObject_HEAD
    onnxzip_trust *t;
} Trust;

typedef struct {
    PyObject_HEAD
    onnxzip_signed *s;
    PyObject *trust; /* the Trust it was opened with, kept while it lives */
} Signed;

static void trust_dealloc(Trust *self)
{
    onnxzip_trust_free(&self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void signed_dealloc(Signed *self)
{
    onnxzip_signed_free(&self->s);
    Py_XDECREF(self->trust);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject TrustType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onnxzip._native.Trust",
    .tp_basicsize = sizeof(Trust),
    .tp_dealloc = (destructor)trust_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Who may have signed a package (onnxzip_trust); use onnxzip.Trust.",
};

static PyTypeObject SignedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onnxzip._native.Signed",
    .tp_basicsize = sizeof(Signed),
    .tp_dealloc = (destructor)signed_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A package's verified signature (onnxzip_signed).",
};

/* trust_create() -> Trust */
PyObject *native_trust_create(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    Trust *t = PyObject_New(Trust, &TrustType);
    if (!t) return NULL;
    t->t = NULL;
    int rc = onnxzip_trust_create(&t->t);
    if (rc) {
        Py_DECREF(t);
        return raise_status(rc);
    }
    return (PyObject *)t;
}

/* One of the three setters over bytes: fn(t, data, len). */
static PyObject *trust_add(PyObject *args, const char *fmt, int (*fn)(onnxzip_trust *, const void *, size_t))
{
    Trust *t;
    Py_buffer b;
    if (!PyArg_ParseTuple(args, fmt, &TrustType, &t, &b)) return NULL;
    int rc = fn(t->t, b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

/* trust_add_public_key(trust, pem: bytes) */
PyObject *native_trust_add_public_key(PyObject *self, PyObject *args)
{
    (void)self;
    return trust_add(args, "O!y*:trust_add_public_key", onnxzip_trust_add_public_key);
}

/* trust_add_certificates(trust, pem: bytes) */
PyObject *native_trust_add_certificates(PyObject *self, PyObject *args)
{
    (void)self;
    return trust_add(args, "O!y*:trust_add_certificates", onnxzip_trust_add_certificates);
}

/* trust_set_signature(trust, bundle: bytes) */
PyObject *native_trust_set_signature(PyObject *self, PyObject *args)
{
    (void)self;
    return trust_add(args, "O!y*:trust_set_signature", onnxzip_trust_set_signature);
}

/* signed_open(handle, trust) -> Signed */
PyObject *native_signed_open(PyObject *self, PyObject *args)
{
    Handle *h;
    Trust *t;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!:signed_open", &HandleType, &h, &TrustType, &t)) return NULL;
    Signed *s = PyObject_New(Signed, &SignedType);
    if (!s) return NULL;
    s->s = NULL;
    Py_INCREF(t);
    s->trust = (PyObject *)t;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_signed_open(h->a, t->t, &s->s);
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_DECREF(s);
        return raise_status(rc);
    }
    return (PyObject *)s;
}

/* signed_check(signed, handle, path: str | None): None checks every file. */
PyObject *native_signed_check(PyObject *self, PyObject *args)
{
    Signed *s;
    Handle *h;
    const char *path;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!z:signed_check", &SignedType, &s, &HandleType, &h, &path)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_signed_check(s->s, h->a, path);
    Py_END_ALLOW_THREADS
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

/* signed_check_fetched(signed, handle, model: str, fetched: str) */
PyObject *native_signed_check_fetched(PyObject *self, PyObject *args)
{
    Signed *s;
    Handle *h;
    const char *model, *fetched;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!ss:signed_check_fetched", &SignedType, &s, &HandleType, &h, &model, &fetched))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_signed_check_fetched(s->s, h->a, model, fetched);
    Py_END_ALLOW_THREADS
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

/* signed_covers(signed, path: str) -> bool (onnxzip_signed_covers) */
PyObject *native_signed_covers(PyObject *self, PyObject *args)
{
    Signed *s;
    const char *path;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!s:signed_covers", &SignedType, &s, &path)) return NULL;
    return PyBool_FromLong(onnxzip_signed_covers(s->s, path));
}

/* signed_check_bytes(signed, path: str, data: buffer): the bytes handed
 * out, hashed where they are (onnxzip_signed_check_bytes). */
PyObject *native_signed_check_bytes(PyObject *self, PyObject *args)
{
    Signed *s;
    const char *path;
    Py_buffer b;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!sy*:signed_check_bytes", &SignedType, &s, &path, &b)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_signed_check_bytes(s->s, path, b.buf, (size_t)b.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

int native_trust_ready(void)
{
    return PyType_Ready(&TrustType) || PyType_Ready(&SignedType);
}

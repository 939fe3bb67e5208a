/* onnxzip._native: the C library for the Python package, one function per
 * library call. Policy (names, defaults, numpy, onnx) lives in the Python
 * modules; this file only converts arguments, releases the GIL around work
 * that reads or writes files, and turns statuses into exceptions.
 *
 * Lifetime: a Handle owns an onnxzip_archive and closes it when it is
 * deallocated. Every Region (a read-only buffer over a tensor or the model
 * bytes) holds a reference to its Handle, and numpy arrays made over a
 * Region hold the Region: the mapping lives as long as any array does,
 * whatever the Python Archive object does. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include <onnxzip/onnxzip.h>

#include "_native.h"

/* ONNX tensors have at most 64 dims (the library refuses more). */
#define OZ_PY_MAX_RANK 64

/* Called as factory(code, status_name, message, offset, sys_errno, path) to
 * build the exception raised for a failing call: the package's onnxzip.Error
 * subclass for them (_errors.py). path: str (file system encoding) or None. */
static PyObject *error_factory;

PyObject *raise_status(int rc)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    const char *msg = e->status == rc && e->message ? e->message : onnxzip_strerror(rc);
    int64_t offset = e->status == rc ? e->offset : -1;
    int sys_errno = e->status == rc ? e->sys_errno : 0;
    if (!error_factory) return PyErr_Format(PyExc_RuntimeError, "%s", msg);
    PyObject *path = Py_None;
    if (e->status == rc && e->path && !(path = PyUnicode_DecodeFSDefault(e->path))) return NULL;
    if (path == Py_None) Py_INCREF(path);
    PyObject *exc = PyObject_CallFunction(error_factory, "issLiO", rc, onnxzip_status_name(rc), msg, (long long)offset,
                                          sys_errno, path);
    Py_DECREF(path);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

/* ------------------------------------------------------------------------
 * Integer arguments (see _native.h)
 * ---------------------------------------------------------------------- */

static int int_arg(PyObject *obj, const char *name, unsigned long long max, unsigned long long *out)
{
    PyObject *n = PyNumber_Index(obj);
    if (!n) return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
    unsigned long long u = (unsigned long long)v;
    if (overflow > 0) u = PyLong_AsUnsignedLongLong(n); /* past LLONG_MAX; fails past u64 */
    int ok = 0;
    if (overflow == 0 && v == -1 && PyErr_Occurred()) {
        /* not a number PyLong can read: its own exception */
    } else if (overflow < 0 || (overflow == 0 && v < 0)) {
        PyErr_Format(PyExc_ValueError, "%s must be >= 0, not %S", name, n);
    } else if ((overflow > 0 && PyErr_Occurred()) || u > max) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "%s must be at most %llu, not %S", name, max, n);
    } else {
        *out = u;
        ok = 1;
    }
    Py_DECREF(n);
    return ok;
}

#define INT_CONVERTER(fn, type, max, name)            \
    int fn(PyObject *obj, void *out)                  \
    {                                                 \
        unsigned long long v;                         \
        if (!int_arg(obj, name, (max), &v)) return 0; \
        *(type *)out = (type)v;                       \
        return 1;                                     \
    }

INT_CONVERTER(arg_size_threshold, uint64_t, UINT64_MAX, "size_threshold")
INT_CONVERTER(arg_byte_count, uint64_t, UINT64_MAX, "offset or size")
INT_CONVERTER(arg_alignment, uint32_t, UINT32_MAX, "alignment")
INT_CONVERTER(arg_flags, uint32_t, UINT32_MAX, "flags")
INT_CONVERTER(arg_index, unsigned, UINT_MAX, "index")

/* ------------------------------------------------------------------------
 * Handle: one onnxzip_archive
 * ---------------------------------------------------------------------- */

static void handle_dealloc(Handle *h)
{
    onnxzip_close(&h->a);
    if (h->has_src) PyBuffer_Release(&h->src);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

Handle *handle_new(void)
{
    Handle *h = PyObject_New(Handle, &HandleType);
    if (h) h->a = NULL, h->has_src = 0;
    return h;
}

/* ------------------------------------------------------------------------
 * Region: read-only bytes owned by a Handle
 * ---------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    Handle *owner;
    const void *data;
    Py_ssize_t len;
} Region;

static PyTypeObject RegionType;

PyObject *region_new(Handle *owner, const void *data, uint64_t len)
{
    if (len > (uint64_t)PY_SSIZE_T_MAX) return PyErr_Format(PyExc_OverflowError, "region of %llu bytes", (unsigned long long)len);
    Region *r = PyObject_New(Region, &RegionType);
    if (!r) return NULL;
    Py_INCREF(owner);
    r->owner = owner;
    /* a 0-byte payload may have no address: any valid pointer will do */
    r->data = data ? data : (const void *)"";
    r->len = (Py_ssize_t)len;
    return (PyObject *)r;
}

static void region_dealloc(Region *r)
{
    Py_DECREF(r->owner);
    PyObject_Free(r);
}

static int region_getbuffer(Region *r, Py_buffer *view, int flags)
{
    /* readonly=1: a request for a writable buffer fails with BufferError */
    return PyBuffer_FillInfo(view, (PyObject *)r, (void *)r->data, r->len, 1, flags);
}

static Py_ssize_t region_length(Region *r)
{
    return r->len;
}

static PyObject *region_address(Region *r, PyObject *unused)
{
    (void)unused;
    return PyLong_FromVoidPtr((void *)r->data);
}

static PyBufferProcs region_as_buffer = { (getbufferproc)region_getbuffer, NULL };
static PySequenceMethods region_as_sequence = { .sq_length = (lenfunc)region_length };
static PyMethodDef region_methods[] = {
    { "address", (PyCFunction)region_address, METH_NOARGS, "The first byte's address in memory." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject RegionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onnxzip._native.Region",
    .tp_basicsize = sizeof(Region),
    .tp_dealloc = (destructor)region_dealloc,
    .tp_as_buffer = &region_as_buffer,
    .tp_as_sequence = &region_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only bytes of an open archive (a tensor's payload or the model); keeps the archive open.",
    .tp_methods = region_methods,
};

/* ------------------------------------------------------------------------
 * Opening
 * ---------------------------------------------------------------------- */

/* open(path, flags=0, model=None): onnxzip_open_model(); model, a package's
 * model path (str) or None: its default. */
static PyObject *native_open(PyObject *self, PyObject *args)
{
    PyObject *path;
    uint32_t flags = 0;
    const char *model = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "O&|O&z:open", PyUnicode_FSConverter, &path, arg_flags, &flags, &model)) return NULL;
    Handle *h = handle_new();
    int rc = 0;
    if (h) {
        Py_BEGIN_ALLOW_THREADS
        rc = onnxzip_open_model(PyBytes_AS_STRING(path), model, flags, &h->a);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(path);
    if (!h) return NULL;
    if (rc) {
        Py_DECREF(h);
        return raise_status(rc);
    }
    return (PyObject *)h;
}

static PyObject *native_open_buffer(PyObject *self, PyObject *args)
{
    PyObject *obj;
    uint32_t flags = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "O|O&:open_buffer", &obj, arg_flags, &flags)) return NULL;
    Handle *h = handle_new();
    if (!h) return NULL;
    if (PyObject_GetBuffer(obj, &h->src, PyBUF_SIMPLE)) {
        Py_DECREF(h);
        return NULL;
    }
    h->has_src = 1;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_open_buffer(h->src.buf, (size_t)h->src.len, flags, &h->a);
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_DECREF(h);
        return raise_status(rc);
    }
    return (PyObject *)h;
}

/* ------------------------------------------------------------------------
 * Handle methods
 * ---------------------------------------------------------------------- */

static const onnxzip_tensor *tensor_arg(Handle *h, PyObject *args, const char *fmt)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, fmt, &i)) return NULL;
    const onnxzip_tensor *t = i >= 0 ? onnxzip_tensor_at(h->a, (size_t)i) : NULL;
    if (!t) PyErr_Format(PyExc_IndexError, "tensor index %zd out of range", i);
    return t;
}

PyObject *str_or_none(const char *s)
{
    if (!s) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
}

/* A tuple of n new references; NULL (with each non-NULL one released) when
 * any of them is NULL. */
static PyObject *tuple_of(PyObject **items, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!items[i]) Py_CLEAR(t);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (t) PyTuple_SET_ITEM(t, i, items[i]);
        else Py_XDECREF(items[i]);
    }
    return t;
}

/* (name, data_type, dims, nbytes, file_offset, entry, alignment, storage, kind, graph_depth, key) */
static PyObject *tensor_tuple(const onnxzip_tensor *t)
{
    PyObject *dims[OZ_PY_MAX_RANK];
    Py_ssize_t nd = t->ndims < OZ_PY_MAX_RANK ? (Py_ssize_t)t->ndims : OZ_PY_MAX_RANK;
    for (Py_ssize_t d = 0; d < nd; d++) dims[d] = PyLong_FromLongLong((long long)t->dims[d]);
    PyObject *items[] = {
        str_or_none(t->name),
        PyLong_FromLong(t->data_type),
        tuple_of(dims, nd),
        PyLong_FromUnsignedLongLong(t->nbytes),
        PyLong_FromUnsignedLongLong(t->file_offset),
        str_or_none(t->entry),
        PyLong_FromUnsignedLong(t->alignment),
        PyLong_FromLong((long)t->storage),
        PyLong_FromLong((long)t->kind),
        PyLong_FromUnsignedLong(t->graph_depth),
        str_or_none(t->key),
    };
    return tuple_of(items, (Py_ssize_t)(sizeof items / sizeof *items));
}

static PyObject *handle_tensors(Handle *h, PyObject *unused)
{
    (void)unused;
    size_t n = onnxzip_tensor_count(h->a);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *t = tensor_tuple(onnxzip_tensor_at(h->a, i));
        if (!t) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

static PyObject *handle_entries(Handle *h, PyObject *unused)
{
    (void)unused;
    size_t n = onnxzip_entry_count(h->a);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        const onnxzip_entry *e = onnxzip_entry_at(h->a, i);
        PyObject *items[] = {
            str_or_none(e->name),
            PyLong_FromUnsignedLongLong(e->header_offset),
            PyLong_FromUnsignedLongLong(e->data_offset),
            PyLong_FromUnsignedLongLong(e->size),
            PyLong_FromUnsignedLong(e->crc32),
            e->has_xxh3 ? PyLong_FromUnsignedLongLong(e->xxh3) : (Py_INCREF(Py_None), Py_None),
        };
        PyObject *item = tuple_of(items, (Py_ssize_t)(sizeof items / sizeof *items));
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* The tensor's payload in place, or None for a TYPED tensor (no view). */
static PyObject *handle_region(Handle *h, PyObject *args)
{
    const onnxzip_tensor *t = tensor_arg(h, args, "n:region");
    if (!t) return NULL;
    /* a remote archive's entries are not in memory: read() fetches them */
    if (t->storage == ONNXZIP_STORAGE_TYPED || (!t->data && t->nbytes)) Py_RETURN_NONE;
    return region_new(h, t->data, t->nbytes);
}

/* A TYPED tensor's payload converted to raw_data form (a copy). */
static PyObject *handle_read(Handle *h, PyObject *args)
{
    const onnxzip_tensor *t = tensor_arg(h, args, "n:read");
    if (!t) return NULL;
    uint64_t size = 0;
    int rc = onnxzip_tensor_size(h->a, t, &size);
    if (rc) return raise_status(rc);
    if (size > (uint64_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_tensor_read(h->a, t, 0, size, PyBytes_AS_STRING(out));
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_DECREF(out);
        return raise_status(rc);
    }
    return out;
}

/* A STRING tensor's elements as a list of bytes. */
static PyObject *handle_strings(Handle *h, PyObject *args)
{
    const onnxzip_tensor *t = tensor_arg(h, args, "n:strings");
    if (!t) return NULL;
    size_t n = 0;
    int rc = onnxzip_tensor_strings(h->a, t, NULL, NULL, 0, &n);
    if (rc) return raise_status(rc);
    const void **data = PyMem_Calloc(n ? n : 1, sizeof *data);
    size_t *lens = PyMem_Calloc(n ? n : 1, sizeof *lens);
    PyObject *list = NULL;
    if (!data || !lens) {
        PyErr_NoMemory();
    } else if ((rc = onnxzip_tensor_strings(h->a, t, data, lens, n, &n))) {
        raise_status(rc);
    } else if ((list = PyList_New((Py_ssize_t)n))) {
        for (size_t i = 0; i < n; i++) {
            PyObject *b = PyBytes_FromStringAndSize(data[i], (Py_ssize_t)lens[i]);
            if (!b) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)i, b);
        }
    }
    PyMem_Free(data);
    PyMem_Free(lens);
    return list;
}

static PyObject *handle_model(Handle *h, PyObject *unused)
{
    (void)unused;
    const void *data;
    size_t size;
    int rc = onnxzip_model_bytes(h->a, &data, &size);
    return rc ? raise_status(rc) : region_new(h, data, size);
}

static PyObject *handle_path(Handle *h, PyObject *unused)
{
    (void)unused;
    return PyUnicode_DecodeFSDefault(onnxzip_archive_path(h->a));
}

/* listing(json) -> str: onnxzip_listing(), what `onnxzip ls [--json]` prints
 * (always valid UTF-8: names are escaped in it). */
static PyObject *handle_listing(Handle *h, PyObject *args)
{
    int json;
    char *text;
    if (!PyArg_ParseTuple(args, "p:listing", &json)) return NULL;
    int rc = onnxzip_listing(h->a, json ? ONNXZIP_LISTING_JSON : 0, &text);
    if (rc) return raise_status(rc);
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "strict");
    onnxzip_free(text);
    return s;
}

static PyObject *handle_layout(Handle *h, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLong((long)onnxzip_archive_layout(h->a));
}

static PyObject *handle_verify(Handle *h, PyObject *unused)
{
    (void)unused;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_verify(h->a);
    Py_END_ALLOW_THREADS
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

static PyObject *handle_check(Handle *h, PyObject *unused)
{
    (void)unused;
    int rc;
    Py_BEGIN_ALLOW_THREADS /* a remote archive asks its server */
    rc = onnxzip_check(h->a);
    Py_END_ALLOW_THREADS
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

/* view(location: str | None, size_threshold: int) -> bytes */
static PyObject *handle_view(Handle *h, PyObject *args)
{
    const char *location = NULL;
    uint64_t threshold;
    if (!PyArg_ParseTuple(args, "zO&:view", &location, arg_size_threshold, &threshold)) return NULL;
    onnxzip_view_options o;
    onnxzip_view_options_init(&o);
    o.location = location;
    o.size_threshold = threshold;
    void *data = NULL;
    size_t size = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_view_model(h->a, &o, &data, &size);
    Py_END_ALLOW_THREADS
    if (rc) return raise_status(rc);
    PyObject *out = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
    onnxzip_free(data);
    return out;
}

/* view_write(path, size_threshold) */
static PyObject *handle_view_write(Handle *h, PyObject *args)
{
    PyObject *path;
    uint64_t threshold;
    if (!PyArg_ParseTuple(args, "O&O&:view_write", PyUnicode_FSConverter, &path, arg_size_threshold, &threshold))
        return NULL;
    onnxzip_view_options o;
    onnxzip_view_options_init(&o);
    o.size_threshold = threshold;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_view_write(h->a, PyBytes_AS_STRING(path), &o);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

/* extract(tensor_name, out_path) */
static PyObject *handle_extract(Handle *h, PyObject *args)
{
    const char *name;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "sO&:extract", &name, PyUnicode_FSConverter, &path)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_extract_tensor(h->a, name, PyBytes_AS_STRING(path));
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

static PyMethodDef handle_methods[] = {
    { "tensors", (PyCFunction)handle_tensors, METH_NOARGS,
      "[(name, data_type, dims, nbytes, file_offset, entry, alignment, storage, kind, graph_depth, key)] in model order." },
    { "entries", (PyCFunction)handle_entries, METH_NOARGS,
      "[(name, header_offset, data_offset, size, crc32, xxh3 or None)] in central-directory order." },
    { "region", (PyCFunction)handle_region, METH_VARARGS,
      "region(i): tensor i's payload in place, None if TYPED or not in memory (remote)." },
    { "read", (PyCFunction)handle_read, METH_VARARGS,
      "read(i): tensor i's payload in raw_data form (a copy; fetched from a remote archive)." },
    { "path", (PyCFunction)handle_path, METH_NOARGS, "onnxzip_archive_path() (a URL without its query)." },
    { "strings", (PyCFunction)handle_strings, METH_VARARGS, "strings(i): a STRING tensor's elements." },
    { "model", (PyCFunction)handle_model, METH_NOARGS, "The serialized ModelProto, in place." },
    { "listing", (PyCFunction)handle_listing, METH_VARARGS, "listing(json) -> str: onnxzip_listing()." },
    { "layout", (PyCFunction)handle_layout, METH_NOARGS, "onnxzip_archive_layout()." },
    { "verify", (PyCFunction)handle_verify, METH_NOARGS, "onnxzip_verify()." },
    { "check", (PyCFunction)handle_check, METH_NOARGS, "onnxzip_check()." },
    { "view", (PyCFunction)handle_view, METH_VARARGS, "view(location, size_threshold) -> bytes." },
    { "view_write", (PyCFunction)handle_view_write, METH_VARARGS, "view_write(path, size_threshold)." },
    { "extract", (PyCFunction)handle_extract, METH_VARARGS, "extract(tensor_name, out_path)." },
    NATIVE_PACKAGE_HANDLE_METHODS
    { NULL, NULL, 0, NULL },
};

PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onnxzip._native.Handle",
    .tp_basicsize = sizeof(Handle),
    .tp_dealloc = (destructor)handle_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An open archive (onnxzip_archive); closed when the last reference goes.",
    .tp_methods = handle_methods,
};

/* ------------------------------------------------------------------------
 * Module functions
 * ---------------------------------------------------------------------- */


static PyObject *native_set_error_factory(PyObject *self, PyObject *fn)
{
    (void)self;
    Py_INCREF(fn);
    Py_XSETREF(error_factory, fn);
    Py_RETURN_NONE;
}

static PyObject *native_version(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyUnicode_FromString(onnxzip_version());
}

static PyObject *native_dtype_name(PyObject *self, PyObject *args)
{
    int code;
    (void)self;
    if (!PyArg_ParseTuple(args, "i:dtype_name", &code)) return NULL;
    return PyUnicode_FromString(onnxzip_dtype_name(code));
}

static PyObject *native_entry_name_for(PyObject *self, PyObject *args)
{
    const char *name;
    unsigned index;
    char buf[512];
    (void)self;
    if (!PyArg_ParseTuple(args, "sO&:entry_name_for", &name, arg_index, &index)) return NULL;
    int rc = onnxzip_entry_name_for(name, index, buf, sizeof buf);
    if (rc < 0) return raise_status(rc);
    return PyUnicode_FromStringAndSize(buf, rc);
}

static PyMethodDef native_methods[] = {
    { "open", native_open, METH_VARARGS, "open(path, flags=0, model=None) -> Handle (onnxzip_open_model)." },
    { "open_buffer", native_open_buffer, METH_VARARGS, "open_buffer(obj, flags=0) -> Handle over obj's bytes, held." },
    { "version", native_version, METH_NOARGS, "The C library's version." },
    { "dtype_name", native_dtype_name, METH_VARARGS, "dtype_name(code) -> ONNX data type name." },
    { "entry_name_for", native_entry_name_for, METH_VARARGS, "entry_name_for(tensor_name, index) -> entry name." },
    { "set_error_factory", native_set_error_factory, METH_O, "set_error_factory(fn(code, name, message, offset, sys_errno, path))." },
    NATIVE_WRITE_METHODS
    NATIVE_REMOTE_METHODS
    NATIVE_TRUST_METHODS
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "onnxzip._native", "The onnxzip C library (internal: use the onnxzip package).", -1,
    native_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void);
PyMODINIT_FUNC PyInit__native(void)
{
    if (PyType_Ready(&HandleType) || PyType_Ready(&RegionType) || native_write_ready() || native_trust_ready())
        return NULL;
    PyObject *m = PyModule_Create(&native_module);
    if (!m) return NULL;
    Py_INCREF(&HandleType); /* PyModule_AddObject() steals one on success */
    Py_INCREF(&RegionType);
    if (PyModule_AddObject(m, "Handle", (PyObject *)&HandleType) ||
        PyModule_AddObject(m, "Region", (PyObject *)&RegionType) || native_write_add(m)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

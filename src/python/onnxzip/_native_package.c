/* onnxzip._native: packages (format 1.2, spec section 19) — their members
 * (models and plain files) listed and read through the public C API, and
 * folders packed into packages and unpacked from them. A member is named
 * by its index in onnxzip_member_at()'s order; _archive.py maps paths to
 * indexes. */
#include "_native.h"

static const onnxzip_member *member_arg(Handle *h, PyObject *args, const char *fmt)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, fmt, &i)) return NULL;
    const onnxzip_member *m = i >= 0 ? onnxzip_member_at(h->a, (size_t)i) : NULL;
    if (!m) PyErr_Format(PyExc_IndexError, "member index %zd out of range", i);
    return m;
}

/* members() -> [(path, kind, is_default, size)]: kind is onnxzip_member_kind. */
PyObject *handle_members(Handle *h, PyObject *unused)
{
    (void)unused;
    size_t n = onnxzip_member_count(h->a);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        const onnxzip_member *m = onnxzip_member_at(h->a, i);
        PyObject *item = Py_BuildValue("(NiOK)", str_or_none(m->path), (int)m->kind,
                                       m->is_default ? Py_True : Py_False, (unsigned long long)m->size);
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* member_region(i) -> Region over the member's bytes in the mapping, or None
 * when the handle maps nothing (a URL): member_read() then. */
PyObject *handle_member_region(Handle *h, PyObject *args)
{
    const onnxzip_member *m = member_arg(h, args, "n:member_region");
    if (!m) return NULL;
    const void *data;
    uint64_t size;
    int rc = onnxzip_member_bytes(h->a, m, &data, &size);
    if (rc == ONNXZIP_EUNSUPPORTED) Py_RETURN_NONE;
    return rc ? raise_status(rc) : region_new(h, data, size);
}

/* member_read(i) -> bytes: a copy of the member's bytes, fetched when remote. */
PyObject *handle_member_read(Handle *h, PyObject *args)
{
    const onnxzip_member *m = member_arg(h, args, "n:member_read");
    if (!m) return NULL;
    if (m->size > (uint64_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)m->size);
    if (!out) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onnxzip_member_read(h->a, m, 0, m->size, PyBytes_AS_STRING(out));
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_DECREF(out);
        return raise_status(rc);
    }
    return out;
}

PyObject *handle_model_path(Handle *h, PyObject *unused)
{
    (void)unused;
    return str_or_none(onnxzip_model_path(h->a));
}

/* onnxzip._native: archives read over HTTP(S) range requests
 * (onnxzip_open_url) and their download (onnxzip_fetch,
 * onnxzip_fetch_tensors). Arguments arrive checked by _remote.py. The GIL
 * is released for every transfer; fetch()'s progress callback takes it
 * back for each call into Python, and an exception there ends the transfer
 * (onnxzip_cancel()) and is raised once the C call has returned. */
#include "_native.h"

/* Python's callback hears of at most one step per this many bytes (and of
 * the end): each call takes the GIL, which another thread may hold. */
#define PROGRESS_STEP ((uint64_t)1 << 20)

static int opt_str(PyObject *obj, void *out)
{
    if (obj == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(obj, out);
}

/* open_url(url, allow_http, ca_file, connect_timeout_ms, stall_timeout_ms,
 * retries, max_redirects, parallel, token, no_sign_request, profile,
 * region, endpoint_url, addressing, chunk_size, low_speed_limit,
 * low_speed_time_ms, request_timeout_ms, model) -> Handle; token: None (the
 * library's default: the Hugging Face token for Hub URLs), "" (none) or the
 * bearer token; profile, region, endpoint_url: str or None; addressing:
 * ONNXZIP_S3_*; chunk_size: bytes, 0 for the default; model: a package's
 * model path, or None: its default. */
PyObject *native_open_url(PyObject *self, PyObject *args)
{
    const char *url, *token;
    int allow_http;
    PyObject *ca_file = NULL;
    unsigned long long chunk;
    onnxzip_remote_options o;
    onnxzip_remote_options_init(&o);
    (void)self;
    if (!PyArg_ParseTuple(args, "spO&O&O&O&O&O&zpzzziKO&O&O&z:open_url", &url, &allow_http, opt_str, &ca_file,
                          arg_index, &o.connect_timeout_ms, arg_index, &o.stall_timeout_ms, arg_index, &o.retries,
                          arg_index, &o.max_redirects, arg_index, &o.parallel, &token, &o.s3_no_sign, &o.s3_profile,
                          &o.s3_region, &o.s3_endpoint_url, &o.s3_addressing, &chunk, arg_index,
                          &o.low_speed_limit, arg_index, &o.low_speed_time_ms, arg_index, &o.request_timeout_ms,
                          &o.model))
        return NULL;
    if (chunk) o.chunk_size = chunk;
    o.bearer_token = token;
    o.allow_http = allow_http;
    o.ca_file = ca_file ? PyBytes_AS_STRING(ca_file) : NULL;
    Handle *h = handle_new();
    int rc = 0;
    if (h) {
        Py_BEGIN_ALLOW_THREADS
        rc = onnxzip_open_url(url, &o, &h->a);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(ca_file);
    if (h && rc) {
        Py_DECREF(h);
        return raise_status(rc);
    }
    return (PyObject *)h;
}

/* The C progress callback's `user`: Python's callback (or None) and the
 * exception it raised, kept until the transfer has returned. */
typedef struct progress_ctx {
    PyObject *fn;
    uint64_t reported;
    PyObject *exc;
} progress_ctx;

/* The raised exception, taken out of the thread's error indicator. */
static PyObject *take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value && traceback) PyException_SetTraceback(value, traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return value;
#endif
}

/* Raises `exc` again (stolen), with its traceback. */
static void give_exception(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyObject *type = (PyObject *)Py_TYPE(exc);
    Py_INCREF(type);
    PyErr_Restore(type, exc, PyException_GetTraceback(exc));
#endif
}

/* Runs in the thread that called fetch(), without the GIL. Without a
 * Python callback it still checks for signals (Ctrl-C: KeyboardInterrupt
 * ends the download as a callback's exception would). */
static void progress(void *user, uint64_t done, uint64_t total)
{
    progress_ctx *c = user;
    if (c->exc) { /* not called again once canceled; should it be, stop again */
        onnxzip_cancel();
        return;
    }
    if (done < total && done - c->reported < PROGRESS_STEP) return;
    c->reported = done;
    PyGILState_STATE g = PyGILState_Ensure();
    int failed = PyErr_CheckSignals() < 0;
    if (!failed && c->fn != Py_None) {
        PyObject *r = PyObject_CallFunction(c->fn, "KK", (unsigned long long)done, (unsigned long long)total);
        failed = r == NULL;
        Py_XDECREF(r);
    }
    if (failed) {
        c->exc = take_exception();
        onnxzip_cancel();
    }
    PyGILState_Release(g);
}

/* A list of str (shell patterns) as a C array of the list's own UTF-8. */
static const char **patterns_of(PyObject *list, Py_ssize_t *n)
{
    *n = PyList_GET_SIZE(list);
    const char **p = PyMem_Calloc((size_t)(*n ? *n : 1), sizeof *p);
    if (!p) return (const char **)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < *n; i++) {
        if (!(p[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(list, i)))) {
            PyMem_Free(p);
            return NULL;
        }
    }
    return p;
}

/* fetch(handle, path, patterns: list[str] | None, progress | None) */
PyObject *native_fetch(PyObject *self, PyObject *args)
{
    Handle *h;
    PyObject *path, *list;
    progress_ctx c = { NULL, 0, NULL };
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O&OO:fetch", &HandleType, &h, PyUnicode_FSConverter, &path, &list, &c.fn))
        return NULL;
    if (list != Py_None && !PyList_Check(list)) {
        Py_DECREF(path);
        return PyErr_Format(PyExc_TypeError, "patterns must be a list or None");
    }
    Py_ssize_t n = 0;
    const char **patterns = list == Py_None ? NULL : patterns_of(list, &n);
    if (list != Py_None && !patterns) {
        Py_DECREF(path);
        return NULL;
    }
    Py_INCREF(list); /* its strings back `patterns` while the GIL is released */
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = patterns ? onnxzip_fetch_tensors(h->a, PyBytes_AS_STRING(path), patterns, (size_t)n, progress, &c)
                  : onnxzip_fetch(h->a, PyBytes_AS_STRING(path), progress, &c);
    Py_END_ALLOW_THREADS
    Py_DECREF(list);
    PyMem_Free(patterns);
    Py_DECREF(path);
    if (c.exc) { /* the callback's exception, not ONNXZIP_ECANCELED */
        give_exception(c.exc);
        return NULL;
    }
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

/* remote_stats(handle) -> (requests, retries, bytes_received, file_size, redirects) */
PyObject *native_remote_stats(PyObject *self, PyObject *args)
{
    Handle *h;
    onnxzip_remote_stats st;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!:remote_stats", &HandleType, &h)) return NULL;
    int rc = onnxzip_remote_get_stats(h->a, &st);
    if (rc) return raise_status(rc);
    return Py_BuildValue("(KKKKK)", (unsigned long long)st.requests, (unsigned long long)st.retries,
                         (unsigned long long)st.bytes_received, (unsigned long long)st.file_size,
                         (unsigned long long)st.redirects);
}

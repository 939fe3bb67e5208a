/* onnxzip._native: the calls that write files (pack, unpack, repack,
 * update_model) and the Writer type behind onnxzip.save(). Each runs with the
 * GIL released; the Python buffers they read are held until they return. */
#include "_native.h"

#include <onnxzip/onnxzip.h>

#define CALL_UNLOCKED(rc, call) \
    do {                        \
        Py_BEGIN_ALLOW_THREADS  \
        rc = (call);            \
        Py_END_ALLOW_THREADS    \
    } while (0)

/* An optional path argument: None or a path-like object. */
static int opt_path(PyObject *obj, void *out)
{
    if (obj == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(obj, out);
}

static const char *path_str(PyObject *p)
{
    return p ? PyBytes_AS_STRING(p) : NULL;
}

static PyObject *done(int rc)
{
    if (rc) return raise_status(rc);
    Py_RETURN_NONE;
}

PyObject *native_pack(PyObject *self, PyObject *args)
{
    PyObject *in, *out, *data_dir = NULL;
    onnxzip_pack_options o;
    onnxzip_pack_options_init(&o);
    (void)self;
    if (!PyArg_ParseTuple(args, "O&O&O&O&O&O&|z:pack", PyUnicode_FSConverter, &in, PyUnicode_FSConverter, &out,
                          arg_alignment, &o.alignment, arg_flags, &o.flags, arg_size_threshold, &o.size_threshold,
                          opt_path, &data_dir, &o.default_model))
        return NULL;
    o.data_dir = path_str(data_dir);
    int rc;
    CALL_UNLOCKED(rc, onnxzip_pack(PyBytes_AS_STRING(in), PyBytes_AS_STRING(out), &o));
    Py_DECREF(in);
    Py_DECREF(out);
    Py_XDECREF(data_dir);
    return done(rc);
}

/* unpack(archive, out, layout, alignment, location, flags, size_threshold,
 * max_shard_size, model, folder): onnxzip_unpack() of one model to the model
 * file `out` (a package's `model`, None: its default), or with `folder`
 * onnxzip_unpack_dir() of a package to the folder `out`. */
PyObject *native_unpack(PyObject *self, PyObject *args)
{
    PyObject *in, *out, *location = NULL;
    int layout, folder = 0;
    onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    (void)self;
    if (!PyArg_ParseTuple(args, "O&O&iO&O&O&O&O&|zp:unpack", PyUnicode_FSConverter, &in, PyUnicode_FSConverter,
                          &out, &layout, arg_alignment, &o.alignment, opt_path, &location, arg_flags, &o.flags,
                          arg_size_threshold, &o.size_threshold, arg_size_threshold, &o.max_shard_size, &o.model,
                          &folder))
        return NULL;
    o.layout = (onnxzip_unpack_layout)layout;
    o.location = path_str(location);
    int rc;
    if (folder) CALL_UNLOCKED(rc, onnxzip_unpack_dir(PyBytes_AS_STRING(in), PyBytes_AS_STRING(out), &o));
    else CALL_UNLOCKED(rc, onnxzip_unpack(PyBytes_AS_STRING(in), PyBytes_AS_STRING(out), &o));
    Py_DECREF(in);
    Py_DECREF(out);
    Py_XDECREF(location);
    return done(rc);
}

PyObject *native_parse_size(PyObject *self, PyObject *args)
{
    const char *text;
    uint64_t size;
    (void)self;
    if (!PyArg_ParseTuple(args, "s:parse_size", &text)) return NULL;
    int rc = onnxzip_parse_size(text, &size);
    return rc ? raise_status(rc) : PyLong_FromUnsignedLongLong(size);
}

PyObject *native_repack(PyObject *self, PyObject *args)
{
    PyObject *in, *out;
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    (void)self;
    if (!PyArg_ParseTuple(args, "O&O&O&O&:repack", PyUnicode_FSConverter, &in, PyUnicode_FSConverter, &out,
                          arg_alignment, &o.alignment, arg_flags, &o.flags))
        return NULL;
    int rc;
    CALL_UNLOCKED(rc, onnxzip_repack(PyBytes_AS_STRING(in), PyBytes_AS_STRING(out), &o));
    Py_DECREF(in);
    Py_DECREF(out);
    return done(rc);
}

PyObject *native_update_model(PyObject *self, PyObject *args)
{
    PyObject *path;
    Py_buffer model;
    (void)self;
    if (!PyArg_ParseTuple(args, "O&y*:update_model", PyUnicode_FSConverter, &path, &model)) return NULL;
    int rc;
    CALL_UNLOCKED(rc, onnxzip_update_model(PyBytes_AS_STRING(path), model.buf, (size_t)model.len));
    Py_DECREF(path);
    PyBuffer_Release(&model);
    return done(rc);
}

/* ------------------------------------------------------------------------
 * Writer: onnxzip_writer. One call at a time: `busy` (read and set with the
 * GIL held) refuses a second thread while the first runs without the GIL.
 * ---------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    onnxzip_writer *w;
    int busy;
} Writer;

static PyTypeObject WriterType;

PyObject *native_writer(PyObject *self, PyObject *args)
{
    PyObject *path;
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    (void)self;
    if (!PyArg_ParseTuple(args, "O&O&O&:writer", PyUnicode_FSConverter, &path, arg_alignment, &o.alignment, arg_flags,
                          &o.flags))
        return NULL;
    Writer *w = PyObject_New(Writer, &WriterType);
    int rc = 0;
    if (w) {
        w->w = NULL, w->busy = 0;
        CALL_UNLOCKED(rc, onnxzip_writer_create(PyBytes_AS_STRING(path), &o, &w->w));
    }
    Py_DECREF(path);
    if (w && rc) {
        Py_DECREF(w);
        return raise_status(rc);
    }
    return (PyObject *)w;
}

static void writer_dealloc(Writer *w)
{
    onnxzip_writer_abort(&w->w); /* never finished: no output appears */
    PyObject_Free(w);
}

/* Takes the writer for one call; 0 with an exception set when it cannot. */
static int writer_enter(Writer *w)
{
    if (!w->w) PyErr_SetString(PyExc_ValueError, "the writer is finished or aborted");
    else if (w->busy) PyErr_SetString(PyExc_RuntimeError, "the writer is in use by another thread");
    else return w->busy = 1;
    return 0;
}

/* add(name, buffer): an entry holding the buffer's bytes. */
static PyObject *writer_add(Writer *w, PyObject *args)
{
    const char *name;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "sy*:add", &name, &data)) return NULL;
    int rc = 0, ok = writer_enter(w);
    if (ok) CALL_UNLOCKED(rc, onnxzip_writer_add_memory(w->w, name, data.buf, (uint64_t)data.len));
    w->busy = 0;
    PyBuffer_Release(&data);
    return ok ? done(rc) : NULL;
}

/* add_file_range(name, fd, offset, size) */
static PyObject *writer_add_file_range(Writer *w, PyObject *args)
{
    const char *name;
    int fd;
    uint64_t offset, size;
    if (!PyArg_ParseTuple(args, "siO&O&:add_file_range", &name, &fd, arg_byte_count, &offset, arg_byte_count, &size))
        return NULL;
    int rc = 0, ok = writer_enter(w);
    if (ok) CALL_UNLOCKED(rc, onnxzip_writer_add_file_range(w->w, name, fd, offset, size));
    w->busy = 0;
    return ok ? done(rc) : NULL;
}

static PyObject *writer_set_model(Writer *w, PyObject *args)
{
    Py_buffer model;
    if (!PyArg_ParseTuple(args, "y*:set_model", &model)) return NULL;
    int rc = 0, ok = writer_enter(w);
    if (ok) CALL_UNLOCKED(rc, onnxzip_writer_set_model(w->w, model.buf, (size_t)model.len));
    w->busy = 0;
    PyBuffer_Release(&model);
    return ok ? done(rc) : NULL;
}

static PyObject *writer_finish(Writer *w, PyObject *unused)
{
    (void)unused;
    int rc = 0, ok = writer_enter(w);
    if (ok) CALL_UNLOCKED(rc, onnxzip_writer_finish(&w->w));
    w->busy = 0;
    return ok ? done(rc) : NULL;
}

static PyObject *writer_abort(Writer *w, PyObject *unused)
{
    (void)unused;
    if (w->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the writer is in use by another thread");
        return NULL;
    }
    onnxzip_writer_abort(&w->w);
    Py_RETURN_NONE;
}

static PyMethodDef writer_methods[] = {
    { "add", (PyCFunction)writer_add, METH_VARARGS, "add(name, buffer): an entry with these bytes." },
    { "add_file_range", (PyCFunction)writer_add_file_range, METH_VARARGS,
      "add_file_range(name, fd, offset, size): an entry streamed from a file." },
    { "set_model", (PyCFunction)writer_set_model, METH_VARARGS, "set_model(model_bytes)." },
    { "finish", (PyCFunction)writer_finish, METH_NOARGS, "Writes the archive and renames it into place." },
    { "abort", (PyCFunction)writer_abort, METH_NOARGS, "Removes the temporary file." },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject WriterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onnxzip._native.Writer",
    .tp_basicsize = sizeof(Writer),
    .tp_dealloc = (destructor)writer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An archive being written (onnxzip_writer); aborted if dropped unfinished.",
    .tp_methods = writer_methods,
};

int native_write_ready(void)
{
    return PyType_Ready(&WriterType);
}

int native_write_add(PyObject *module)
{
    Py_INCREF(&WriterType);
    return PyModule_AddObject(module, "Writer", (PyObject *)&WriterType);
}

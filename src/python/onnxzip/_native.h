/* Shared between the translation units of onnxzip._native. */
#ifndef ONNXZIP_PY_NATIVE_H
#define ONNXZIP_PY_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Raises the package's onnxzip.Error for status rc (< 0) from
 * onnxzip_last_error(); returns NULL. Call with the GIL, in the thread that
 * made the failing call. */
PyObject *raise_status(int rc);

/* PyArg "O&" converters of integer arguments (_native.c): anything with
 * __index__, never wrapped as PyArg's unsigned codes do (-5 read as
 * 2**64 - 5, 2**32 + 64 as 64): ValueError when negative, OverflowError past
 * the C field's range, each naming the argument. `out` points to the type
 * named. */
int arg_size_threshold(PyObject *obj, void *out); /* uint64_t */
int arg_byte_count(PyObject *obj, void *out);     /* uint64_t: offsets, sizes */
int arg_alignment(PyObject *obj, void *out);      /* uint32_t */
int arg_flags(PyObject *obj, void *out);          /* uint32_t (unsigned) */
int arg_index(PyObject *obj, void *out);          /* unsigned */

/* _native_write.c: conversions and the Writer type. */
PyObject *native_pack(PyObject *self, PyObject *args);
PyObject *native_unpack(PyObject *self, PyObject *args);
PyObject *native_repack(PyObject *self, PyObject *args);
PyObject *native_update_model(PyObject *self, PyObject *args);
PyObject *native_writer(PyObject *self, PyObject *args);
int native_write_ready(void);
int native_write_add(PyObject *module);

#define NATIVE_WRITE_METHODS                                                                                  \
    { "pack", native_pack, METH_VARARGS,                                                                     \
      "pack(in_path, out_path, alignment, flags, size_threshold, data_dir) (onnxzip_pack)." },               \
    { "unpack", native_unpack, METH_VARARGS,                                                                 \
      "unpack(archive, model_path, layout, alignment, location, flags, size_threshold) (onnxzip_unpack)." }, \
    { "repack", native_repack, METH_VARARGS, "repack(in_path, out_path, alignment, flags) (onnxzip_repack)." }, \
    { "update_model", native_update_model, METH_VARARGS, "update_model(archive_path, model_bytes)." },       \
    { "writer", native_writer, METH_VARARGS, "writer(path, alignment, flags) -> Writer." },

#endif

/* Shared between the translation units of onnxzip._native. */
#ifndef ONNXZIP_PY_NATIVE_H
#define ONNXZIP_PY_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <onnxzip/onnxzip.h>

/* An open archive (_native.c): closed when the last reference goes. */
typedef struct {
    PyObject_HEAD
    onnxzip_archive *a;
    Py_buffer src; /* open_buffer(): the caller's bytes, held (and so kept
                      alive and unresizable) until the archive is closed */
    int has_src;
} Handle;

/* A new Handle with no archive yet (NULL with an exception set). */
Handle *handle_new(void);

/* The Handle type, for "O!" arguments. */
extern PyTypeObject HandleType;

/* A read-only buffer over `len` bytes at `data`, owned by `owner` (held):
 * a tensor's payload, the model bytes, a package file (_native.c). */
PyObject *region_new(Handle *owner, const void *data, uint64_t len);

/* A C string as str (UTF-8, undecodable bytes as surrogates), None for NULL. */
PyObject *str_or_none(const char *s);

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
PyObject *native_parse_size(PyObject *self, PyObject *args);
PyObject *native_repack(PyObject *self, PyObject *args);
PyObject *native_update_model(PyObject *self, PyObject *args);
PyObject *native_writer(PyObject *self, PyObject *args);
int native_write_ready(void);
int native_write_add(PyObject *module);

/* _native_remote.c: archives over HTTP(S). */
PyObject *native_open_url(PyObject *self, PyObject *args);
PyObject *native_fetch(PyObject *self, PyObject *args);
PyObject *native_remote_stats(PyObject *self, PyObject *args);

/* _native_package.c: the members of a package (format 1.2) and its folder. */
PyObject *handle_members(Handle *h, PyObject *unused);
PyObject *handle_member_region(Handle *h, PyObject *args);
PyObject *handle_member_read(Handle *h, PyObject *args);
PyObject *handle_model_path(Handle *h, PyObject *unused);

/* _native_trust.c: signed packages (onnxzip_trust, onnxzip_signed). */
PyObject *native_trust_create(PyObject *self, PyObject *unused);
PyObject *native_trust_add_public_key(PyObject *self, PyObject *args);
PyObject *native_trust_add_certificates(PyObject *self, PyObject *args);
PyObject *native_trust_set_signature(PyObject *self, PyObject *args);
PyObject *native_signed_open(PyObject *self, PyObject *args);
PyObject *native_signed_check(PyObject *self, PyObject *args);
PyObject *native_signed_check_fetched(PyObject *self, PyObject *args);
PyObject *native_signed_covers(PyObject *self, PyObject *args);
PyObject *native_signed_check_bytes(PyObject *self, PyObject *args);
int native_trust_ready(void);

#define NATIVE_TRUST_METHODS                                                                                  \
    { "trust_create", native_trust_create, METH_NOARGS, "trust_create() -> Trust (onnxzip_trust_create)." }, \
    { "trust_add_public_key", native_trust_add_public_key, METH_VARARGS,                                     \
      "trust_add_public_key(trust, pem) (onnxzip_trust_add_public_key)." },                                  \
    { "trust_add_certificates", native_trust_add_certificates, METH_VARARGS,                                 \
      "trust_add_certificates(trust, pem) (onnxzip_trust_add_certificates)." },                              \
    { "trust_set_signature", native_trust_set_signature, METH_VARARGS,                                       \
      "trust_set_signature(trust, bundle) (onnxzip_trust_set_signature)." },                                 \
    { "signed_open", native_signed_open, METH_VARARGS,                                                       \
      "signed_open(handle, trust) -> Signed (onnxzip_signed_open)." },                                       \
    { "signed_check", native_signed_check, METH_VARARGS,                                                     \
      "signed_check(signed, handle, path or None) (onnxzip_signed_check)." },                               \
    { "signed_check_fetched", native_signed_check_fetched, METH_VARARGS,                                     \
      "signed_check_fetched(signed, handle, model, fetched) (onnxzip_signed_check_fetched)." },             \
    { "signed_covers", native_signed_covers, METH_VARARGS,                                                   \
      "signed_covers(signed, path) -> bool (onnxzip_signed_covers)." },                                      \
    { "signed_check_bytes", native_signed_check_bytes, METH_VARARGS,                                         \
      "signed_check_bytes(signed, path, data) (onnxzip_signed_check_bytes)." },

#define NATIVE_PACKAGE_HANDLE_METHODS                                                                         \
    { "members", (PyCFunction)handle_members, METH_NOARGS,                                                   \
      "[(path, kind, is_default, size)] in manifest order (onnxzip_member_at); [] when no package." },      \
    { "member_region", (PyCFunction)handle_member_region, METH_VARARGS,                                      \
      "member_region(i): member i's bytes in place (onnxzip_member_bytes), None when nothing is mapped." }, \
    { "member_read", (PyCFunction)handle_member_read, METH_VARARGS,                                          \
      "member_read(i): member i's bytes, a copy (onnxzip_member_read; fetched from a URL)." },              \
    { "model_path", (PyCFunction)handle_model_path, METH_NOARGS,                                             \
      "onnxzip_model_path(): the package path of the model held, None when no package." },

#define NATIVE_REMOTE_METHODS                                                                                     \
    { "open_url", native_open_url, METH_VARARGS,                                                                 \
      "open_url(url, allow_http, ca_file, connect_timeout_ms, stall_timeout_ms, retries, max_redirects, "        \
      "parallel, token, no_sign_request, profile, region, endpoint_url, addressing, chunk_size, "                \
      "low_speed_limit, low_speed_time_ms, request_timeout_ms, model) -> Handle (onnxzip_open_url)." },                 \
    { "fetch", native_fetch, METH_VARARGS,                                                                       \
      "fetch(handle, path, patterns or None, progress or None) (onnxzip_fetch, onnxzip_fetch_tensors)." },       \
    { "remote_stats", native_remote_stats, METH_VARARGS,                                                         \
      "remote_stats(handle) -> (requests, retries, bytes_received, file_size) (onnxzip_remote_get_stats)." },

#define NATIVE_WRITE_METHODS                                                                                  \
    { "pack", native_pack, METH_VARARGS,                                                                     \
      "pack(in_path, out_path, alignment, flags, size_threshold, data_dir, default_model=None) "            \
      "(onnxzip_pack)." },                                                                                   \
    { "unpack", native_unpack, METH_VARARGS,                                                                 \
      "unpack(archive, out, layout, alignment, location, flags, size_threshold, max_shard_size, model=None, " \
      "folder=False) (onnxzip_unpack, onnxzip_unpack_dir)." },                                               \
    { "parse_size", native_parse_size, METH_VARARGS, "parse_size(text) -> int (onnxzip_parse_size)." },      \
    { "repack", native_repack, METH_VARARGS, "repack(in_path, out_path, alignment, flags) (onnxzip_repack)." }, \
    { "update_model", native_update_model, METH_VARARGS, "update_model(archive_path, model_bytes)." },       \
    { "writer", native_writer, METH_VARARGS, "writer(path, alignment, flags) -> Writer." },

#endif

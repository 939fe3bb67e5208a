/* Helpers shared by the fuzz targets. */
#ifndef ONNXZIP_FUZZ_UTIL_H
#define ONNXZIP_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A memfd holding `size` bytes of `data`, at offset 0; -1 on failure. */
int fuzz_memfd(const char *name, const uint8_t *data, size_t size);

/* A private directory created once per process under $TMPDIR (or /tmp) and
 * removed at exit; aborts when it cannot be created. */
const char *fuzz_tmpdir(void);

/* Removes everything inside `dir` (not `dir` itself). */
void fuzz_clear_dir(const char *dir);

/* What onnxzip_verify() requires of a model's own fields, written again here
 * as the oracle: ir_version > 0 (the last one), opset_import when
 * ir_version >= 3, a graph. 1 when `model` has them. Pack and unpack copy these
 * fields: their output verifies exactly when their input has them. */
int fuzz_model_fields_ok(const uint8_t *model, size_t size);

/* Prints the library's last error and aborts: a fuzz target's invariant
 * failed. */
void fuzz_fail(const char *what) __attribute__((noreturn));

#endif

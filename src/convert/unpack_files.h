/* The writing of one onnxzip_unpack()'s files into its temporary directory
 * (its state and plan: convert/unpack_plan.h): what unpack.c and
 * unpack_safetensors.c use. It calls neither. */
#ifndef ONNXZIP_UNPACK_FILES_H
#define ONNXZIP_UNPACK_FILES_H

#include "convert/unpack_plan.h"

/* EIO naming dir/name, what failed and errno. */
int oz_unpack_io_err(const char *dir, const char *name, const char *what);
/* Files in u->tmp: created, written (counted as progress when `payload`),
 * closed (synced unless NO_SYNC, keeping the first error rc). */
int oz_unpack_create(const unpack *u, const char *name, int *fd);
int oz_unpack_write(unpack *u, int fd, const char *name, const uint8_t *p, uint64_t n, int payload);
int oz_unpack_close(const unpack *u, int fd, const char *name, int rc);
/* Copies `len` bytes at `at` in the archive (of entry `entry`) to the end of fd. */
int oz_unpack_copy(unpack *u, int fd, const char *name, uint64_t at, uint64_t len, const char *entry);

#endif

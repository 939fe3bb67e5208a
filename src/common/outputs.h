/* Outputs (spec 12.3): an output path never names one of the files the
 * operation reads, nor an existing special file; it is replaced by rename.
 * One check for every writer: pack, unpack, repack, extract and the
 * temporary-file helper under onnxzip_writer_create(). */
#ifndef ONNXZIP_OUTPUTS_H
#define ONNXZIP_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/sys.h"

/* A file the operation reads, identified by (st_dev, st_ino), so that hard
 * links, symlinks and other spellings of its path are recognised. */
typedef struct oz_input {
    uint64_t dev, ino;
    const char *role;   /* "the input model", "the archive", "the external data file" */
    const char *dir;    /* directory `path` is relative to, for messages; NULL when none */
    const char *path;   /* as the model or the caller names it */
    const char *tensor; /* data files: a tensor stored in it (printable); else NULL */
} oz_input;

/* 1 when both describe the same file. */
int oz_same_stat(const oz_stat *a, const oz_stat *b);

/* Fills *in from the file open on `fd`; the strings are borrowed. Returns 0,
 * or ONNXZIP_EIO when it cannot be examined. */
int oz_input_fd(oz_input *in, int fd, const char *role, const char *dir, const char *path, const char *tensor);

/* Checks the output `name` (relative to `dirfd`, or OZ_AT_CWD; `dir` is that
 * directory's path for messages, NULL when `name` is the whole path) before
 * anything is written to it and again before the rename. Nothing is opened
 * (a FIFO cannot block), nothing is changed. When nothing exists there, or
 * only a dangling symbolic link, it returns 0. Otherwise, symbolic links
 * followed, it must be a regular file (ONNXZIP_ENOTREG: device, FIFO, socket,
 * directory) and none of the `n` inputs (ONNXZIP_ESAMEFILE, the message naming
 * both paths and the tensor of a data file). A symbolic link to an acceptable
 * regular file is fine: the rename replaces the link, not its target. */
int oz_output_check(int dirfd, const char *dir, const char *name, const oz_input *in, size_t n);

#endif

/* The state of one onnxzip_unpack() and the writing of its files into the
 * temporary directory: what unpack.c (planning, the walk, the single and
 * per-tensor layouts, the renames), unpack_safetensors.c and unpack_origin.c
 * all use. It calls none of them. */
#ifndef ONNXZIP_UNPACK_FILES_H
#define ONNXZIP_UNPACK_FILES_H

#include "read/archive.h"
#include "common/mkdirs.h"
#include "common/strmap.h"
#include "onnx/onnx_walk.h"

/* One distinct entry that becomes data (SINGLE, PER_TENSOR; SAFETENSORS:
 * those of the side file). */
typedef struct ent {
    const onnxzip_entry *e;
    uint64_t file_off; /* where the entry starts in its data file */
    const char *file;  /* the data file holding it */
    char *own;         /* PER_TENSOR: `file` when allocated here */
} ent;

typedef struct unpack {
    const onnxzip_unpack_options *o;
    const char *archive_path, *model_path;
    const char *name;              /* the model's file name within dir */
    char *dir, *tmp;               /* tmp: dir/.NAME.unpack-XXXXXX */
    oz_made_dirs made;             /* dir and those above it that prepare created */
    int dirfd, tmpfd;
    int arcfd;                     /* the archive, for oz_copy_range */
    int sync;                      /* fsync files and directory (not ONNXZIP_UNPACK_NO_SYNC) */
    onnxzip_archive *a;
    ent *ents;
    size_t nents;
    oz_strmap by_entry; /* entry name -> index in ents */
    oz_strmap taken;    /* PER_TENSOR: file names, ASCII case-folded */
    char *location;     /* SINGLE: the data file's name */
    const char **files; /* data files, in rename order */
    size_t nfiles;
    size_t seen;        /* tensors visited, to compare with the index's count */
    uint64_t total, done, reported;
    char checksum[41];
    struct oz_st *st;   /* SAFETENSORS: the plan (unpack_safetensors.c) */
    struct oz_og *og;   /* ORIGINAL: the plan (unpack_origin.c) */
} unpack;


int oz_unpack_nomem(void);
/* EIO naming dir/name, what failed and errno. */
int oz_unpack_io_err(const char *dir, const char *name, const char *what);
/* n more payload bytes done: calls the progress callback every 8 MiB. */
void oz_unpack_progress(unpack *u, uint64_t n);
/* Files in u->tmp: created, written (counted as progress when `payload`),
 * closed (synced unless NO_SYNC, keeping the first error rc). */
int oz_unpack_create(const unpack *u, const char *name, int *fd);
int oz_unpack_write(unpack *u, int fd, const char *name, const uint8_t *p, uint64_t n, int payload);
int oz_unpack_close(const unpack *u, int fd, const char *name, int rc);
/* Copies `len` bytes at `at` in the archive (of entry `entry`) to the end of fd. */
int oz_unpack_copy(unpack *u, int fd, const char *name, uint64_t at, uint64_t len, const char *entry);

static inline int oz_ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* File names equal ignoring ASCII case (as case-insensitive file systems see them). */
int oz_unpack_same_folded(const char *a, const char *b);

#endif

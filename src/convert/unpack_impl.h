/* The state of one onnxzip_unpack(), shared by unpack.c (planning, the
 * model, the single and per-tensor layouts, the temporary directory) and
 * unpack_safetensors.c (the safetensors layout). */
#ifndef ONNXZIP_UNPACK_IMPL_H
#define ONNXZIP_UNPACK_IMPL_H

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


/* unpack.c, for unpack_safetensors.c */
int oz_unpack_nomem(void);
int oz_unpack_create(const unpack *u, const char *name, int *fd);
int oz_unpack_write(unpack *u, int fd, const char *name, const uint8_t *p, uint64_t n, int payload);
int oz_unpack_close(const unpack *u, int fd, const char *name, int rc);
/* Copies `len` bytes at `at` in the archive (of entry `entry`) to the end of fd. */
int oz_unpack_copy(unpack *u, int fd, const char *name, uint64_t at, uint64_t len, const char *entry);
int oz_unpack_same_folded(const char *a, const char *b);

/* unpack_safetensors.c */
/* Takes tensor v (an entry tensor that is not inline) into a safetensors
 * file: 1 when taken, 0 when it goes to the side file, or an error. */
int oz_st_take(unpack *u, const onnxzip_tensor *v);
/* Names the files (after every oz_st_take) and adds them to u->files. */
int oz_st_plan(unpack *u);
/* The reference of v when it is in a safetensors file: 1, else 0. */
int oz_st_ref(unpack *u, const onnxzip_tensor *v, oz_rewrite *rw);
int oz_st_write(unpack *u);
void oz_st_free(unpack *u);

/* unpack_origin.c: ONNXZIP_UNPACK_ORIGINAL */
typedef struct oz_og oz_og;
/* The data files and places the manifest records (into u->files). */
int oz_og_plan(unpack *u);
/* Tensor v, the `ordinal`-th of the walk (ordinals rising): at its place,
 * or inline. */
int oz_og_ref(unpack *u, const onnxzip_tensor *v, uint64_t ordinal, oz_rewrite *rw);
int oz_og_write(unpack *u);
void oz_og_free(unpack *u);

#endif

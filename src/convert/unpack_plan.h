/* What one onnxzip_unpack() writes, planned without writing anything: the
 * state shared by its layouts, the model rewritten by the walk, and each
 * data file as segments (onnxzip_segment: bytes held, archive ranges,
 * zeros). unpack.c writes the segments; file_plan.c hands them out (and the
 * trust layer hashes them), so that what is signed and what unpack writes
 * come from one code path. No file is touched here (the WebAssembly build
 * compiles it). */
#ifndef ONNXZIP_UNPACK_PLAN_H
#define ONNXZIP_UNPACK_PLAN_H

#include "read/archive.h"
#include "common/buf.h"
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

/* A data file planned: its name in the model's directory and its bytes. */
typedef struct oz_ufile {
    const char *name;
    onnxzip_segment *seg;
    size_t n, cap;
} oz_ufile;

typedef struct unpack unpack;

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
    /* SAFETENSORS: unpack_safetensors.c's steps (set by unpack.c only, so
     * that the planner links without the writer) */
    int (*st_take)(unpack *u, const onnxzip_tensor *v);
    int (*st_plan)(unpack *u);
    int (*st_ref)(unpack *u, const onnxzip_tensor *v, oz_rewrite *rw);
    uint8_t **inl;      /* entries read for tensors written inline (a handle without a mapping) */
    size_t *inl_entry;  /* each one's entry index, SIZE_MAX when its tensor is only part of it */
    size_t ninl;
    int og_refused;     /* ORIGINAL refused the manifest's data files or places (ONNXZIP_EUNSUPPORTED) */
    oz_ufile *out;      /* the data files' segments (oz_unpack_segments()) */
    size_t nout;
} unpack;

/* Initializes the maps of a zeroed unpack (u->o, u->a, names set). */
void oz_unpack_plan_init(unpack *u);
/* The data files (u->files) and where each tensor goes. */
int oz_unpack_plan(unpack *u);
/* The model rewritten by the walk into `out`. */
int oz_unpack_build(unpack *u, oz_buf *out);
/* After oz_unpack_build(): each data file but safetensors files as segments
 * in u->out, in u->files order. ORIGINAL: ONNXZIP_EUNSUPPORTED when the
 * manifest's places cannot be trusted (the caller falls back). */
int oz_unpack_segments(unpack *u);
/* Frees what the plan holds (not u->a). */
void oz_unpack_plan_free(unpack *u);
/* The layout a package's model is written in when ORIGINAL refuses it with
 * ONNXZIP_EUNSUPPORTED (onnxzip_unpack_dir(), file plans): the caller's, or
 * SINGLE when the caller asked for ORIGINAL. */
onnxzip_unpack_layout oz_unpack_fallback(onnxzip_unpack_layout asked);

int oz_unpack_nomem(void);
/* n more payload bytes done: calls the progress callback every 8 MiB. */
void oz_unpack_progress(unpack *u, uint64_t n);
/* Appends a segment to file f. */
int oz_ufile_add(oz_ufile *f, onnxzip_segment s);
/* `zeros` zero bytes, then `len` bytes of entry `entry`'s data from byte `off`. */
int oz_ufile_zeros_range(const unpack *u, oz_ufile *f, uint64_t zeros, const char *entry, uint64_t off, uint64_t len);
/* A new data file of the plan named `name`. */
oz_ufile *oz_unpack_new_file(unpack *u, const char *name);
/* The bytes of an entry tensor written inline: in the mapping, or read
 * (checked) through the source. */
int oz_unpack_inline_bytes(unpack *u, const onnxzip_tensor *v, const uint8_t **p);
/* A plain file name: not empty, no '/', not "." or "..". */
int oz_unpack_plain_name(const char *s);

static inline int oz_ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* File names equal ignoring ASCII case (as case-insensitive file systems see them). */
int oz_unpack_same_folded(const char *a, const char *b);

#endif

/* Where an archive's bytes come from: one interface for the local file
 * (mapped), HTTP/S3/Hub (net/source_http.c) and a host that reads for the
 * library (the WebAssembly binding's JavaScript: read/source_host.c). The
 * reader's one open sequence (read/open.c) and every later read of a handle
 * without a mapping go through it.
 *
 * A source has a size, the window of bytes at the file's end that it holds
 * (the whole file for a mapping; a remote file's tail; what a host handed
 * over) and operations; only read() is required. */
#ifndef ONNXZIP_SOURCE_H
#define ONNXZIP_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "onnxzip/onnxzip.h"

typedef struct oz_source oz_source;

/* A file range [from, to). */
typedef struct oz_file_span {
    uint64_t from, to;
} oz_file_span;

/* `len` bytes at file offset `off`, to read into `dst`. */
typedef struct oz_range {
    uint64_t off, len;
    void *dst;
} oz_range;

/* Gets the next `n` bytes of a stream, from file offset `at`; nonzero (a
 * status, its error recorded) stops it. */
typedef int (*oz_sink_fn)(void *ctx, const uint8_t *p, size_t n, uint64_t at);

typedef struct oz_source_ops {
    /* `n` bytes at file offset `off` into `dst`, all of them: 0, or a status
     * with its error recorded (naming the source). Required. */
    int (*read)(oz_source *s, uint64_t off, size_t n, void *dst);
    /* Ranges r[0..n), each into its dst, in parallel where the source can.
     * NULL: read() of each. */
    int (*readv)(oz_source *s, const oz_range *r, size_t n);
    /* Bytes [from, size) in order to `sink`. NULL: read() in pieces. */
    int (*stream)(oz_source *s, uint64_t from, oz_sink_fn sink, void *ctx);
    /* Is the file still the one opened (size, validator)? 0, or
     * ONNXZIP_ECHANGED / ONNXZIP_ETRUNC / ... recorded. NULL: nothing to check. */
    int (*check)(oz_source *s);
    /* A hint: these bytes will be read soon. NULL: none. */
    void (*willneed)(oz_source *s, uint64_t off, uint64_t n);
    /* Bytes worth one batch of readv() (a round of the connections). NULL: 0. */
    uint64_t (*batch)(const oz_source *s);
    /* Frees what the source owns (not the struct oz_source itself). */
    void (*free)(oz_source *s);
} oz_source_ops;

struct oz_source {
    const oz_source_ops *ops;
    void *impl;           /* the implementation's state */
    const char *name;     /* the file as messages show it (owned by the archive) */
    uint64_t size;        /* the file's size */
    const uint8_t *map;   /* every byte of the file (a mapping or the caller's buffer), or NULL */
    uint8_t *win;         /* bytes [win_off, size) held in memory: the window at the end (owned; NULL when map) */
    uint64_t win_off;
    int read_headers;     /* the open reads local headers with read(), not from the window (a local
                             file: its page cache costs less than faulting in the mapping) */
    int defer_headers;    /* entries' local headers are checked on first read (remote), not all at open */
    int widen_by_caller;  /* the open returns what it needs before the window instead of reading it
                             (a host whose reads are asynchronous) */
    int read_model;       /* with widen_by_caller: a model entry before the window is read with read()
                             (its header and bytes, one range), not asked for */
    int cold;             /* read() found bytes that were not in the page cache (a local file) */
};

/* The window's bytes: the mapping's or the held window's. */
const uint8_t *oz_source_window(const oz_source *s);

/* Widens the held window down to file offset `from` (< win_off) with one
 * read(): what the open sequence asks for when the central directory or the
 * model begins before it. */
int oz_source_widen(oz_source *s, uint64_t from);

/* readv(), or read() of each range. */
int oz_source_readv(oz_source *s, const oz_range *r, size_t n);

/* Spans sp[0..n) one after the other into `dst` (one oz_source_readv()). */
int oz_source_read_spans(oz_source *s, const oz_file_span *sp, size_t n, uint8_t *dst);

/* stream(), or read() in pieces of at most 1 MiB. */
int oz_source_stream(oz_source *s, uint64_t from, oz_sink_fn sink, void *ctx);

/* Frees what s owns and clears it (a zeroed source: a no-op). */
void oz_source_free(oz_source *s);

#endif

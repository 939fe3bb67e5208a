/* Remote archives (onnxzip_open_url()): the handle's HTTP side, the first
 * checks of entries' local headers, and the in-order check of a whole
 * file's bytes that verify and fetch share. */
#ifndef ONNXZIP_REMOTE_H
#define ONNXZIP_REMOTE_H

#include <stdatomic.h>

#include "common/checksum.h"
#include "read/archive.h"

struct oz_http;

typedef struct oz_remote {
    struct oz_http *http;
    uint8_t *win;          /* the file's bytes [win_off, size): model, directory, end records */
    uint64_t win_off;
    atomic_uchar *checked; /* per entry: its local header was checked */
} oz_remote;

/* Reads `len` bytes of entry tensor `t` (index `i` in the handle's zip) from
 * byte `offset` of its payload into `dst`, checking the entry's local header
 * on first use. */
int oz_remote_read(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len, void *dst);

/* The file's bytes of spans s[0..n), one after the other into `dst`
 * (remote: all cut into chunk-size requests in flight together). */
typedef struct oz_file_span {
    uint64_t from, to;
} oz_file_span;
int oz_spans_read(onnxzip_archive *a, const oz_file_span *s, size_t n, uint8_t *dst);

/* Bytes worth reading in one batch of oz_spans_read(): a round of the
 * handle's connections (parallel x chunk size), at least 64 MiB. */
uint64_t oz_spans_window(const onnxzip_archive *a);

/* Entry `i`'s local header, read at `h` (data_offset - header_offset
 * bytes), checked once for a remote handle (a local one was at open). */
int oz_entry_check_header(onnxzip_archive *a, size_t i, const uint8_t *h);

/* Checks a whole archive file's bytes, fed in order from offset `pos` on:
 * every local header against the directory, every entry's CRC-32 and XXH3,
 * and the model, directory and end records byte for byte against the ones
 * validated at open. */
typedef struct oz_stream {
    const onnxzip_archive *a;
    uint32_t *order;    /* entries by header offset */
    size_t k;           /* the entry being checked, in that order */
    uint64_t pos;       /* file offset of the next byte */
    int phase;          /* gap, header, data, tail */
    uint8_t *hdr;       /* the current local header */
    size_t hlen, hneed;
    uint64_t data_end;
    uint64_t good;      /* the end of the last entry checked whole, */
    size_t good_k;      /* and the index (in file order) of the next one */
    oz_checksum sum;
} oz_stream;

int oz_stream_init(oz_stream *s, const onnxzip_archive *a);
/* A check that starts at the `k`-th entry in file order (the directory when
 * k is the entry count): fetch drops back there after a fault in resumed
 * bytes. */
int oz_stream_init_at(oz_stream *s, const onnxzip_archive *a, size_t k);
int oz_stream_feed(oz_stream *s, const uint8_t *p, size_t n);
/* After the file's last byte: 0 when every entry was checked. */
int oz_stream_finish(oz_stream *s);
void oz_stream_free(oz_stream *s);

/* onnxzip_verify() of a remote handle: the file streamed through oz_stream. */
int oz_remote_verify(onnxzip_archive *a);

/* Streams bytes [from, size) of the remote file to `sink` (in order). */
int oz_remote_stream(onnxzip_archive *a, uint64_t from, int (*sink)(void *ctx, const uint8_t *p, size_t n, uint64_t at),
                     void *ctx);

/* onnxzip_check() of a remote handle: is the pinned file still served? */
int oz_remote_check(onnxzip_archive *a);

/* Refuses a window that must widen down to file offset `from` of a file of
 * `size` bytes when the records from there on are more than a model and its
 * directory can span (ONNXZIP_ELIMIT, naming the file `shown`). */
int oz_remote_span_check(uint64_t from, uint64_t size, const char *shown);

/* After oz_zip_parse_remote() accepted the window a->remote->win: the model
 * copied out of it, its entry marked checked, the tensors indexed. */
int oz_remote_index(onnxzip_archive *a);

void oz_remote_free(oz_remote *r);

#endif

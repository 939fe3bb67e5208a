/* The checks of an archive's bytes as they arrive (stream_check.c), for
 * handles that hold no mapping of the file: the whole file fed in order
 * (verify, fetch, the streaming verifier of the host API) and the one
 * comparison of an entry's digests. */
#ifndef ONNXZIP_STREAM_CHECK_H
#define ONNXZIP_STREAM_CHECK_H

#include "common/checksum.h"
#include "read/archive.h"

/* Entry e's data hashed to `crc` and `xxh3` against what the archive
 * `path` records: 0, ONNXZIP_ECRC or ONNXZIP_EDIGEST (the one place these
 * are compared and their messages written). */
int oz_entry_check_digests(const oz_zentry *e, const char *path, uint32_t crc, uint64_t xxh3);

/* Entry e's whole data, its size bytes at `d` (just read, still in cache),
 * hashed and checked as oz_entry_check_digests() does. */
int oz_entry_check_data(const oz_zentry *e, const char *path, const void *d);

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

/* onnxzip_verify() of an unmapped handle: the file streamed from its
 * source through oz_stream. */
int oz_stream_verify(onnxzip_archive *a);

#endif

/* A background hasher for the writer: CRC-32 and XXH3 of entries that the
 * writer is still copying, read back from the file being written by a
 * follower (follow.h), one span per entry. */
#ifndef ONNXZIP_BG_HASH_H
#define ONNXZIP_BG_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct oz_bg_hash oz_bg_hash;

/* A finished job: the entry it was for, where its local header is, its sums. */
typedef struct oz_bg_result {
    size_t entry;
    uint64_t header;
    uint32_t crc;
    uint64_t xxh3;
} oz_bg_result;

/* Starts the thread, reading back from fd (open for reading). NULL when no
 * thread or memory could be had (nothing recorded): the caller then hashes
 * as it copies. */
oz_bg_hash *oz_bg_hash_start(int fd);

/* Queues [off, off + len) of the file, for `entry` whose local header is at
 * `header`. Jobs come in increasing offset order and are hashed as
 * oz_bg_hash_ready() says their bytes are final. 0, or ONNXZIP_ENOMEM. */
int oz_bg_hash_add(oz_bg_hash *h, size_t entry, uint64_t header, uint64_t off, uint64_t len);

/* Every byte of the file before `off` is final. Never decreases. */
void oz_bg_hash_ready(oz_bg_hash *h, uint64_t off);

/* The jobs finished since the last call (with `wait`: after waiting for all
 * queued ones), in queue order; *results is owned by h, valid until the next
 * call. *pending: the local header offset of the first unfinished job, or
 * UINT64_MAX. 0, or the status of reading back (or ONNXZIP_ENOMEM), its
 * error recorded (naming the offset, not the file). */
int oz_bg_hash_collect(oz_bg_hash *h, int wait, const oz_bg_result **results, size_t *n, uint64_t *pending);

/* Every job's result, in queue order, once all are finished (after a
 * collect with `wait`); owned by h, valid until the next call. */
const oz_bg_result *oz_bg_hash_results(oz_bg_hash *h, size_t *n);

/* Stops the thread (abandoning queued jobs) and frees h. NULL is a no-op. */
void oz_bg_hash_stop(oz_bg_hash *h);

#endif

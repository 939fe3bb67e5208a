/* Transport policy, apart from libcurl: how slow a reply may be before its
 * request is given up (no byte for a while, too few bytes for a while, a
 * deadline), and how large the requests a transfer is cut into are. */
#ifndef ONNXZIP_NET_POLICY_H
#define ONNXZIP_NET_POLICY_H

#include "common/internal.h"

/* Milliseconds on a monotonic clock. */
int64_t oz_now_ms(void);

/* One attempt of one request, timed against the options' stall_timeout_ms,
 * low_speed_limit and low_speed_time_ms, and request_timeout_ms. */
typedef struct oz_pace {
    int64_t start, last, mark; /* ms: the attempt began; its last body byte came; the low-speed window began */
    int64_t head_last;         /* ms: the last header line came (0: none yet) */
    uint64_t head_got;         /* header bytes of the attempt */
    uint64_t got, at_mark;     /* body bytes of the attempt: so far; when the window began */
    uint64_t asked;            /* bytes the attempt asks for */
    int64_t deadline;          /* ms after `start` */
} oz_pace;

/* The options as the rules read them: every 0 replaced by the default
 * (onnxzip_remote_options_init()'s values, given in `d`). */
void oz_pace_options(onnxzip_remote_options *o, const onnxzip_remote_options *d);

/* An attempt asking `asked` bytes begins now. */
void oz_pace_start(oz_pace *p, uint64_t asked, const onnxzip_remote_options *o);

/* `n` body bytes arrived (any reply's). */
void oz_pace_got(oz_pace *p, size_t n);

/* A header line of `n` bytes arrived: not a stall, but the headers must
 * be complete within the stall timeout all the same. */
void oz_pace_head(oz_pace *p, size_t n);

/* 0 while the attempt keeps the rules; else ONNXZIP_ETIMEOUT, the message
 * naming `shown` (the URL as messages show it), the bytes asked (`range`,
 * as in a Range header), the rule, and the attempt (from 0). */
int oz_pace_check(oz_pace *p, const onnxzip_remote_options *o, const char *shown, const char *range,
                  unsigned attempt);

/* The chunk size of reads when the options give none; the largest that
 * oz_chunk_for() picks. */
#define OZ_CHUNK_DEFAULT ((uint64_t)8 << 20)

/* The chunk size for a transfer of `total` bytes over `parallel`
 * connections: `given` when not 0, else total / (2 x parallel) rounded up
 * to 64 KiB, within 2 MiB .. OZ_CHUNK_DEFAULT. Two rounds per connection: each has
 * work even on a small file (8 MiB chunks of 100 MB left 3 of 16 idle),
 * with room for unequal speeds, at the cost of one more round trip per
 * connection (a request waits one for its first byte: fewer, larger
 * chunks win on a distant server, more, smaller ones on a near one); at
 * least 2 MiB, which at 25 MB/s takes longer than a 50 ms round trip. */
uint64_t oz_chunk_for(uint64_t given, uint64_t total, unsigned parallel);

#endif

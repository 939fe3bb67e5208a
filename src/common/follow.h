/* A thread that reads a file back in order as its bytes become final and
 * hands them to a callback: checking (fetch's stream checker) and hashing
 * (the writer's CRC-32 and XXH3) off the thread that writes them. The file
 * is read back through the page cache: no buffer holds what was written and
 * not yet handed over, however far ahead the writer runs.
 *
 * The thread reads spans of the file, each after the one before: either one
 * span from an offset to the file's end (oz_follow_start), or the spans the
 * owner adds as it goes (oz_follow_start_spans, oz_follow_add), skipping
 * what lies between them. Bytes are read once `ready` has passed them. */
#ifndef ONNXZIP_FOLLOW_H
#define ONNXZIP_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct oz_follow oz_follow;

/* Gets the next `n` bytes of the current span, from offset `at`, in order.
 * A nonzero return (a status, its error recorded) stops the thread. */
typedef int (*oz_follow_fn)(void *ctx, const uint8_t *p, size_t n, uint64_t at);

/* After the last bytes of a span (at once for an empty one), before
 * oz_follow_wait() counts it done. Nonzero stops the thread, as above. */
typedef int (*oz_follow_end_fn)(void *ctx);

/* Starts the thread reading fd (open for reading) from `from` to its end,
 * with pread(); ENOMEM (recorded) when no thread or memory could be had. */
int oz_follow_start(oz_follow **f, int fd, uint64_t from, oz_follow_fn fn, void *ctx);

/* Starts the thread with no span to read yet: it reads those
 * oz_follow_add() gives, each through a read-only mapping where the host
 * allows one (sparing the copy out of the page cache; unmapped behind the
 * reading, so that the process's RSS stays flat), else with pread(); `end`
 * (may be NULL) after each. NULL when no thread or memory could be had,
 * nothing recorded: the caller then does the work itself. Whoever writes
 * the file must not shorten it while a span is read (a mapped page past
 * the end would raise SIGBUS). */
oz_follow *oz_follow_start_spans(int fd, oz_follow_fn fn, oz_follow_end_fn end, void *ctx);

/* Queues [off, off + len) after every span queued before (off at or past
 * their end). 0, or ONNXZIP_ENOMEM (recorded). */
int oz_follow_add(oz_follow *f, uint64_t off, uint64_t len);

/* Every byte before `off` is final. Never decreases. */
void oz_follow_ready(oz_follow *f, uint64_t off);

/* The callback's (or reading back's) status so far, without waiting: 0 while
 * all is well. Its message is recorded as this thread's error when nonzero. */
int oz_follow_status(oz_follow *f);

/* Waits until the thread has passed offset `end` (handed over the bytes
 * of the spans before it; called `end` of each span ending there) or
 * failed; its status (message recorded as this thread's error). */
int oz_follow_wait(oz_follow *f, uint64_t end);

/* Stops the thread (abandoning what it has not read) and frees f. NULL is a
 * no-op. */
void oz_follow_stop(oz_follow *f);

#endif

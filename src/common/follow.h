/* A thread that reads a file back in order as its bytes become final and
 * hands them to a callback: checking (hashing, parsing) off the thread that
 * writes them. The file is read back through the page cache: no buffer
 * holds what was written and not yet checked, however far ahead it runs. */
#ifndef ONNXZIP_FOLLOW_H
#define ONNXZIP_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct oz_follow oz_follow;

/* Gets the next `n` bytes of the file, from offset `at`, in order. A
 * nonzero return (a status, its error recorded) stops the thread. */
typedef int (*oz_follow_fn)(void *ctx, const uint8_t *p, size_t n, uint64_t at);

/* Starts the thread reading fd (open for reading) from `from` on; ENOMEM
 * (recorded) when no thread or memory could be had. */
int oz_follow_start(oz_follow **f, int fd, uint64_t from, oz_follow_fn fn, void *ctx);

/* Every byte before `off` is final. Never decreases. */
void oz_follow_ready(oz_follow *f, uint64_t off);

/* The callback's (or reading back's) status so far, without waiting: 0 while
 * all is well. Its message is recorded as this thread's error when nonzero. */
int oz_follow_status(oz_follow *f);

/* Waits until the thread has passed `end` bytes to the callback or failed;
 * its status (message recorded as this thread's error). */
int oz_follow_wait(oz_follow *f, uint64_t end);

/* Stops the thread and frees f. NULL is a no-op. */
void oz_follow_stop(oz_follow *f);

#endif

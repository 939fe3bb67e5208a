/* Transport policy (policy.h): the rules a reply's pace must keep, checked
 * by the transfer loop at least every tenth of a second, whatever libcurl
 * does (a byte now and then satisfies libcurl's own stall rule forever),
 * and the chunk size of a transfer. */
#include <stdio.h>
#include <time.h>

#include "net/policy.h"

#define PERIOD_BYTES ((uint64_t)8 << 20) /* request_timeout_ms is per this many bytes asked */
#define CHUNK_FLOOR ((uint64_t)2 << 20)
#define CHUNK_ROUND ((uint64_t)64 << 10)
#define ROUNDS 2 /* chunks per connection on a file under 256 MiB (16 connections) */

int64_t oz_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void oz_pace_options(onnxzip_remote_options *o, const onnxzip_remote_options *d)
{
    if (!o->stall_timeout_ms) o->stall_timeout_ms = d->stall_timeout_ms;
    if (!o->low_speed_limit) o->low_speed_limit = d->low_speed_limit;
    if (!o->low_speed_time_ms) o->low_speed_time_ms = d->low_speed_time_ms;
    if (!o->request_timeout_ms) o->request_timeout_ms = d->request_timeout_ms;
}

void oz_pace_start(oz_pace *p, uint64_t asked, const onnxzip_remote_options *o)
{
    uint64_t periods = asked / PERIOD_BYTES + (asked % PERIOD_BYTES != 0);
    int64_t now = oz_now_ms();
    *p = (oz_pace){ .start = now, .last = now, .mark = now, .asked = asked };
    p->deadline = (int64_t)o->request_timeout_ms * (int64_t)(periods ? periods : 1);
}

void oz_pace_got(oz_pace *p, size_t n)
{
    p->got += n;
    p->last = oz_now_ms();
}

void oz_pace_head(oz_pace *p, size_t n)
{
    p->head_got += n;
    p->head_last = oz_now_ms();
}

/* Bytes a low-speed window must bring: the rate's worth, or what the
 * attempt still asks when that is less (a small request is not slow for
 * being small). */
static uint64_t quota(const oz_pace *p, const onnxzip_remote_options *o)
{
    uint64_t q = (uint64_t)o->low_speed_limit * o->low_speed_time_ms / 1000;
    uint64_t left = p->asked > p->at_mark ? p->asked - p->at_mark : 1;
    q = q < left ? q : left;
    return q ? q : 1;
}

int oz_pace_check(oz_pace *p, const onnxzip_remote_options *o, const char *shown, const char *range,
                  unsigned attempt)
{
    int64_t now = oz_now_ms();
    if (now - p->last >= (int64_t)o->stall_timeout_ms && p->head_last > p->last &&
        now - p->head_last < (int64_t)o->stall_timeout_ms)
        return oz_err(ONNXZIP_ETIMEOUT, -1, "%s: bytes %s: the reply's headers were not complete after %u ms (the "
                      "stall timeout, which bounds them as a whole): %llu bytes of them came, too slowly (attempt %u)",
                      shown, range, o->stall_timeout_ms, (unsigned long long)p->head_got, attempt + 1);
    if (now - p->last >= (int64_t)o->stall_timeout_ms)
        return oz_err(ONNXZIP_ETIMEOUT, -1, "%s: bytes %s: no byte for %u ms (the stall timeout; attempt %u)", shown,
                      range, o->stall_timeout_ms, attempt + 1);
    if (p->got - p->at_mark >= quota(p, o)) { /* the window's bytes came: a new window */
        p->mark = now;
        p->at_mark = p->got;
    } else if (now - p->mark >= (int64_t)o->low_speed_time_ms) {
        return oz_err(ONNXZIP_ETIMEOUT, -1, "%s: bytes %s: %llu bytes in %u ms, under the low-speed limit of %u "
                      "bytes/s (attempt %u)", shown, range, (unsigned long long)(p->got - p->at_mark),
                      o->low_speed_time_ms, o->low_speed_limit, attempt + 1);
    }
    if (now - p->start >= p->deadline)
        return oz_err(ONNXZIP_ETIMEOUT, -1, "%s: bytes %s: not complete after %lld ms (the request deadline; %llu of "
                      "%llu bytes came; attempt %u)", shown, range, (long long)p->deadline,
                      (unsigned long long)p->got, (unsigned long long)p->asked, attempt + 1);
    return 0;
}

uint64_t oz_chunk_for(uint64_t given, uint64_t total, unsigned parallel)
{
    if (given) return given;
    uint64_t c = total / ((uint64_t)ROUNDS * (parallel ? parallel : 1));
    c = (c + CHUNK_ROUND - 1) / CHUNK_ROUND * CHUNK_ROUND;
    return c < CHUNK_FLOOR ? CHUNK_FLOOR : c > OZ_CHUNK_DEFAULT ? OZ_CHUNK_DEFAULT : c;
}

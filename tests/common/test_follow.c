/* The read-back follower (common/follow.h), against a file this test writes
 * piece by piece: spans handed over in order and only as `ready` passes
 * them, the bytes between spans never; each span's end reported after its
 * last bytes; the thread's failures (a file shorter than `ready`, a read
 * that fails, a callback or an end that fails) raised on the owner's thread
 * with their message, offset and errno; stop while the thread waits. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/follow.h"
#include "common/internal.h"
#include "common/sys.h"
#include "testutil.h"

#define SIZE ((uint64_t)3 << 20)
#define MAX_SPANS 128

static uint8_t pattern(uint64_t i) { return (uint8_t)(i * 2654435761u >> 13) | 1; } /* never 0 */

typedef struct span {
    uint64_t off, end;
} span;

/* What the callbacks saw: bytes copied where they were. */
typedef struct seen {
    uint8_t *got;           /* SIZE bytes, 0 where nothing was handed over */
    const span *spans;      /* those queued */
    size_t k;               /* the span being handed over */
    uint64_t next;          /* where its bytes continue */
    int out_of_order;       /* bytes elsewhere */
    uint64_t ends[MAX_SPANS]; /* `next` at each end callback */
    size_t nends;
    uint64_t fail_at;       /* the callback fails on bytes past it (0: never) */
    int fail_end;           /* the end callback fails */
} seen;

static int take(void *ctx, const uint8_t *p, size_t n, uint64_t at)
{
    seen *s = ctx;
    if (s->fail_at && at + n > s->fail_at)
        return oz_err(ONNXZIP_ECRC, (int64_t)s->fail_at, "test: byte %llu is bad", (unsigned long long)s->fail_at);
    uint64_t want = s->next == UINT64_MAX ? s->spans[s->k].off : s->next;
    s->out_of_order += at != want || at + n > s->spans[s->k].end || at + n > SIZE;
    if (at + n <= SIZE) memcpy(s->got + at, p, n);
    s->next = at + n;
    return 0;
}

static int span_end(void *ctx)
{
    seen *s = ctx;
    if (s->fail_end) return oz_err(ONNXZIP_EDIGEST, -1, "test: an end refused");
    s->ends[s->nends++] = s->next == UINT64_MAX ? s->spans[s->k].off : s->next;
    s->k++;
    s->next = UINT64_MAX;
    return 0;
}

static seen *seen_new(const span *spans)
{
    seen *s = calloc(1, sizeof *s);
    s->got = calloc(1, SIZE);
    s->spans = spans;
    s->next = UINT64_MAX;
    return s;
}

static void seen_free(seen *s)
{
    free(s->got);
    free(s);
}

/* The file's bytes [from, to), as written: 0 or -1. */
static int write_part(int fd, uint64_t from, uint64_t to)
{
    static uint8_t buf[1 << 16];
    for (uint64_t at = from; at < to;) {
        size_t n = to - at < sizeof buf ? (size_t)(to - at) : sizeof buf;
        for (size_t i = 0; i < n; i++) buf[i] = pattern(at + i);
        if (oz_sys_pwrite(fd, buf, n, (int64_t)at) != (ssize_t)n) return -1;
        at += n;
    }
    return 0;
}

/* got holds the file's bytes in [spans' bytes below `upto`], zeros elsewhere. */
static int got_is(const seen *s, const span *spans, size_t n, uint64_t upto)
{
    size_t k = 0;
    for (uint64_t i = 0; i < SIZE; i++) {
        while (k < n && spans[k].end <= i) k++;
        int in = k < n && i >= spans[k].off && i < upto;
        if (s->got[i] != (in ? pattern(i) : 0)) return 0;
    }
    return 1;
}

static int new_file(const char *dir, const char *name)
{
    int fd = oz_sys_create_at(OZ_AT_CWD, tu_path(dir, name));
    CHECK(fd >= 0);
    return fd;
}

/* Spans with gaps, an empty one and one of several pieces, followed as the
 * file is written: at each step exactly the spans' bytes below `ready`. */
static void spans_in_order(const char *dir)
{
    static const span spans[] = { { 10, 1000 }, { 1000, 1000 }, { 5000, 5000 + (5u << 19) }, { SIZE - 7, SIZE } };
    static const uint64_t steps[] = { 500, 4096, 3u << 19, SIZE };
    int fd = new_file(dir, "spans");
    seen *s = seen_new(spans);
    oz_follow *f = oz_follow_start_spans(fd, take, span_end, s);
    CHECK(f != NULL);
    if (!f) return;
    for (size_t i = 0; i < 4; i++) CHECK_RC(oz_follow_add(f, spans[i].off, spans[i].end - spans[i].off), 0);
    uint64_t written = 0;
    for (size_t i = 0; i < 4; i++) {
        CHECK(write_part(fd, written, steps[i]) == 0);
        written = steps[i];
        oz_follow_ready(f, written);
        CHECK_RC(oz_follow_wait(f, written), 0);
        CHECK(got_is(s, spans, 4, written));
    }
    CHECK(s->out_of_order == 0);
    CHECK(s->nends == 4);
    for (size_t i = 0; i < 4 && i < s->nends; i++) CHECK(s->ends[i] == spans[i].end);
    oz_follow_stop(f);
    oz_sys_close(fd);
    seen_free(s);
}

/* More spans than the queue first holds, added as the thread runs. */
static void many_spans(const char *dir)
{
    static span spans[100];
    int fd = new_file(dir, "many");
    CHECK(write_part(fd, 0, SIZE) == 0);
    seen *s = seen_new(spans);
    oz_follow *f = oz_follow_start_spans(fd, take, span_end, s);
    CHECK(f != NULL);
    if (!f) return;
    oz_follow_ready(f, SIZE);
    for (size_t i = 0; i < 100; i++) {
        spans[i] = (span){ i * 30000 + i, i * 30000 + 2 * i + 1 };
        CHECK_RC(oz_follow_add(f, spans[i].off, spans[i].end - spans[i].off), 0);
    }
    CHECK_RC(oz_follow_wait(f, spans[99].end), 0);
    CHECK(s->nends == 100 && s->out_of_order == 0);
    CHECK(got_is(s, spans, 100, SIZE));
    oz_follow_stop(f);
    oz_sys_close(fd);
    seen_free(s);
}

/* fetch's follower: from an offset to the file's end, read with pread. */
static void to_the_end(const char *dir)
{
    static const span all[] = { { 7, UINT64_MAX } };
    int fd = new_file(dir, "all");
    seen *s = seen_new(all);
    oz_follow *f = NULL;
    CHECK_RC(oz_follow_start(&f, fd, 7, take, s), 0);
    if (!f) return;
    CHECK(write_part(fd, 0, 100) == 0);
    oz_follow_ready(f, 100);
    CHECK_RC(oz_follow_wait(f, 100), 0);
    CHECK(got_is(s, all, 1, 100));
    CHECK(write_part(fd, 100, SIZE) == 0);
    oz_follow_ready(f, SIZE);
    CHECK_RC(oz_follow_wait(f, SIZE), 0);
    CHECK(got_is(s, all, 1, SIZE));
    CHECK(s->out_of_order == 0 && s->nends == 0);
    oz_follow_stop(f);
    oz_sys_close(fd);
    seen_free(s);
}

/* The last error as the owner sees it. */
static int last_is(int status, int64_t offset, const char *message)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    if (e->status == status && e->offset == offset && !strcmp(e->message, message)) return 1;
    fprintf(stderr, "  last error: %s %lld '%s'\n", onnxzip_status_name(e->status), (long long)e->offset,
            e->message);
    return 0;
}

static void failures(const char *dir)
{
    static const span all[] = { { 0, UINT64_MAX } }, one[] = { { 0, SIZE } };
    int fd = new_file(dir, "short");
    CHECK(write_part(fd, 0, SIZE) == 0);
    seen *s = seen_new(all);
    oz_follow *f = NULL;
    /* `ready` past the file's end: its bytes cannot be read back */
    CHECK_RC(oz_follow_start(&f, fd, 0, take, s), 0);
    oz_follow_ready(f, SIZE + 10);
    CHECK_RC(oz_follow_wait(f, SIZE + 10), ONNXZIP_EIO);
    CHECK(last_is(ONNXZIP_EIO, (int64_t)SIZE, "cannot read back offset 3145728: the file is shorter than written"));
    CHECK(onnxzip_last_error()->sys_errno == 0);
    CHECK_RC(oz_follow_status(f), ONNXZIP_EIO);
    oz_follow_stop(f);
    seen_free(s);

    /* the callback's failure, with its own message and offset */
    s = seen_new(one);
    s->fail_at = 2u << 20;
    f = oz_follow_start_spans(fd, take, span_end, s);
    CHECK(f != NULL);
    CHECK_RC(oz_follow_add(f, 0, SIZE), 0);
    oz_follow_ready(f, SIZE);
    CHECK_RC(oz_follow_wait(f, SIZE), ONNXZIP_ECRC);
    CHECK(last_is(ONNXZIP_ECRC, 2 << 20, "test: byte 2097152 is bad"));
    CHECK_RC(oz_follow_status(f), ONNXZIP_ECRC);
    oz_follow_stop(f);
    seen_free(s);

    /* the end callback's */
    s = seen_new(one);
    s->fail_end = 1;
    f = oz_follow_start_spans(fd, take, span_end, s);
    CHECK_RC(oz_follow_add(f, 0, SIZE), 0);
    oz_follow_ready(f, SIZE);
    CHECK_RC(oz_follow_wait(f, SIZE), ONNXZIP_EDIGEST);
    CHECK(last_is(ONNXZIP_EDIGEST, -1, "test: an end refused"));
    oz_follow_stop(f);
    seen_free(s);
    oz_sys_close(fd);

#ifndef _WIN32
    /* a read that fails: its errno kept (a directory cannot be read) */
    int dfd = oz_sys_dir_fd(dir);
    CHECK(dfd >= 0);
    s = seen_new(all);
    CHECK_RC(oz_follow_start(&f, dfd, 0, take, s), 0);
    oz_follow_ready(f, 10);
    CHECK_RC(oz_follow_wait(f, 10), ONNXZIP_EIO);
    CHECK(onnxzip_last_error()->sys_errno == EISDIR);
    CHECK(!strncmp(onnxzip_last_error()->message, "cannot read back offset 0: ", 27));
    oz_follow_stop(f);
    seen_free(s);
    oz_sys_close(dfd);
#endif
}

/* Stopped while it waits for bytes, or for spans: it returns. */
static void stop_waiting(const char *dir)
{
    static const span one[] = { { 0, 100 } };
    int fd = new_file(dir, "stop");
    seen *s = seen_new(one);
    oz_follow *f = oz_follow_start_spans(fd, take, span_end, s);
    CHECK(f != NULL);
    oz_follow_stop(f);
    f = oz_follow_start_spans(fd, take, span_end, s);
    CHECK_RC(oz_follow_add(f, 0, 100), 0);
    oz_follow_stop(f);
    CHECK(s->nends == 0);
    oz_follow_stop(NULL);
    oz_sys_close(fd);
    seen_free(s);
}

int main(void)
{
    char *dir = tu_tmpdir();
    spans_in_order(dir);
    many_spans(dir);
    to_the_end(dir);
    failures(dir);
    stop_waiting(dir);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("follow");
}

/* The byte-source interface's common operations (source.h). */
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "common/source.h"

const uint8_t *oz_source_window(const oz_source *s)
{
    return s->map ? s->map : s->win;
}

int oz_source_widen(oz_source *s, uint64_t from)
{
    if (s->map || from >= s->win_off) return 0;
    uint64_t more = s->win_off - from, have = s->size - s->win_off;
    if (s->size - from > SIZE_MAX)
        return oz_err(ONNXZIP_ELIMIT, (int64_t)from, "%s: %llu bytes from offset %llu do not fit in memory here",
                      s->name, (unsigned long long)(s->size - from), (unsigned long long)from);
    uint8_t *w = malloc((size_t)(s->size - from));
    if (!w)
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (%llu bytes)", s->name,
                      (unsigned long long)(s->size - from));
    if (have) memcpy(w + more, s->win, (size_t)have);
    int rc = s->ops->read(s, from, (size_t)more, w);
    if (rc) {
        free(w);
        return rc;
    }
    free(s->win);
    s->win = w;
    s->win_off = from;
    return 0;
}

int oz_source_readv(oz_source *s, const oz_range *r, size_t n)
{
    if (s->ops->readv) return s->ops->readv(s, r, n);
    for (size_t j = 0; j < n; j++) {
        int rc = s->ops->read(s, r[j].off, (size_t)r[j].len, r[j].dst);
        if (rc) return rc;
    }
    return 0;
}

int oz_source_read_spans(oz_source *s, const oz_file_span *sp, size_t n, uint8_t *dst)
{
    oz_range *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (reading)", s->name);
    for (size_t j = 0; j < n; dst += sp[j].to - sp[j].from, j++)
        r[j] = (oz_range){ sp[j].from, sp[j].to - sp[j].from, dst };
    int rc = oz_source_readv(s, r, n);
    free(r);
    return rc;
}

#define STREAM_PIECE ((size_t)1 << 20)

int oz_source_stream(oz_source *s, uint64_t from, oz_sink_fn sink, void *ctx)
{
    if (s->ops->stream) return s->ops->stream(s, from, sink, ctx);
    uint8_t *buf = s->map ? NULL : malloc(STREAM_PIECE);
    if (!s->map && !buf) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory (reading)", s->name);
    int rc = 0;
    for (uint64_t at = from; at < s->size && !rc;) {
        size_t n = s->size - at < STREAM_PIECE ? (size_t)(s->size - at) : STREAM_PIECE;
        const uint8_t *p = s->map ? s->map + at : buf;
        if (!s->map) rc = s->ops->read(s, at, n, buf);
        if (!rc) rc = sink(ctx, p, n, at);
        at += n;
    }
    free(buf);
    return rc;
}

void oz_source_free(oz_source *s)
{
    if (!s) return;
    if (s->ops && s->ops->free) s->ops->free(s);
    free(s->win);
    memset(s, 0, sizeof *s);
}

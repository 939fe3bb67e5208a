/* The zip reader's state while it parses, shared by its two files:
 * zip_reader.c (end records, central directory, names, layout) and
 * zip_local.c (local headers: checked, or predicted for a remote archive).
 * Private to them; the rest of the library uses read/zip_reader.h. */
#ifndef ONNXZIP_ZIP_PARSE_H
#define ONNXZIP_ZIP_PARSE_H

#include "common/entry_name.h"
#include "read/zip_reader.h"

typedef struct oz_zip_ctx {
    const uint8_t *base; /* the bytes from file offset win_off to size */
    uint64_t win_off;
    uint64_t size;
    const char *path;
    oz_zip *z;
    uint64_t n_entries, cd_offset, cd_size, cd_end; /* cd_end: where EOCD records begin */
    oz_source *src;     /* NULL, or the source whose read() brings local headers (src->read_headers) */
    uint8_t *lbuf;      /* read() buffer for local headers */
    size_t lcap;
    int deferred;       /* remote: only the model's local header is at hand */
    int needs;          /* a record lies before the window, */
    uint64_t need;      /* from here on */
    char shown[OZ_PRINTABLE_CAP]; /* an entry name made printable, for one message */
} ctx;

/* The byte at file offset `off`, which the caller knows lies in the window. */
static inline const uint8_t *at(const ctx *c, uint64_t off)
{
    return c->base + (off - c->win_off);
}

/* Whether offset `off` lies in the window; when not, notes that the window
 * must start there (oz_zip_locate() then asks for those bytes). */
static inline int in_window(ctx *c, uint64_t off)
{
    if (off >= c->win_off) return 1;
    if (!c->needs++ || off < c->need) c->need = off;
    return 0;
}

/* Entry names are made printable only when a message needs one. */
static inline const char *show(ctx *c, const void *name, size_t n)
{
    return oz_printable(name, n, c->shown, sizeof c->shown);
}

#define SHOWN show(c, ze->pub.name, ze->name_len)

/* Not an error of the file: its bytes before the window are needed. */
int oz_zip_need_more(ctx *c);

typedef struct extras {
    int has_zip64, has_align, has_digest;
    const uint8_t *zip64; const char *fault; /* fault: a Unicode Path field not the name's (spec 7.3) */
    uint16_t zip64_len;
    uint32_t align;
    uint8_t digest_version, digest_algo;
    uint64_t digest;
} extras;

/* Walks the extra-field area of entry `name` (NULL: unchecked): framing
 * must be exact, known fields unique. Returns 0, -1 for bad framing, a
 * duplicate field or x->fault, -2 for a duplicate zip64 field (a zip64
 * error of its own in the spec). */
int oz_zip_extras(const uint8_t *p, uint16_t len, const char *name, size_t nlen, extras *x);

/* An error kept aside, to be raised in its turn. */
typedef struct saved_err {
    int status;
    int64_t offset;
    char msg[512];
} saved_err;

/* Keeps the last error (of status `status`) aside. */
void oz_zip_save_err(saved_err *s, int status);

/* The entry that ends an archive: its model, or a package's manifest. */
int oz_zip_is_last_kind(const char *name, size_t len);

/* zip_local.c: local headers of entries [0, n); *failed: the first that
 * fails (n if none), its error in *err. */
void oz_zip_check_locals(ctx *c, size_t n, size_t *failed, saved_err *err);

#endif

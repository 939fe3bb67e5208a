/* What a zip the reader refused is, for its user: cut short, a zip of
 * something else, or another tool's ONNX model zip (see zip_diagnose.h).
 * Runs only after a failure; reads headers only, leniently: it judges
 * files the strict reader already refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/entry_name.h"
#include "common/internal.h"
#include "common/zip_format.h"
#include "read/zip_diagnose.h"

static const uint8_t *at(const oz_zip_dx *d, uint64_t off)
{
    return d->base + (off - d->win_off);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The data of extra field `id` in the `len` bytes at `p` (its size in
 * *n), or NULL; framing errors end the search. */
static const uint8_t *find_extra(const uint8_t *p, uint64_t len, uint16_t id, uint16_t *n)
{
    for (uint64_t i = 0; len - i >= 4;) {
        uint16_t k = oz_rd16(p + i), m = oz_rd16(p + i + 2);
        if (m > len - i - 4) return NULL;
        if (k == id) {
            *n = m;
            return p + i + 4;
        }
        i += 4u + m;
    }
    return NULL;
}

/* ---- a truncated archive: local headers, no end records ---------------- */

/* The file's bytes as the truncation check walks them: the window, and
 * before it (a source whose window is its tail) what `src` reads. */
typedef struct walker {
    const oz_zip_dx *d;
    oz_source *src;   /* NULL: the window is the whole file */
    uint8_t *buf;     /* ZIP_LOCAL_SIZE + 2 * 65535 bytes: a local header with its name and extra */
    int status;       /* a failed read's (its error recorded); the walk then stops */
} walker;

#define WALK_BUF (ZIP_LOCAL_SIZE + 2 * 65535u)

/* `n` (<= WALK_BUF) bytes at `off`, off + n <= size: in the window, else
 * read into w->buf; NULL after a failed read. */
static const uint8_t *bytes_at(walker *w, uint64_t off, size_t n)
{
    if (off >= w->d->win_off) return at(w->d, off);
    if (w->status || (w->status = w->src->ops->read(w->src, off, n, w->buf))) return NULL;
    return w->buf;
}

/* Does the signature `sig` begin at `pos` (4 bytes there)? */
static int sig_at(walker *w, uint64_t pos, uint32_t sig)
{
    const uint8_t *p = w->d->size - pos >= 4 ? bytes_at(w, pos, 4) : NULL;
    return p && oz_rd32(p) == sig;
}

/* The local header at `pos` (`avail` bytes from there to the file's end):
 * its length and its data's (compressed) size, 0 when a data descriptor
 * gives it after; its name's length in *nlen, its flags in *flags. -1 when
 * its bytes could not be read. */
static int local_sizes(walker *w, uint64_t pos, uint64_t avail, uint64_t *hdr, uint64_t *data, uint64_t *nlen,
                       uint16_t *flags)
{
    const uint8_t *h = bytes_at(w, pos, ZIP_LOCAL_SIZE);
    if (!h) return -1;
    uint64_t elen = oz_rd16(h + LH_EXTRALEN);
    *nlen = oz_rd16(h + LH_NAMELEN);
    *flags = oz_rd16(h + LH_FLAGS);
    *hdr = ZIP_LOCAL_SIZE + *nlen + elen;
    *data = oz_rd32(h + LH_CSIZE);
    if (*data != U32_MARK || *hdr > avail) return 0;
    if (!(h = bytes_at(w, pos, (size_t)*hdr))) return -1;
    uint16_t n = 0;
    const uint8_t *z64 = find_extra(h + ZIP_LOCAL_SIZE + *nlen, elen, EF_ZIP64, &n);
    if (z64 && n >= 16) *data = oz_rd64(z64 + 8);
    return 0;
}

/* Central records from `*pos` on, as far as the file goes: *pos moves past
 * the whole ones; returns how many were seen (a cut one included, its
 * length then added to *need). */
static uint64_t walk_central(walker *w, uint64_t *pos, uint64_t *need)
{
    const oz_zip_dx *d = w->d;
    uint64_t k = 0;
    while (sig_at(w, *pos, ZIP_CENTRAL_SIG) && k < OZ_MAX_ENTRIES) {
        k++;
        if (d->size - *pos < ZIP_CENTRAL_SIZE) {
            *need = ZIP_CENTRAL_SIZE;
            break;
        }
        const uint8_t *h = bytes_at(w, *pos, ZIP_CENTRAL_SIZE);
        if (!h) break;
        uint64_t len = ZIP_CENTRAL_SIZE + (uint64_t)oz_rd16(h + CH_NAMELEN) + oz_rd16(h + CH_EXTRALEN) +
                       oz_rd16(h + CH_COMMENTLEN);
        if (d->size - *pos < len) {
            *need = len;
            break;
        }
        *pos += len;
    }
    return k;
}

/* The least length of the zip64 end record and locator that begin at
 * `pos` (a zip64 archive's, between its central directory and its end
 * record); 0 when neither begins there. */
static uint64_t zip64_ends(walker *w, uint64_t pos)
{
    if (sig_at(w, pos, ZIP64_EOCD_SIG)) return ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE;
    return sig_at(w, pos, ZIP64_LOCATOR_SIG) ? ZIP64_LOCATOR_SIZE : 0;
}

/* The least size the local headers from offset 0 on (and any central
 * records after them) imply: each entry's header and data, a central
 * record of at least 46 bytes and its name per entry, the zip64 end
 * records when they begin after the central directory, the end record. */
static uint64_t implied_size(walker *w)
{
    const oz_zip_dx *d = w->d;
    uint64_t pos = 0, need = 0, central = 0, n = 0;
    while (n < OZ_MAX_ENTRIES && sig_at(w, pos, ZIP_LOCAL_SIG)) {
        n++;
        uint64_t avail = d->size - pos, hdr, data, nlen;
        uint16_t flags;
        if (avail < ZIP_LOCAL_SIZE) {
            need = ZIP_LOCAL_SIZE;
            central += ZIP_CENTRAL_SIZE;
            break;
        }
        if (local_sizes(w, pos, avail, &hdr, &data, &nlen, &flags)) break;
        central += ZIP_CENTRAL_SIZE + nlen;
        if (hdr > avail || data > avail - hdr) {
            need = add_sat(hdr, data);
            break;
        }
        pos += hdr + data;
        if (flags & FLAG_DATA_DESCRIPTOR) break; /* where the next header is is unsure */
    }
    if (!need && n) {
        uint64_t k = walk_central(w, &pos, &need); /* what of the central directory is there */
        if (k) central = n > k ? (n - k) * ZIP_CENTRAL_SIZE : 0;
        if (!need && n <= k) need = zip64_ends(w, pos);
    }
    return add_sat(add_sat(pos, need), add_sat(central, ZIP_EOCD_SIZE));
}

static int truncated(const oz_zip_dx *d, oz_source *src, int rc)
{
    if (rc != ONNXZIP_ENOTZIP || d->have_cd || (d->win_off && !src)) return rc;
    walker w = { d, d->win_off ? src : NULL, NULL, 0 };
    if (w.src && !(w.buf = malloc(WALK_BUF))) return rc;
    const uint8_t *head = d->size ? bytes_at(&w, 0, d->size < 4 ? (size_t)d->size : 4) : NULL;
    uint64_t least = head && oz_zip_starts_with(head, d->size < 4 ? d->size : 4, ZIP_LOCAL_SIG) ? implied_size(&w) : 0;
    free(w.buf);
    if (w.status) return w.status; /* a byte it needed could not be read: the open could not finish */
    if (least <= d->size) return rc; /* not a zip's start, or no sign of a cut: something else follows the entries */
    return oz_err(ONNXZIP_ETRUNC, (int64_t)d->size, "%s: truncated: %llu bytes, but its local headers describe at "
                  "least %llu bytes (no end of central directory record); the download or copy was cut short",
                  d->path, (unsigned long long)d->size, (unsigned long long)least);
}

/* ---- a zip of another kind: its central directory --------------------- */

typedef struct census {
    uint64_t n;
    int64_t model;                /* index of the model entry (oz_foreign_model_name); -1: none */
    int spelling;                 /* its spelling: 1 __MODEL_PROTO, 2 __MODEL_PROTO.onnx */
    size_t dir;                   /* the length of its directory prefix */
    int64_t compressed, descriptor; /* first entry with method != 0, with a data descriptor; -1: none */
    uint16_t method;              /* the compressed one's */
    uint64_t digests, encrypted;  /* entries with a 0x5A4F field; encrypted entries */
    uint64_t models;              /* entries named as a model (more than one: the reader's error stands) */
    uint64_t manifests;           /* entries named __PACKAGE: a package's (spec 19), whose errors stand */
    char first[OZ_PRINTABLE_CAP], comp_name[OZ_PRINTABLE_CAP], desc_name[OZ_PRINTABLE_CAP];
    char model_name[OZ_PRINTABLE_CAP];
} census;

static void count_entry(census *s, uint64_t i, const uint8_t *h)
{
    uint64_t nlen = oz_rd16(h + CH_NAMELEN);
    const uint8_t *name = h + ZIP_CENTRAL_SIZE;
    uint16_t flags = oz_rd16(h + CH_FLAGS), method = oz_rd16(h + CH_METHOD), dn;
    size_t dir;
    int spelling = oz_foreign_model_name((const char *)name, nlen, &dir);
    if (i == 0) oz_printable(name, nlen, s->first, sizeof s->first);
    if (nlen == sizeof "__PACKAGE" - 1 && !memcmp(name, "__PACKAGE", nlen)) s->manifests++;
    if (spelling && !s->models++) {
        s->model = (int64_t)i;
        s->spelling = spelling;
        s->dir = dir;
        oz_printable(name, nlen, s->model_name, sizeof s->model_name);
    }
    if (method && s->compressed < 0) {
        s->compressed = (int64_t)i;
        s->method = method;
        oz_printable(name, nlen, s->comp_name, sizeof s->comp_name);
    }
    if ((flags & FLAG_DATA_DESCRIPTOR) && s->descriptor < 0) {
        s->descriptor = (int64_t)i;
        oz_printable(name, nlen, s->desc_name, sizeof s->desc_name);
    }
    if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) s->encrypted++;
    if (find_extra(name + nlen, oz_rd16(h + CH_EXTRALEN), EF_DIGEST, &dn)) s->digests++;
}

/* Walks every central record; -1 when they are not all well framed. */
static int take_census(const oz_zip_dx *d, census *s)
{
    memset(s, 0, sizeof *s);
    s->model = s->compressed = s->descriptor = -1;
    if (!d->have_cd || d->cd_offset < d->win_off) return -1;
    uint64_t pos = d->cd_offset, stop = d->cd_offset + d->cd_size;
    for (uint64_t i = 0; i < d->n_entries; i++) {
        if (stop - pos < ZIP_CENTRAL_SIZE || oz_rd32(at(d, pos)) != ZIP_CENTRAL_SIG) return -1;
        const uint8_t *h = at(d, pos);
        uint64_t len = ZIP_CENTRAL_SIZE + (uint64_t)oz_rd16(h + CH_NAMELEN) + oz_rd16(h + CH_EXTRALEN) +
                       oz_rd16(h + CH_COMMENTLEN);
        if (stop - pos < len) return -1;
        count_entry(s, i, h);
        pos += len;
    }
    s->n = d->n_entries;
    return 0;
}

/* Statuses an intact zip of other content or layout gets: a rule of the
 * onnxzip layout, not damage to the zip. */
static int layout_status(int rc)
{
    return rc == ONNXZIP_ENOTONNXZIP || rc == ONNXZIP_EMETHOD || rc == ONNXZIP_EFLAGS || rc == ONNXZIP_EALIGN ||
           rc == ONNXZIP_ENAME || rc == ONNXZIP_EDUPNAME || rc == ONNXZIP_ELIMIT || rc == ONNXZIP_EMODELPOS ||
           rc == ONNXZIP_EOVERLAP;
}

int oz_err_no_model(const char *path, uint64_t n, const char *first)
{
    if (!n)
        return oz_err(ONNXZIP_ENOTONNXZIP, -1, "%s: a zip archive, but not an onnxzip archive: it has no "
                      "__MODEL_PROTO entry (an empty zip: no entries)", path);
    return oz_err(ONNXZIP_ENOTONNXZIP, -1, "%s: a zip archive, but not an onnxzip archive: it has no __MODEL_PROTO "
                  "entry (%llu entr%s, e.g. '%s')", path, (unsigned long long)n, n == 1 ? "y" : "ies", first);
}

static int not_onnxzip(const oz_zip_dx *d, const census *s)
{
    return oz_err_no_model(d->path, s->n, s->first);
}

/* The reader's own message without its leading "PATH: ". */
static const char *reason_of(const oz_zip_dx *d, char *buf, size_t cap)
{
    const char *m = onnxzip_last_error()->message;
    size_t n = strlen(d->path);
    if (!strncmp(m, d->path, n) && m[n] == ':' && m[n + 1] == ' ') m += n + 2;
    snprintf(buf, cap, "%s", m);
    return buf;
}

/* Which tool's zip it is, by its model entry's name and place (spec
 * section 18): tf2onnx names it __MODEL_PROTO.onnx; PyTorch's ZIP_ARCHIVE
 * export wrote __MODEL_PROTO first. Empty when neither says. */
static void layout_of(const census *s, char *buf, size_t cap)
{
    const char *tool = NULL;
    if (s->dir) tool = "an ONNX model zip of a whole directory";
    else if (s->spelling == 2) tool = "a tf2onnx large-model zip";
    else if (s->model == 0 && s->n > 1)
        tool = s->compressed >= 0 ? "a PyTorch COMPRESSED_ZIP_ARCHIVE export" : "a PyTorch ZIP_ARCHIVE export";
    if (!tool) *buf = '\0';
    else snprintf(buf, cap, ": %s (model entry '%s', entry %llu of %llu)", tool, s->model_name,
                  (unsigned long long)s->model + 1, (unsigned long long)s->n);
}

static int foreign(const oz_zip_dx *d, const census *s, int rc)
{
    char why[640], what[OZ_PRINTABLE_CAP + 160];
    int status = rc;
    if (s->spelling != 1 || s->dir) {
        status = ONNXZIP_ENOTONNXZIP;
        snprintf(why, sizeof why, "its model entry is named '%s'%s, not '" OZ_MODEL_NAME "'", s->model_name,
                 s->spelling == 2 ? " (as tf2onnx names it)" : "");
    } else if (s->compressed >= 0) {
        status = ONNXZIP_EMETHOD;
        if (s->method == 8) snprintf(why, sizeof why, "entry '%s' is deflated", s->comp_name);
        else snprintf(why, sizeof why, "entry '%s' is compressed (method %u)", s->comp_name, s->method);
    } else if (s->descriptor >= 0) {
        status = ONNXZIP_EFLAGS;
        snprintf(why, sizeof why, "entry '%s' has a data descriptor (its sizes follow its data)", s->desc_name);
    } else if ((uint64_t)s->model != s->n - 1) {
        status = ONNXZIP_EMODELPOS;
        snprintf(why, sizeof why, OZ_MODEL_NAME " is entry %llu of %llu, not the last",
                 (unsigned long long)s->model + 1, (unsigned long long)s->n);
    } else if (rc == ONNXZIP_EALIGN || rc == ONNXZIP_EOVERLAP || rc == ONNXZIP_EMODELPOS || rc == ONNXZIP_ENAME) {
        reason_of(d, why, sizeof why); /* ENAME: tensor names as entry names; repack maps them */
    } else {
        return rc; /* e.g. a name repack cannot carry over either: the reader's message says it */
    }
    layout_of(s, what, sizeof what);
    const char *lead = "an ONNX model zip written by another tool (or re-zipped), not an onnxzip archive as is";
    const char *marks = s->digests ? "" : " (no entry has onnxzip's digest field)";
    return oz_err(status, -1, "%s: %s%s%s: %s; convert it with: onnxzip repack %s -o OUT.onnxzip", d->path, lead,
                  marks, what, why, d->path);
}

int oz_zip_diagnose_source(const oz_zip_dx *d, oz_source *src, int rc)
{
    return truncated(d, src, rc);
}

int oz_zip_diagnose(const oz_zip_dx *d, int rc)
{
    if (!d->have_cd) return truncated(d, NULL, rc);
    census s;
    if (!layout_status(rc) || take_census(d, &s)) return rc;
    if (s.manifests) return rc; /* a package: the reader's error names its rule (EMODELPOS, EALIGN, ENAME...) */
    if (s.model < 0) return not_onnxzip(d, &s);
    if (s.encrypted || s.models > 1) return rc; /* repack cannot read it either; a damaged archive */
    return foreign(d, &s, rc);
}

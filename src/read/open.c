/* The one open sequence of an archive over its byte source (archive.h:
 * oz_open_zip): onnxzip_open*() on a mapping, onnxzip_open_url() on a URL
 * and onnxzip_open_source() on a host's reads all come through here. */
#include <stdio.h>
#include <stdlib.h>

#include "read/archive.h"
#include "read/source_read.h"
#include "read/pins.h"
#include "read/zip_diagnose.h"
#include "read/stream_check.h"

int oz_span_check(uint64_t from, uint64_t size, const char *shown)
{
    if (size - from > OZ_MAX_MODEL + ((uint64_t)1 << 30))
        return oz_err(ONNXZIP_ELIMIT, (int64_t)from, "%s: the model, central directory and end records span %llu "
                      "bytes: more than a model (2 GiB) and its directory can be", shown,
                      (unsigned long long)(size - from));
    return 0;
}

/* ONNXZIP_ENOTZIP of a source seen through its tail: one that reads any
 * byte (a host's reads of a file, a Blob, bytes) is judged as a mapped
 * file is (a cut file is ONNXZIP_ETRUNC; else the reader's message); of
 * one that does not (a URL), only the window was seen. */
static int not_zip(onnxzip_archive *a, int rc)
{
    oz_source *s = &a->src;
    if (s->read_headers) {
        oz_zip_dx d = { .base = oz_source_window(s), .win_off = s->win_off, .size = s->size, .path = a->path };
        return oz_zip_diagnose_source(&d, s, rc);
    }
    return oz_err(rc, -1, "%s: not a zip archive (no end of central directory record in its last %llu bytes); "
                  "only onnxzip archives are read from a URL or a host's reads", a->path,
                  (unsigned long long)(s->size - s->win_off));
}

/* Parses the zip structure from the window, widening it as the records
 * require: at most two more reads (the directory and the model's header
 * when the model record was found in the tail, else the directory, then
 * the model). The model's bytes must end up in the window (it is copied
 * out of it). */
static int parse(onnxzip_archive *a, uint64_t *need)
{
    oz_source *s = &a->src;
    for (int round = 0;; round++) {
        uint64_t want = 0;
        int rc = oz_zip_parse(&a->zip, s, a->path, &want);
        if (!rc) {
            if ((want = a->zip.entries[a->zip.model_index].pub.header_offset) >= s->win_off) return 0;
            oz_zip_free(&a->zip);
        } else if (rc != 1) {
            return rc == ONNXZIP_ENOTZIP && !s->map ? not_zip(a, rc) : rc;
        }
        if (want >= s->win_off)
            return oz_err(ONNXZIP_ECDIR, -1, "%s: inconsistent end records (internal: need %llu)", a->path,
                          (unsigned long long)want);
        if ((rc = oz_span_check(want, s->size, a->path))) return rc;
        if (round == 2)
            return oz_err(ONNXZIP_ECDIR, -1, "%s: the central directory does not lead to the model's local header",
                          a->path);
        if (s->widen_by_caller) {
            *need = want;
            return 1;
        }
        if ((rc = oz_source_widen(s, want))) return rc;
    }
}

/* Entry m's bytes at d, when they came over a network (a URL; a host that
 * defers local headers, as JavaScript's URLs): checked against its CRC-32
 * and XXH3 at open, since a changed model or manifest would be used and
 * handed on as this archive's. A local file's are checked by verify, as
 * the rest of its bytes (the same verdicts as onnxzip_open()). */
static int check_remote(const onnxzip_archive *a, const oz_zentry *m, const uint8_t *d)
{
    return a->src.defer_headers ? oz_entry_check_data(m, a->path, d) : 0;
}

/* A package: its manifest (the last entry, in the window) read, the model
 * asked for selected as the zip's model; none for ONNXZIP_MODEL_NONE. */
static int open_package(onnxzip_archive *a)
{
    const oz_source *s = &a->src;
    const oz_zentry *m = &a->zip.entries[a->zip.model_index];
    const uint8_t *manifest = oz_source_window(s) + (m->pub.data_offset - s->win_off);
    int rc = check_remote(a, m, manifest);
    if (!rc) rc = oz_package_parse(&a->pkg, &a->zip, manifest, (size_t)m->pub.size, a->path);
    if (rc || (a->want_model && !*a->want_model)) return rc;
    return oz_package_select(&a->pkg, &a->zip, a->want_model, a->path);
}

/* A host's model entry before the window: its local header and bytes in
 * one read, the one range the host fetches (not every later model's, as a
 * window widened down to it would), the header checked. */
static int read_model_entry(onnxzip_archive *a)
{
    const oz_zentry *m = &a->zip.entries[a->zip.model_index];
    size_t hlen = (size_t)(m->pub.data_offset - m->pub.header_offset);
    uint8_t *buf = malloc(hlen + a->model_len);
    if (!buf) return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for the model (%zu bytes)", a->path, a->model_len);
    int rc = a->src.ops->read(&a->src, m->pub.header_offset, hlen + a->model_len, buf);
    if (!rc) rc = oz_entry_check_header(a, a->zip.model_index, buf);
    if (!rc) rc = check_remote(a, m, buf + hlen);
    if (!rc) memcpy(a->model_copy, buf + hlen, a->model_len);
    free(buf);
    return rc;
}

/* The model's bytes, copied: an in-place update may later truncate the
 * region they lie in (spec 15.5); weights never move and stay mapped. A
 * package's model may lie before the window: read by itself then, its
 * local header checked (a remote open transfers no other model). A remote
 * model's CRC-32 and XXH3 are checked as well, from the bytes read. */
static int copy_model(onnxzip_archive *a, uint64_t *need)
{
    const oz_source *s = &a->src;
    const oz_zentry *m = &a->zip.entries[a->zip.model_index];
    a->model_len = (size_t)m->pub.size;
    if (!(a->model_copy = malloc(a->model_len ? a->model_len : 1)))
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for the model (%zu bytes)", a->path, a->model_len);
    a->model = a->model_copy;
    if (m->pub.header_offset >= s->win_off) {
        memcpy(a->model_copy, oz_source_window(s) + (m->pub.data_offset - s->win_off), a->model_len);
        int rc = a->checked ? oz_entry_check_header(a, a->zip.model_index,
                                                    oz_source_window(s) + (m->pub.header_offset - s->win_off)) : 0;
        return rc ? rc : check_remote(a, m, a->model_copy);
    }
    if (s->widen_by_caller && !s->read_model) {
        *need = m->pub.header_offset;
        return 1;
    }
    return s->read_model ? read_model_entry(a) : oz_entry_read(a, a->zip.model_index, 0, a->model_len, a->model_copy);
}

int oz_open_zip(onnxzip_archive *a, uint64_t *need)
{
    int rc = parse(a, need);
    if (rc) return rc;
    const oz_source *s = &a->src;
    if (s->defer_headers) {
        if (!(a->checked = calloc(a->zip.n ? a->zip.n : 1, sizeof *a->checked)))
            return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        atomic_store(&a->checked[a->zip.model_index], 1); /* parse checked the last entry's */
    }
    if (!s->map && (rc = oz_pins_alloc(a))) return rc;
    a->layout = ONNXZIP_LAYOUT_ARCHIVE;
    if (a->zip.package) {
        if ((rc = open_package(a))) return rc;
        if (a->want_model && !*a->want_model) { /* ONNXZIP_MODEL_NONE: its members only, no model */
            a->model = (const uint8_t *)"";
            return 0;
        }
    } else if (a->want_model && *a->want_model) {
        return oz_err(ONNXZIP_EINVAL, -1, "%s: model '%s' asked for, but this is a single-model archive, not a "
                      "package", a->path, a->want_model);
    }
    if ((rc = copy_model(a, need))) return rc;
    const oz_zentry *m = &a->zip.entries[a->zip.model_index];
    if (s->map)
        return oz_tensors_build_archive(&a->tensors, &a->zip, s->map, a->model, a->model_len, m->pub.data_offset,
                                        a->path);
    return oz_tensors_build_remote(&a->tensors, &a->zip, a->model, a->model_len, m->pub.data_offset, a->path);
}

int oz_entry_check_header(onnxzip_archive *a, size_t i, const uint8_t *h)
{
    const oz_zentry *e = &a->zip.entries[i];
    if (!a->checked || atomic_load(&a->checked[i])) return 0;
    int rc = oz_zip_check_local(&a->zip, i, h, (size_t)(e->pub.data_offset - e->pub.header_offset), a->path, NULL);
    if (!rc) atomic_store(&a->checked[i], 1);
    return rc;
}

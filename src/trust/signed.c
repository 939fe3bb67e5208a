/* onnxzip_signed_open() / _check(): a package's signature verified, its
 * file names checked against the statement at open, its files' bytes on
 * demand (each once). */
#include <errno.h>
#include <stdio.h>

#include "common/internal.h"
#include "convert/plan_sha256.h"
#include "read/pins.h"
#include "trust/crypto.h"
#include "trust/json.h"
#include "trust/statement.h"
#include "trust/trust.h"

#define OZ_SIGNATURE_FILE "model.sig"

struct onnxzip_signed {
    oz_statement st;
    onnxzip_file_plan *plan;    /* every file of the package's folder */
    const oz_resource **res;    /* the resources of each planned file in turn (its one, or its shards) */
    size_t *first, *count;      /* per planned file: where its resources start in res, how many */
    uint8_t *ignored;           /* per planned file: left out by ignore_paths */
    uint8_t *checked;           /* per planned file: its digests found equal */
    int own_signature;          /* the signature read is the package's model.sig */
    int names_only;             /* plan: names only (onnxzip_file_plan_names), each check plans its files */
    char *archive;              /* names the package in messages */
};

/* The signature's bytes: t's detached one, else the package's model.sig
 * (into *own). */
static int signature_bytes(onnxzip_archive *a, const onnxzip_trust *t, const char *arc, const uint8_t **p,
                           size_t *n, uint8_t **own, char *what, size_t cap)
{
    if (t->signature) {
        snprintf(what, cap, "%s: the detached signature", arc);
        *p = t->signature;
        *n = t->signature_len;
        return 0;
    }
    if (!onnxzip_member_count(a))
        return oz_err(ONNXZIP_EUNSIGNED, -1, "%s: no signature given: a single-model archive cannot hold its own "
                      "signature; give its detached signature", arc);
    const onnxzip_member *m = onnxzip_find_member(a, OZ_SIGNATURE_FILE);
    if (!m)
        return oz_err(ONNXZIP_EUNSIGNED, -1, "%s: the package is not signed: it has no " OZ_SIGNATURE_FILE
                      " and no detached signature was given", arc);
    snprintf(what, cap, "%s: " OZ_SIGNATURE_FILE, arc);
    if (m->kind != ONNXZIP_MEMBER_FILE)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s is a model, not a signature", what);
    if (m->size > OZ_BUNDLE_MAX)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: %llu bytes, over the %zu MiB a signature may have", what,
                      (unsigned long long)m->size, OZ_BUNDLE_MAX >> 20);
    if (!(*own = malloc(m->size ? (size_t)m->size : 1))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    *p = *own;
    *n = (size_t)m->size;
    return onnxzip_member_read(a, m, 0, m->size, *own);
}

/* The statement of the signature `t` trusts, verified. */
static int verified_statement(onnxzip_archive *a, const onnxzip_trust *t, const char *arc, oz_statement *st,
                              int *own_signature)
{
    const uint8_t *p = NULL;
    uint8_t *own = NULL;
    size_t n = 0;
    char what[512];
    oz_bundle b;
    int rc = signature_bytes(a, t, arc, &p, &n, &own, what, sizeof what);
    if (!rc && !(rc = oz_bundle_parse(p, n, what, &b))) {
        rc = oz_trust_verify(t, &b, what);
        if (!rc) rc = oz_statement_parse(b.payload, b.payload_len, what, st);
        oz_bundle_free(&b);
    }
    *own_signature = own != NULL;
    free(own);
    return rc;
}

/* Left out of the names check: what ignore_paths names, and the package's
 * model.sig when it is the signature read, even if the statement does not
 * name it (model_signing verify leaves out the signature it reads: a folder
 * signed with the signature outside it, then given it as model.sig, verifies). */
static int left_out(const onnxzip_signed *s, const char *path)
{
    return oz_statement_ignored(&s->st, path) || (s->own_signature && !strcmp(path, OZ_SIGNATURE_FILE));
}

/* The resources of planned file f ("files": its path; "shards": one per
 * shard_size bytes, as model_signing splits it; an empty file has none)
 * appended to s->res (room: one per resource, each found once). */
static int file_resources(onnxzip_signed *s, const onnxzip_planned_file *f, size_t *k, uint8_t *seen)
{
    const oz_statement *st = &s->st;
    uint64_t step = st->shard_size, size = f->size;
    uint64_t shards = !step ? 1 : size / step + (size % step != 0);
    if (shards > st->n - *k) /* more than the statement has left: it cannot list them */
        return oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' is not in the signed statement (as %llu shards): a file "
                      "added, renamed or changed in size since signing", s->archive, f->path,
                      (unsigned long long)shards);
    for (uint64_t start = 0, i = 0; i < shards; i++, start += step) {
        char name[OZ_MAX_PATH + 48];
        if (step) snprintf(name, sizeof name, "%s:%llu:%llu", f->path, (unsigned long long)start,
                           (unsigned long long)(size - start < step ? size : start + step));
        const oz_resource *r = oz_statement_find(st, step ? name : f->path);
        if (!r)
            return oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' is not in the signed statement%s: a file added, renamed%s "
                          "since signing", s->archive, step ? name : f->path, step ? " (a shard)" : "",
                          step ? " or changed in size" : "");
        seen[r - st->res] = 1;
        s->res[(*k)++] = r;
    }
    return 0;
}

/* The package's files (minus ignore_paths) are the resources, by name. */
static int check_names(onnxzip_signed *s)
{
    size_t n = onnxzip_file_plan_count(s->plan), k = 0, m = n ? n : 1;
    uint8_t *seen = calloc(s->st.n ? s->st.n : 1, 1);
    s->res = calloc(s->st.n ? s->st.n : 1, sizeof *s->res);
    s->first = calloc(m, sizeof *s->first);
    s->count = calloc(m, sizeof *s->count);
    s->ignored = calloc(m, 1);
    s->checked = calloc(m, 1);
    int rc = seen && s->res && s->first && s->count && s->ignored && s->checked ? 0 : oz_err(ONNXZIP_ENOMEM, -1,
                                                                                          "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        const onnxzip_planned_file *f = onnxzip_file_plan_at(s->plan, i);
        s->first[i] = k;
        if (!(s->ignored[i] = (uint8_t)left_out(s, f->path))) rc = file_resources(s, f, &k, seen);
        s->count[i] = k - s->first[i];
    }
    for (size_t r = 0; r < s->st.n && !rc; r++)
        if (!seen[r])
            rc = oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' of the signed statement is missing from the package: a "
                        "file removed or renamed since signing", s->archive, s->st.res[r].name);
    free(seen);
    return rc;
}

int onnxzip_signed_open(onnxzip_archive *a, const onnxzip_trust *t, onnxzip_signed **out)
{
    if (out) *out = NULL;
    if (!a || !t || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_signed_open: NULL argument");
    onnxzip_signed *s = calloc(1, sizeof *s);
    const char *arc = onnxzip_archive_path(a);
    if (!s || !(s->archive = oz_strndup(arc, strlen(arc)))) {
        free(s);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    int rc = verified_statement(a, t, s->archive, &s->st, &s->own_signature);
    /* Names only, so that opening one model through a URL reads no other
     * model's entry; shards need each file's size, known by planning. */
    s->names_only = !rc && !s->st.shard_size;
    if (!rc) rc = s->names_only ? onnxzip_file_plan_names(a, &s->plan) : onnxzip_file_plan_create(a, NULL, &s->plan);
    if (!rc) rc = check_names(s);
    if (rc)
        onnxzip_signed_free(&s);
    *out = s;
    return rc;
}

/* Whether planned file f is one that `path` asks for: itself, or a file of model `path`. */
static int wanted(const onnxzip_planned_file *f, const char *path)
{
    return !path || !strcmp(f->path, path) || (f->model && !strcmp(f->model, path));
}

/* The bytes [start, end) of planned file f, as a file of its own (a
 * shard): its segments cut to the range (*segs: the caller frees). */
static int slice(const onnxzip_planned_file *f, uint64_t start, uint64_t end, onnxzip_planned_file *out,
                 onnxzip_segment **segs)
{
    *out = *f;
    out->size = end - start;
    out->n_segments = 0;
    if (!(*segs = calloc(f->n_segments ? f->n_segments : 1, sizeof **segs)))
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    uint64_t pos = 0;
    for (size_t i = 0; i < f->n_segments; pos += f->segments[i++].length) {
        const onnxzip_segment *g = &f->segments[i];
        uint64_t lo = start > pos ? start : pos, hi = end < pos + g->length ? end : pos + g->length;
        if (lo >= hi) continue;
        onnxzip_segment *c = &(*segs)[out->n_segments++];
        *c = *g;
        c->length = hi - lo;
        if (g->kind == ONNXZIP_SEGMENT_BYTES) c->bytes = (const uint8_t *)g->bytes + (lo - pos);
        if (g->kind == ONNXZIP_SEGMENT_ARCHIVE) {
            c->offset += lo - pos;
            c->entry_offset += lo - pos;
        }
    }
    out->segments = *segs;
    return 0;
}

/* What one check hashes: a resource and the file (or shard) it covers. */
typedef struct job {
    size_t file;                /* the planned file's index */
    const oz_resource *r;
    onnxzip_planned_file shard; /* "shards": the range as a file */
    onnxzip_segment *segs;
} job;

static int compare(const onnxzip_signed *s, const oz_resource *r, const uint8_t got[32])
{
    if (!memcmp(got, r->digest, 32)) return 0;
    char hex[65];
    oz_hex32(got, hex);
    return oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' differs from the signed statement: its SHA-256 is %s, the "
                  "signature's %s", s->archive, r->name, hex, r->hex);
}

static int not_covered(const onnxzip_signed *s, const char *path)
{
    return oz_err(ONNXZIP_EUNSIGNED, -1, "%s: '%s' is not covered by the signature (the statement's ignore_paths "
                  "leave it out)", s->archive, path);
}

/* The jobs of the files `path` asks for that are not checked yet. */
static int plan_jobs(const onnxzip_signed *s, const char *path, job *jobs, size_t *n_jobs)
{
    size_t n = onnxzip_file_plan_count(s->plan), matched = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const onnxzip_planned_file *f = onnxzip_file_plan_at(s->plan, i);
        if (!wanted(f, path)) continue;
        matched++;
        if (s->ignored[i] && path) /* a file the signature leaves out was asked for */
            rc = not_covered(s, f->path);
        for (size_t k = 0; !rc && !s->checked[i] && k < s->count[i]; k++) {
            job *j = &jobs[(*n_jobs)++];
            j->file = i;
            j->r = s->res[s->first[i] + k];
            rc = s->st.shard_size ? slice(f, j->r->start, j->r->end, &j->shard, &j->segs) : 0;
        }
    }
    if (!rc && path && !matched)
        rc = oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no file or model '%s' in the package", s->archive, path);
    return rc;
}

/* The entry of fetched archive fa named as package entry `name` without
 * its model's directory (dirlen bytes): SIZE_MAX when there is none. */
static size_t fetched_entry(const onnxzip_archive *fa, const char *name, size_t dirlen)
{
    if (strlen(name) < dirlen) return SIZE_MAX;
    for (size_t j = 0, n = onnxzip_entry_count(fa); j < n; j++)
        if (!strcmp(onnxzip_entry_at(fa, j)->name, name + dirlen)) return j;
    return SIZE_MAX;
}

/* Planned file f (ranges of package a) with its archive ranges moved into
 * fa, the single-model archive onnxzip_fetch() wrote of a's model in a
 * directory of dirlen bytes: it holds the same entries, named without that
 * directory, byte for byte. *segs: the caller frees. */
static int remap(const onnxzip_archive *a, const onnxzip_archive *fa, size_t dirlen, const onnxzip_planned_file *f,
                 onnxzip_planned_file *out, onnxzip_segment **segs)
{
    *out = *f;
    if (!(*segs = calloc(f->n_segments ? f->n_segments : 1, sizeof **segs)))
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 0; i < f->n_segments; i++) {
        onnxzip_segment *c = &(*segs)[i];
        *c = f->segments[i];
        if (c->kind != ONNXZIP_SEGMENT_ARCHIVE || !c->length || c->entry == SIZE_MAX) continue;
        const char *name = onnxzip_entry_at(a, c->entry)->name;
        size_t j = fetched_entry(fa, name, dirlen);
        const onnxzip_entry *e = j == SIZE_MAX ? NULL : onnxzip_entry_at(fa, j);
        if (!e || c->entry_offset > e->size || c->length > e->size - c->entry_offset)
            return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: the fetched model %s lacks the bytes of entry '%s' that '%s' "
                          "is made of", onnxzip_archive_path(a), onnxzip_archive_path(fa), name, f->path);
        c->entry = j;
        c->offset = e->data_offset + c->entry_offset;
    }
    out->segments = *segs;
    return 0;
}

/* The file `path` of plan p, or NULL. */
/* The index of file `path` in plan p, or (size_t)-1. */
static size_t plan_index(const onnxzip_file_plan *p, const char *path)
{
    for (size_t i = 0, n = onnxzip_file_plan_count(p); i < n; i++)
        if (!strcmp(onnxzip_file_plan_at(p, i)->path, path)) return i;
    return (size_t)-1;
}

static const onnxzip_planned_file *planned(const onnxzip_file_plan *p, const char *path)
{
    size_t i = plan_index(p, path);
    return i == (size_t)-1 ? NULL : onnxzip_file_plan_at(p, i);
}

/* Pins (read/pins.h) what a check of `a` hashed and found equal: each
 * entry a checked file's segment held whole (its SHA-256 as read, `seen`),
 * each entry a checked model file holds whole inline (plan p's bytes), so
 * that a's later reads of them hand out these bytes or fail. */
static void pin_checked(onnxzip_archive *a, const onnxzip_file_plan *p, const onnxzip_planned_file *const *files,
                        size_t n, const oz_entry_digests *seen)
{
    for (size_t k = 0; k < seen->n; k++) oz_pin(a, seen->v[k].entry, seen->v[k].sha);
    for (size_t k = 0; p && k < p->ninl; k++)
        for (size_t f = 0; f < n; f++)
            if (!strcmp(files[f]->path, p->inl[k].model)) {
                uint8_t d[32];
                oz_sha256(p->inl[k].bytes, (size_t)onnxzip_entry_at(a, p->inl[k].entry)->size, d);
                oz_pin(a, p->inl[k].entry, d);
                break;
            }
}

/* After the files of a model fetched into fa (a's model, its directory
 * dirlen bytes) matched: the entries the checked model files hold inline
 * were hashed as planning read them through a, so fa's copies of them,
 * another transfer, must be those bytes (spec 20.5). */
static int fetched_inline_same(const onnxzip_signed *s, const onnxzip_archive *a, const onnxzip_archive *fa,
                               size_t dirlen, const onnxzip_file_plan *p, const onnxzip_planned_file *const *files,
                               size_t n)
{
    for (size_t k = 0; p && k < p->ninl; k++)
        for (size_t f = 0; f < n; f++) {
            if (strcmp(files[f]->path, p->inl[k].model)) continue;
            const onnxzip_entry *e = onnxzip_entry_at(a, p->inl[k].entry);
            size_t j = fetched_entry(fa, e->name, dirlen);
            const onnxzip_entry *fe = j == SIZE_MAX ? NULL : onnxzip_entry_at(fa, j);
            if (!fe || fe->size != e->size || (e->size && memcmp(fa->base + fe->data_offset, p->inl[k].bytes,
                                                                  (size_t)e->size)))
                return oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' differs from the signed statement: the fetched model "
                              "%s holds other bytes of entry '%s' (inline in it) than the ones checked",
                              s->archive, files[f]->path, onnxzip_archive_path(fa), e->name);
            break;
        }
    return 0;
}

/* The check of onnxzip_signed_check() (fa NULL: a's bytes) and of
 * onnxzip_signed_check_fetched() (fa: the archive fetched from a's model,
 * whose files are then not marked checked for a). */
static int check(onnxzip_signed *s, onnxzip_archive *a, const char *path, onnxzip_archive *fa, size_t dirlen)
{
    size_t n = onnxzip_file_plan_count(s->plan), m = s->st.n ? s->st.n : 1, pending = 0;
    job *jobs = calloc(m, sizeof *jobs);
    const onnxzip_planned_file **files = calloc(m, sizeof *files);
    uint8_t (*got)[32] = calloc(m, sizeof *got), *bad = calloc(n ? n : 1, 1);
    int rc = jobs && files && got && bad ? plan_jobs(s, path, jobs, &pending) : oz_err(ONNXZIP_ENOMEM, -1,
                                                                                    "out of memory");
    onnxzip_file_plan *full = NULL; /* names_only: the files asked for, planned now */
    if (!rc && pending && s->names_only) rc = onnxzip_file_plan_create(a, path, &full);
    onnxzip_planned_file *moved = fa && !rc ? calloc(m, sizeof *moved) : NULL;
    onnxzip_segment **moved_segs = moved ? calloc(m, sizeof *moved_segs) : NULL;
    if (fa && !rc && !moved_segs) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t k = 0; k < pending && !rc; k++) {
        files[k] = s->st.shard_size ? &jobs[k].shard : onnxzip_file_plan_at(s->plan, jobs[k].file);
        if (full && !(files[k] = planned(full, files[k]->path)))
            rc = oz_err(ONNXZIP_ENOTFOUND, -1, "%s: '%s' is in the manifest's files but not in what unpack writes "
                        "of '%s'", s->archive, onnxzip_file_plan_at(s->plan, jobs[k].file)->path, path ? path : "it");
        if (!rc && fa && !(rc = remap(a, fa, dirlen, files[k], &moved[k], &moved_segs[k]))) files[k] = &moved[k];
    }
    oz_entry_digests seen = { 0 };
    if (!rc && pending) rc = oz_plan_sha256_seen(fa ? fa : a, files, pending, got, fa ? NULL : &seen);
    for (size_t k = 0; k < pending && !rc; k++)
        if ((rc = compare(s, jobs[k].r, got[k]))) bad[jobs[k].file] = 1;
    for (size_t k = 0; k < pending && !rc && !fa; k++)
        if (!bad[jobs[k].file]) s->checked[jobs[k].file] = 1;
    if (!rc && !fa) pin_checked(a, full ? full : s->plan, files, pending, &seen);
    if (!rc && fa) rc = fetched_inline_same(s, a, fa, dirlen, full ? full : s->plan, files, pending);
    oz_entry_digests_free(&seen);
    for (size_t k = 0; moved_segs && k < pending; k++) free(moved_segs[k]);
    free(moved_segs);
    free(moved);
    onnxzip_file_plan_free(&full);
    for (size_t k = 0; jobs && k < pending; k++) free(jobs[k].segs);
    free(jobs);
    free(files);
    free(got);
    free(bad);
    return rc;
}

int onnxzip_signed_check(onnxzip_signed *s, onnxzip_archive *a, const char *path)
{
    if (!s || !a) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_signed_check: NULL argument");
    return check(s, a, path, NULL, 0);
}

int onnxzip_signed_covers(const onnxzip_signed *s, const char *path)
{
    size_t i = s && path ? plan_index(s->plan, path) : (size_t)-1;
    return i != (size_t)-1 && !s->ignored[i];
}

int onnxzip_signed_check_bytes(const onnxzip_signed *s, const char *path, const void *data, size_t len)
{
    if (!s || !path || (!data && len)) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_signed_check_bytes: NULL argument");
    size_t i = plan_index(s->plan, path);
    if (i == (size_t)-1) return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no file '%s' in the package", s->archive, path);
    if (s->ignored[i]) return not_covered(s, path);
    uint64_t size = onnxzip_file_plan_at(s->plan, i)->size; /* known when shards need it (check_names) */
    if (s->st.shard_size && len != size)
        return oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' differs from the signed statement: %zu bytes, where its "
                      "shards cover %llu", s->archive, path, len, (unsigned long long)size);
    int rc = 0;
    for (size_t k = 0; k < s->count[i] && !rc; k++) {
        const oz_resource *r = s->res[s->first[i] + k];
        uint64_t lo = s->st.shard_size ? r->start : 0, hi = s->st.shard_size ? r->end : len;
        uint8_t got[32];
        oz_sha256((const uint8_t *)data + lo, (size_t)(hi - lo), got);
        rc = compare(s, r, got);
    }
    return rc;
}

int onnxzip_signed_check_file(const onnxzip_signed *s, const char *path, const char *file)
{
    if (!s || !path || !file) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_signed_check_file: NULL argument");
    int fd = oz_sys_open_read(file);
    if (fd < 0) return oz_err_sys(ONNXZIP_EIO, -1, file, "%s: cannot open: %s", file, strerror(errno));
    oz_stat st;
    int rc = oz_sys_fstat(fd, &st) ? oz_err_sys(ONNXZIP_EIO, -1, file, "%s: cannot stat: %s", file, strerror(errno))
             : st.kind != OZ_KIND_REG ? oz_err_not_regular(file, st.kind)
             : (uint64_t)(size_t)st.size != st.size
                 ? oz_err(ONNXZIP_ELIMIT, -1, "%s: %llu bytes, more than this process can map", file,
                          (unsigned long long)st.size)
                 : 0;
    void *p = !rc && st.size ? oz_sys_map(fd, 0, st.size) : NULL;
    if (!rc && st.size && !p) rc = oz_err_map(file, st.size);
    oz_sys_close(fd);
    if (!rc) rc = onnxzip_signed_check_bytes(s, path, p, (size_t)st.size);
    if (p) oz_sys_unmap(p, st.size);
    return rc;
}

int onnxzip_signed_check_fetched(onnxzip_signed *s, onnxzip_archive *a, const char *model, const char *fetched)
{
    if (!s || !a || !model || !fetched)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_signed_check_fetched: NULL argument");
    const onnxzip_member *m = onnxzip_find_member(a, model);
    if (!m || m->kind != ONNXZIP_MEMBER_MODEL)
        return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no model '%s' in the package", s->archive, model);
    onnxzip_archive *fa = NULL;
    int rc = onnxzip_open(fetched, 0, &fa);
    const char *slash = strrchr(model, '/');
    if (!rc) rc = check(s, a, model, fa, slash ? (size_t)(slash - model) + 1 : 0);
    onnxzip_close(&fa);
    return rc;
}

size_t onnxzip_signed_resource_count(const onnxzip_signed *s)
{
    return s ? s->st.n : 0;
}

const char *onnxzip_signed_resource_name(const onnxzip_signed *s, size_t i)
{
    return s && i < s->st.n ? s->st.res[i].name : NULL;
}

const char *onnxzip_signed_resource_digest(const onnxzip_signed *s, size_t i)
{
    return s && i < s->st.n ? s->st.res[i].hex : NULL;
}

void onnxzip_signed_free(onnxzip_signed **s)
{
    if (!s || !*s) return;
    oz_statement_free(&(*s)->st);
    onnxzip_file_plan_free(&(*s)->plan);
    free((*s)->res);
    free((*s)->first);
    free((*s)->count);
    free((*s)->ignored);
    free((*s)->checked);
    free((*s)->archive);
    free(*s);
    *s = NULL;
}

/* onnxzip_signed_open() / _check(): a package's signature verified, its
 * file names checked against the statement at open, its files' bytes on
 * demand (each once). */
#include <stdio.h>

#include "common/internal.h"
#include "convert/plan_sha256.h"
#include "trust/crypto.h"
#include "trust/json.h"
#include "trust/statement.h"
#include "trust/trust.h"

#define OZ_SIGNATURE_FILE "model.sig"

struct onnxzip_signed {
    oz_statement st;
    onnxzip_file_plan *plan;    /* every file of the package's folder */
    const oz_resource **res_of; /* per planned file: its resource; NULL: ignored */
    uint8_t *checked;           /* per planned file: its digest found equal */
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
static int verified_statement(onnxzip_archive *a, const onnxzip_trust *t, const char *arc, oz_statement *st)
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
    free(own);
    return rc;
}

/* The package's files (minus ignore_paths) are the resources, by name. */
static int check_names(onnxzip_signed *s)
{
    size_t n = onnxzip_file_plan_count(s->plan);
    uint8_t *seen = calloc(s->st.n ? s->st.n : 1, 1);
    if (!seen || !(s->res_of = calloc(n ? n : 1, sizeof *s->res_of)) || !(s->checked = calloc(n ? n : 1, 1))) {
        free(seen);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *path = onnxzip_file_plan_at(s->plan, i)->path;
        if (oz_statement_ignored(&s->st, path)) continue;
        if (!(s->res_of[i] = oz_statement_find(&s->st, path)))
            rc = oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' is not in the signed statement: a file added or renamed "
                        "since signing", s->archive, path);
        else
            seen[s->res_of[i] - s->st.res] = 1;
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
    int rc = verified_statement(a, t, s->archive, &s->st);
    if (!rc) rc = onnxzip_file_plan_create(a, NULL, &s->plan);
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

static int compare(const onnxzip_signed *s, const onnxzip_planned_file *f, const oz_resource *r,
                   const uint8_t got[32])
{
    if (!memcmp(got, r->digest, 32)) return 0;
    char hex[65];
    oz_hex32(got, hex);
    return oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' differs from the signed statement: its SHA-256 is %s, the "
                  "signature's %s", s->archive, f->path, hex, r->hex);
}

int onnxzip_signed_check(onnxzip_signed *s, onnxzip_archive *a, const char *path)
{
    if (!s || !a) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_signed_check: NULL argument");
    size_t n = onnxzip_file_plan_count(s->plan), todo = 0, matched = 0;
    const onnxzip_planned_file **files = calloc(n ? n : 1, sizeof *files);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    uint8_t (*got)[32] = calloc(n ? n : 1, sizeof *got);
    int rc = files && idx && got ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        const onnxzip_planned_file *f = onnxzip_file_plan_at(s->plan, i);
        if (!wanted(f, path)) continue;
        matched++;
        if (!s->res_of[i] && path) /* a file the signature leaves out was asked for */
            rc = oz_err(ONNXZIP_EMISMATCH, -1, "%s: '%s' is not covered by the signature (the statement's "
                        "ignore_paths leave it out)", s->archive, f->path);
        else if (s->res_of[i] && !s->checked[i]) {
            files[todo] = f;
            idx[todo++] = i;
        }
    }
    if (!rc && path && !matched)
        rc = oz_err(ONNXZIP_ENOTFOUND, -1, "%s: no file or model '%s' in the package", s->archive, path);
    if (!rc && todo) rc = oz_plan_sha256_files(a, files, todo, got);
    for (size_t k = 0; k < todo && !rc; k++) {
        rc = compare(s, files[k], s->res_of[idx[k]], got[k]);
        if (!rc) s->checked[idx[k]] = 1;
    }
    free(files);
    free(idx);
    free(got);
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
    free((*s)->res_of);
    free((*s)->checked);
    free((*s)->archive);
    free(*s);
    *s = NULL;
}

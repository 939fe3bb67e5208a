/* The package manifest (spec 19.4). */
#include <stdio.h>

#include "read/package.h"

#define MAGIC "onnxzip-package\t"

typedef struct parser {
    oz_package *p;
    oz_zip *z;
    const char *path;
    size_t line;
    const char *default_path;
} parser;

/* "BEFORE'DETAIL'AFTER", DETAIL shown safely; no quotes without one. */
static int bad(parser *ps, const char *before, const char *detail, const char *after)
{
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(detail ? detail : "", detail ? strlen(detail) : 0, shown, sizeof shown);
    return oz_err(ONNXZIP_EPACKAGE, -1, "%s: manifest __PACKAGE, line %zu: %s%s%s%s%s", ps->path, ps->line, before,
                  detail ? "'" : "", detail ? shown : "", detail ? "'" : "", after);
}

/* "1.N": this major version; "M.N" with M > 1: a newer, incompatible one. */
static int check_version(parser *ps, const char *v)
{
    const char *dot = strchr(v, '.');
    size_t k = dot ? strspn(dot + 1, "0123456789") : 0;
    if (!dot || dot == v || strspn(v, "0123456789") != (size_t)(dot - v) || !k || dot[1 + k])
        return bad(ps, "the first line is not 'onnxzip-package<TAB>1.N' (version ", v, ")");
    char shown[OZ_PRINTABLE_CAP];
    if (dot - v != 1 || v[0] != '1')
        return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: a package of format %s; this library reads format 1.%d",
                      ps->path, oz_printable(v, strlen(v), shown, sizeof shown), ONNXZIP_FORMAT_VERSION_MINOR);
    return 0;
}

static int split(char *line, char **f, int max)
{
    int n = 0;
    for (char *s = line; n < max;) {
        f[n++] = s;
        char *tab = strchr(s, '\t');
        if (!tab) break;
        *tab = '\0';
        s = tab + 1;
    }
    return n;
}

static int add_member(parser *ps, const char *path, onnxzip_member_kind kind)
{
    oz_package *p = ps->p;
    const oz_zentry *e = oz_zip_find(ps->z, path, strlen(path));
    if (!e) return bad(ps, "", path, " is no entry of the archive");
    if (e->cls != OZ_NAME_PATH)
        return bad(ps, "", path, e->cls == OZ_NAME_PKG_MODEL || e->cls == OZ_NAME_PKG_FILE ? " is listed twice"
                                 : " is a reserved entry, not a model or file");
    size_t i = p->n++;
    p->members[i] = (onnxzip_member){ .path = e->pub.name, .kind = kind, .size = e->pub.size,
                                      .entry = (size_t)(e - ps->z->entries) };
    ((oz_zentry *)e)->cls = kind == ONNXZIP_MEMBER_MODEL ? OZ_NAME_PKG_MODEL : OZ_NAME_PKG_FILE;
    if (kind == ONNXZIP_MEMBER_MODEL) p->n_models++;
    return oz_strmap_put(&p->by_path, e->pub.name, e->name_len, (uint32_t)i, NULL) < 0 ? ONNXZIP_ENOMEM : 0;
}

static int model_line(parser *ps, char **f, int n)
{
    int rc = add_member(ps, f[1], ONNXZIP_MEMBER_MODEL);
    if (rc) return rc;
    oz_pkg_model *m = &ps->p->models[ps->p->n - 1];
    if (n <= 2) return 0;
    if (!(m->data = malloc((size_t)(n - 2) * sizeof *m->data))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (int k = 2; k < n; k++) {
        const char *why;
        if (oz_package_path_check(f[k], strlen(f[k]), &why))
            return bad(ps, "data file name ", f[k], " is not a package path");
        m->data[m->n_data++] = f[k];
    }
    return 0;
}

/* `i:f:o` items: three decimal numbers, f below the model's data files. */
static int check_origin(parser *ps, const oz_pkg_model *m, const char *list)
{
    for (const char *s = list; *s;) {
        unsigned long long v[3];
        for (int k = 0; k < 3; k++) {
            size_t d = strspn(s, "0123456789");
            if (!d || d > 19 || (k < 2 && s[d] != ':') || (k == 2 && s[d] && s[d] != ','))
                return bad(ps, "an origin item is not i:f:o (three decimal numbers)", NULL, "");
            v[k] = strtoull(s, NULL, 10);
            s += d + (s[d] ? 1 : 0);
        }
        if (v[1] >= m->n_data) return bad(ps, "an origin item names a data file the model line does not have", NULL, "");
    }
    return 0;
}

static int origin_line(parser *ps, char **f, int n)
{
    const onnxzip_member *mb = oz_package_find(ps->p, f[1]);
    if (!mb || mb->kind != ONNXZIP_MEMBER_MODEL) return bad(ps, "origin of ", f[1], ", which no model line before names");
    oz_pkg_model *m = &ps->p->models[mb - ps->p->members];
    if (n != 3 || m->origin) return bad(ps, "origin of ", f[1], ": not exactly one list, or a second origin line");
    m->origin = f[2];
    return check_origin(ps, m, f[2]);
}

static int parse_line(parser *ps, char *line)
{
    char *f[1024];
    int n = split(line, f, (int)(sizeof f / sizeof *f));
    if (n == (int)(sizeof f / sizeof *f)) return bad(ps, "more than 1022 data files", NULL, "");
    int known = !strcmp(f[0], "model") || !strcmp(f[0], "file") || !strcmp(f[0], "default") ||
                !strcmp(f[0], "origin");
    if (!known) return 0; /* later minor versions add keywords */
    if (n < 2 || !f[1][0]) return bad(ps, "a ", f[0], " line without a path");
    if (!strcmp(f[0], "model")) return model_line(ps, f, n);
    if (!strcmp(f[0], "origin")) return origin_line(ps, f, n);
    if (n != 2) return bad(ps, "a ", f[0], " line with more than one field");
    if (!strcmp(f[0], "file")) return add_member(ps, f[1], ONNXZIP_MEMBER_FILE);
    if (ps->default_path) return bad(ps, "a second default line (", f[1], ")");
    ps->default_path = f[1];
    return 0;
}

static int parse_lines(parser *ps, char *text, size_t len)
{
    if (!len || text[len - 1] != '\n') return bad(ps, "the manifest does not end with a line feed", NULL, "");
    if (memchr(text, '\0', len) || memchr(text, '\r', len)) return bad(ps, "a NUL or CR byte", NULL, "");
    char *end = text + len;
    for (char *s = text; s < end; ps->line++) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        *nl = '\0';
        if (ps->line == 1) {
            if (strncmp(s, MAGIC, sizeof MAGIC - 1))
                return bad(ps, "the first line is not 'onnxzip-package<TAB>1.N'", NULL, "");
            int rc = check_version(ps, s + sizeof MAGIC - 1);
            if (rc) return rc;
        } else {
            int rc = parse_line(ps, s);
            if (rc) return rc;
        }
        s = nl + 1;
    }
    return 0;
}

/* The entries no line names are tensor entries, aligned (spec 19.1). */
static int classify_tensors(parser *ps)
{
    for (size_t i = 0; i < ps->z->n; i++) {
        oz_zentry *e = &ps->z->entries[i];
        if (e->cls != OZ_NAME_PATH) continue;
        e->cls = OZ_NAME_TENSOR;
        if (e->pub.data_offset % 64)
            return oz_err(ONNXZIP_EALIGN, (int64_t)e->pub.data_offset, "%s: tensor entry '%s': data at offset %llu "
                          "is not aligned to 64 bytes", ps->path, e->pub.name, (unsigned long long)e->pub.data_offset);
    }
    return 0;
}

static int finish(parser *ps)
{
    oz_package *p = ps->p;
    ps->line = 0;
    if (!p->n_models)
        return oz_err(ONNXZIP_EPACKAGE, -1, "%s: manifest __PACKAGE lists no model", ps->path);
    if (p->n_models > OZ_MAX_MODELS)
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: %zu models; a package holds at most %d", ps->path, p->n_models,
                      OZ_MAX_MODELS);
    p->default_member = SIZE_MAX;
    for (size_t i = 0; i < p->n && p->default_member == SIZE_MAX; i++)
        if (p->members[i].kind == ONNXZIP_MEMBER_MODEL &&
            (!ps->default_path || !strcmp(p->members[i].path, ps->default_path)))
            p->default_member = i;
    if (p->default_member == SIZE_MAX) {
        char shown[OZ_PRINTABLE_CAP];
        oz_printable(ps->default_path, strlen(ps->default_path), shown, sizeof shown);
        return oz_err(ONNXZIP_EPACKAGE, -1, "%s: manifest __PACKAGE: the default '%s' is no model of the package",
                      ps->path, shown);
    }
    p->members[p->default_member].is_default = 1;
    return classify_tensors(ps);
}

int oz_package_parse(oz_package *p, oz_zip *z, const uint8_t *text, size_t len, const char *path)
{
    memset(p, 0, sizeof *p);
    oz_strmap_init(&p->by_path, 0);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    p->text = malloc(len + 1);
    p->members = calloc(lines ? lines : 1, sizeof *p->members);
    p->models = calloc(lines ? lines : 1, sizeof *p->models);
    if (!p->text || !p->members || !p->models) {
        oz_package_free(p);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (package manifest)");
    }
    memcpy(p->text, text, len);
    p->text[len] = '\0';
    parser ps = { .p = p, .z = z, .path = path, .line = 1 };
    int rc = parse_lines(&ps, p->text, len);
    if (!rc) rc = finish(&ps);
    if (rc) oz_package_free(p);
    return rc;
}

const onnxzip_member *oz_package_find(const oz_package *p, const char *path)
{
    uint32_t i;
    return path && oz_strmap_get(&p->by_path, path, strlen(path), &i) == 0 ? &p->members[i] : NULL;
}

int oz_package_select(const oz_package *p, oz_zip *z, const char *model, const char *shown)
{
    const onnxzip_member *m = model ? oz_package_find(p, model) : &p->members[p->default_member];
    if (!m || m->kind != ONNXZIP_MEMBER_MODEL) {
        char name[OZ_PRINTABLE_CAP];
        oz_printable(model, strlen(model), name, sizeof name);
        return oz_err(ONNXZIP_ENOTFOUND, -1, "%s: the package has no model '%s'%s (its models: %s%s)", shown, name,
                      m ? " (that is a plain file)" : "", p->members[p->default_member].path,
                      p->n_models > 1 ? ", ... see onnxzip ls" : "");
    }
    z->model_index = m->entry;
    z->dir = m->path;
    z->dir_len = oz_path_dir_len(m->path, strlen(m->path));
    return 0;
}

void oz_package_free(oz_package *p)
{
    if (p->models)
        for (size_t i = 0; i < p->n; i++) free(p->models[i].data);
    free(p->models);
    free(p->members);
    free(p->text);
    oz_strmap_free(&p->by_path);
    memset(p, 0, sizeof *p);
}

const oz_zentry *oz_zip_resolve(const oz_zip *z, const char *loc, size_t n)
{
    if (!z->dir) return oz_zip_find(z, loc, n);
    char name[OZ_MAX_PATH + 1];
    const char *why;
    if (!n || z->dir_len + n > OZ_MAX_PATH || memchr(loc, 0, n)) return NULL; /* "" is no path */
    memcpy(name, z->dir, z->dir_len);
    memcpy(name + z->dir_len, loc, n);
    name[z->dir_len + n] = '\0';
    if (oz_package_path_check(name + z->dir_len, n, &why)) return NULL;
    return oz_zip_find(z, name, z->dir_len + n);
}

/* A package writer's models, files and manifest (spec 19). */
#include <stdio.h>

#include "common/package_path.h"
#include "common/strmap.h"
#include "write/package_writer.h"

typedef struct pkg_model {
    char *path;
    uint8_t *bytes;
    size_t len;
    oz_buf line; /* its manifest line's fields after the path: "\tdata..." */
    char *origin;
} pkg_model;

struct oz_pkg_writer {
    oz_path_set taken;    /* every path's collision key */
    pkg_model *models;
    size_t n_models, cap_models;
    char **files;
    size_t n_files, cap_files;
    char *default_path;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*v, c * size);
    if (!p) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    *v = p;
    *cap = c;
    return 0;
}

oz_pkg_writer *oz_pkg_writer_new(void)
{
    return calloc(1, sizeof(oz_pkg_writer));
}

void oz_pkg_writer_free(oz_pkg_writer *p)
{
    if (!p) return;
    oz_path_set_free(&p->taken);
    for (size_t i = 0; i < p->n_models; i++) {
        free(p->models[i].path);
        free(p->models[i].bytes);
        free(p->models[i].origin);
        oz_buf_free(&p->models[i].line);
    }
    for (size_t i = 0; i < p->n_files; i++) free(p->files[i]);
    free(p->models);
    free(p->files);
    free(p->default_path);
    free(p);
}

int oz_pkg_writer_claim(oz_pkg_writer *p, const char *path, const char *shown)
{
    (void)shown;
    return oz_path_set_add(&p->taken, path, NULL);
}

int oz_pkg_writer_file(oz_pkg_writer *p, const char *path)
{
    int rc = grow((void **)&p->files, &p->cap_files, p->n_files, sizeof *p->files);
    if (rc) return rc;
    if (!(p->files[p->n_files] = strdup(path))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    p->n_files++;
    return 0;
}

int oz_pkg_writer_model(oz_pkg_writer *p, const char *path, const void *model, size_t size)
{
    int rc = grow((void **)&p->models, &p->cap_models, p->n_models, sizeof *p->models);
    if (rc) return rc;
    pkg_model *m = &p->models[p->n_models];
    *m = (pkg_model){ .path = strdup(path), .bytes = malloc(size ? size : 1), .len = size };
    if (!m->path || !m->bytes) {
        free(m->path);
        free(m->bytes);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (model '%s', %zu bytes)", path, size);
    }
    if (size) memcpy(m->bytes, model, size);
    p->n_models++;
    return 0;
}

static pkg_model *find_model(const oz_pkg_writer *p, const char *path)
{
    for (size_t i = 0; i < p->n_models; i++)
        if (!strcmp(p->models[i].path, path)) return &p->models[i];
    return NULL;
}

int oz_pkg_writer_default(oz_pkg_writer *p, const char *path)
{
    free(p->default_path);
    return (p->default_path = strdup(path)) ? 0 : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
}

int oz_pkg_writer_origin(oz_pkg_writer *p, const char *path, const char *const *data, size_t n, const char *origin)
{
    pkg_model *m = find_model(p, path);
    if (!m) return oz_err(ONNXZIP_EINVAL, -1, "origin of '%s', which is no model of the package (internal)", path);
    m->line.len = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (strchr(data[i], '\t') || strchr(data[i], '\n'))
            return oz_err(ONNXZIP_ENAME, -1, "data file '%s' of model '%s': a TAB or line feed in its name", data[i], path);
        if (!(rc = oz_buf_append(&m->line, "\t", 1))) rc = oz_buf_append(&m->line, data[i], strlen(data[i]));
    }
    free(m->origin);
    m->origin = NULL;
    if (!rc && origin && *origin && !(m->origin = strdup(origin))) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    return rc;
}

size_t oz_pkg_writer_models(const oz_pkg_writer *p)
{
    return p->n_models;
}

void oz_pkg_writer_model_at(const oz_pkg_writer *p, size_t i, const char **path, const uint8_t **data, size_t *len)
{
    *path = p->models[i].path;
    *data = p->models[i].bytes;
    *len = p->models[i].len;
}

static int line(oz_buf *b, const char *key, const char *a, const char *rest, size_t rest_len)
{
    int rc = oz_buf_append(b, key, strlen(key));
    if (!rc) rc = oz_buf_append(b, "\t", 1);
    if (!rc) rc = oz_buf_append(b, a, strlen(a));
    if (!rc && rest_len) rc = oz_buf_append(b, rest, rest_len);
    if (!rc) rc = oz_buf_append(b, "\n", 1);
    return rc;
}

int oz_pkg_writer_manifest(const oz_pkg_writer *p, oz_buf *out, const char *shown)
{
    if (p->default_path && !find_model(p, p->default_path))
        return oz_err(ONNXZIP_EPACKAGE, -1, "%s: the default model '%s' is no model of the package", shown,
                      p->default_path);
    char head[64];
    snprintf(head, sizeof head, "onnxzip-package\t%d.%d\n", ONNXZIP_FORMAT_VERSION_MAJOR,
             ONNXZIP_FORMAT_VERSION_MINOR);
    int rc = oz_buf_append(out, head, strlen(head));
    if (!rc && p->default_path) rc = line(out, "default", p->default_path, NULL, 0);
    for (size_t i = 0; i < p->n_models && !rc; i++)
        rc = line(out, "model", p->models[i].path, (const char *)p->models[i].line.p, p->models[i].line.len);
    for (size_t i = 0; i < p->n_files && !rc; i++) rc = line(out, "file", p->files[i], NULL, 0);
    for (size_t i = 0; i < p->n_models && !rc; i++)
        if (p->models[i].origin) {
            rc = line(out, "origin", p->models[i].path, "\t", 1);
            if (!rc) { /* line() ended it: insert the list before the LF */
                out->len--;
                rc = oz_buf_append(out, p->models[i].origin, strlen(p->models[i].origin));
                if (!rc) rc = oz_buf_append(out, "\n", 1);
            }
        }
    if (!rc && out->len > OZ_MAX_MANIFEST)
        rc = oz_err(ONNXZIP_ELIMIT, -1, "%s: the manifest would be %zu bytes; at most 64 MiB", shown, out->len);
    return rc;
}

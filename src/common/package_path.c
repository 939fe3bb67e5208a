/* Package paths (spec 19.2). */
#include <errno.h>

#include "common/internal.h"
#include "common/entry_name.h"
#include "common/escape.h"
#include "common/package_path.h"
#include "common/strmap.h"
#ifdef OZ_HAVE_UNISTRING
#include <unicase.h>
#include <uninorm.h>
#endif

/* Characters that some file system cannot hold in a name (Windows' set). */
static int forbidden(unsigned char c)
{
    switch (c) {
    case '\\': case ':': case '*': case '?': case '"': case '<': case '>': case '|': case 0x7F: return 1;
    default: return c < 0x20;
    }
}

static int component_check(const char *c, size_t n, const char **why)
{
    if (n == 0) return *why = "an empty component ('//', or '/' at either end)", ONNXZIP_ENAME;
    if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
        return *why = "a '.' or '..' component", ONNXZIP_ENAME;
    if (n > OZ_MAX_NAME) return *why = "a component longer than 255 bytes", ONNXZIP_ELIMIT;
    return 0;
}

int oz_package_path_check(const char *p, size_t n, const char **why)
{
    if (n == 0) return *why = "empty", ONNXZIP_ENAME;
    if (n > OZ_MAX_PATH) return *why = "longer than 1024 bytes", ONNXZIP_ELIMIT;
    size_t start = 0;
    for (size_t i = 0; i < n;) {
        const unsigned char *u = (const unsigned char *)p + i;
        if (*u == '/') {
            int rc = component_check(p + start, i - start, why);
            if (rc) return rc;
            start = ++i;
            continue;
        }
        if (forbidden(*u)) return *why = "a control character or one of \\ : * ? \" < > |", ONNXZIP_ENAME;
        size_t k = oz_text_len(u);
        if (!k || i + k > n) return *why = "not UTF-8", ONNXZIP_ENAME;
        i += k;
    }
    return component_check(p + start, n - start, why);
}

int oz_package_path_reserved(const char *p, size_t n)
{
    oz_name_class c = oz_classify_name(p, n);
    return c == OZ_NAME_MODEL || c == OZ_NAME_FILLER || c == OZ_NAME_RESERVED;
}

size_t oz_path_dir_len(const char *p, size_t n)
{
    while (n && p[n - 1] != '/') n--;
    return n;
}

#ifndef OZ_HAVE_UNISTRING
static int ascii_key(const char *p, size_t n, const char *shown, char **key)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] >= 0x80)
            return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: a non-ASCII path, which this build (without "
                          "libunistring) cannot compare with the others under Unicode normalization and case "
                          "folding", shown);
    if (!(*key = oz_strndup(p, n))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (char *c = *key; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    return 0;
}
#endif

int oz_path_key(const char *p, size_t n, const char *shown, char **key)
{
    *key = NULL;
#ifdef OZ_HAVE_UNISTRING
    size_t len = 0;
    uint8_t *k = u8_casefold((const uint8_t *)p, n, NULL, UNINORM_NFC, NULL, &len);
    if (!k) return oz_err(errno == ENOMEM ? ONNXZIP_ENOMEM : ONNXZIP_ENAME, -1, "%s: %s", shown,
                          errno == ENOMEM ? "out of memory" : "not UTF-8");
    char *s = realloc(k, len + 1);
    if (!s) {
        free(k);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    s[len] = '\0';
    *key = s;
    return 0;
#else
    return ascii_key(p, n, shown, key);
#endif
}

static int set_grow(oz_path_set *s)
{
    if (s->n < s->cap) return 0;
    size_t cap = s->cap ? s->cap * 2 : 64;
    char **k = realloc(s->keys_owned, cap * sizeof *k);
    if (k) s->keys_owned = k;
    char **p = k ? realloc(s->paths, cap * sizeof *p) : NULL;
    if (p) s->paths = p;
    if (!k || !p) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    s->cap = cap;
    return 0;
}

int oz_path_set_add(oz_path_set *s, const char *path, const char *where)
{
    char shown[OZ_PRINTABLE_CAP], other[OZ_PRINTABLE_CAP], *key = NULL;
    oz_printable(path, strlen(path), shown, sizeof shown);
    if (!s->keys) {
        if (!(s->keys = malloc(sizeof *s->keys))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        oz_strmap_init(s->keys, 0);
    }
    int rc = set_grow(s);
    if (!rc) rc = oz_path_key(path, strlen(path), shown, &key);
    if (rc) return rc;
    if (!(s->paths[s->n] = strdup(path))) {
        free(key);
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    }
    s->keys_owned[s->n] = key;
    uint32_t j;
    rc = oz_strmap_put(s->keys, key, strlen(key), (uint32_t)s->n, &j);
    s->n++; /* counted either way: oz_path_set_free() frees them */
    if (rc <= 0) return rc;
    oz_printable(s->paths[j], strlen(s->paths[j]), other, sizeof other);
    return oz_err(ONNXZIP_EDUPNAME, -1, "%s%s'%s' and '%s' are one file on a case-insensitive or Unicode-normalizing "
                  "file system (macOS, Windows): a package cannot hold both", where ? where : "", where ? ": " : "",
                  other, shown);
}

void oz_path_set_free(oz_path_set *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->keys_owned[i]), free(s->paths[i]);
    free(s->keys_owned);
    free(s->paths);
    if (s->keys) oz_strmap_free(s->keys);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

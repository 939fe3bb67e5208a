/* JSON documents of the trust layer (json.h). */
#include "common/internal.h"
#include "trust/json.h"

static size_t json_depth(const json_t *v, size_t depth)
{
    size_t max = depth;
    if (depth > OZ_JSON_MAX_DEPTH) return depth; /* jansson itself stops at 2048: bounded recursion */
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            size_t d = json_depth(x, depth + 1);
            if (d > max) max = d;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            size_t d = json_depth(x, depth + 1);
            if (d > max) max = d;
        }
    }
    return max;
}

int oz_json_load(const void *p, size_t n, const char *what, json_t **out)
{
    *out = NULL;
    if (n > OZ_BUNDLE_MAX)
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: %zu bytes, over the %zu MiB a signature may have", what, n,
                      OZ_BUNDLE_MAX >> 20);
    json_error_t e;
    json_t *v = json_loadb(p, n, JSON_REJECT_DUPLICATES, &e);
    if (!v)
        return oz_err(ONNXZIP_EBUNDLE, e.position, "%s: malformed JSON at line %d, column %d: %s", what, e.line,
                      e.column, e.text);
    if (json_depth(v, 1) > OZ_JSON_MAX_DEPTH) {
        json_decref(v);
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: JSON nested over %d levels deep", what, OZ_JSON_MAX_DEPTH);
    }
    *out = v;
    return 0;
}

static int json_field(const json_t *obj, const char *key, const char *what, const char *path, int required,
                      json_type type, const char *type_name, json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out) return required ? oz_err(ONNXZIP_EBUNDLE, -1, "%s: no %s", what, path) : 0;
    if (json_typeof(*out) != type) {
        *out = NULL;
        return oz_err(ONNXZIP_EBUNDLE, -1, "%s: %s is not %s", what, path, type_name);
    }
    return 0;
}

int oz_json_string(const json_t *obj, const char *key, const char *what, const char *path, int required,
                   const char **out, size_t *len)
{
    json_t *v;
    int rc = json_field(obj, key, what, path, required, JSON_STRING, "a string", &v);
    *out = v ? json_string_value(v) : NULL;
    if (len) *len = v ? json_string_length(v) : 0;
    return rc;
}

int oz_json_object(const json_t *obj, const char *key, const char *what, const char *path, int required,
                   json_t **out)
{
    return json_field(obj, key, what, path, required, JSON_OBJECT, "an object", out);
}

int oz_json_array(const json_t *obj, const char *key, const char *what, const char *path, int required,
                  json_t **out)
{
    return json_field(obj, key, what, path, required, JSON_ARRAY, "an array", out);
}

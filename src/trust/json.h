/* The JSON of signature bundles and statements, through jansson: one
 * loader with the limits every document of the trust layer is read under,
 * and typed field lookups whose errors name the field. */
#ifndef ONNXZIP_JSON_H
#define ONNXZIP_JSON_H

#include <jansson.h>
#include <stddef.h>

#define OZ_BUNDLE_MAX ((size_t)16 << 20) /* bytes of a signature file */
#define OZ_JSON_MAX_DEPTH 64             /* arrays and objects nested */

/* Parses the n bytes at p as one JSON document: strict UTF-8, no NUL in
 * strings, a key given twice refused (JSON_REJECT_DUPLICATES: two readers
 * must not see two values), at most OZ_BUNDLE_MAX bytes and
 * OZ_JSON_MAX_DEPTH levels. ONNXZIP_EBUNDLE naming `what`, the line and
 * column and jansson's reason. */
int oz_json_load(const void *p, size_t n, const char *what, json_t **out);

/* Field `key` of `obj` (an object) as a string / object / array. NULL
 * when absent (when `required`: ONNXZIP_EBUNDLE "WHAT: no PATH"); of
 * another type: ONNXZIP_EBUNDLE "WHAT: PATH is not a string". `path` is
 * the field as the message names it ("dsseEnvelope.payload"). */
int oz_json_string(const json_t *obj, const char *key, const char *what, const char *path, int required,
                   const char **out, size_t *len);
int oz_json_object(const json_t *obj, const char *key, const char *what, const char *path, int required,
                   json_t **out);
int oz_json_array(const json_t *obj, const char *key, const char *what, const char *path, int required,
                  json_t **out);

#endif

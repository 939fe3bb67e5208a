/* The in-toto statement an OMS signature signs (model_signing's
 * predicate https://model_signing/signature/v1.0): the resources (files)
 * and their SHA-256, the paths left out. */
#ifndef ONNXZIP_STATEMENT_H
#define ONNXZIP_STATEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/strmap.h"

#define OZ_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define OZ_PREDICATE_TYPE "https://model_signing/signature/v1.0"

typedef struct oz_resource {
    char *name;         /* as the statement names it */
    char *path;         /* the file: the name, or for a shard the part before ":START:END" */
    uint64_t start, end; /* shards: the file's bytes [start, end) */
    uint8_t digest[32];
    char hex[65]; /* the digest in lowercase hex */
} oz_resource;

typedef struct oz_statement {
    char *subject;          /* the subject's name (the signed folder's) */
    oz_resource *res;       /* in the statement's order */
    size_t n;
    uint64_t shard_size;    /* method "shards": bytes per shard; 0: method "files" */
    char **ignore;          /* serialization.ignore_paths */
    size_t n_ignore;
    oz_strmap by_name;      /* resource name -> index */
} oz_statement;

/* Parses the statement (the n bytes of a verified DSSE payload; `what`
 * names the signature in messages). 0, or ONNXZIP_EBUNDLE naming what is
 * malformed: JSON, _type, predicateType, the subject (not exactly one; its
 * sha256 not the SHA-256 of the resources' digests in their order), the
 * serialization, a resource (name: empty, absolute, a ".", ".." or empty
 * component, a backslash, given twice; "." only as the one resource of a
 * single file; digest: not 64 hex digits; method "shards": a name not
 * PATH:START:END with START < END, END - START at most shard_size);
 * ONNXZIP_EUNSUPPORTED for hash types other than sha256. On failure *st
 * is empty. */
int oz_statement_parse(const uint8_t *p, size_t n, const char *what, oz_statement *st);

/* The resource named `path` (method "shards": "PATH:START:END"), or NULL. */
const oz_resource *oz_statement_find(const oz_statement *st, const char *path);

/* 1 when `path` is one of the n paths `ignore` or lies below one (as
 * model_signing leaves files out: ".git" covers ".git/config"; "dir/" is
 * "dir"; "" and "." cover nothing). */
int oz_path_ignored(const char *path, const char *const *ignore, size_t n_ignore);

/* oz_path_ignored() with the statement's ignore_paths. */
int oz_statement_ignored(const oz_statement *st, const char *path);

void oz_statement_free(oz_statement *st);

#endif

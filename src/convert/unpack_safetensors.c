/* onnxzip_unpack()'s safetensors layout (spec 12.4): the tensors that leave
 * the model go into NAME.safetensors, or shards of it with an index, laid out
 * as safetensors' own writer and onnx-ir's save_safetensors() lay them out;
 * the model refers to each tensor's bytes there. unpack.c does the rest (the
 * walk, the side file, the temporary directory, the renames). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "convert/unpack_safetensors.h"
#include "common/buf.h"

/* Safetensors' data starts at a multiple of this; tensors follow without
 * gaps (the format allows none), each at a multiple of the largest power of
 * two up to it dividing its size. */
#define ST_ALIGN 4096u
#define ST_MAX_HEADER 100000000u /* safetensors' reader refuses larger headers */

typedef struct st_tensor {
    const onnxzip_tensor *v; /* the first tensor of these bytes */
    const char *dtype;       /* safetensors' name of its type */
    uint32_t shard;
    uint64_t off;            /* in the shard's data */
} st_tensor;

typedef struct st_shard {
    char *file;
    uint64_t payload;
    oz_buf head;              /* the length and the header, padded */
    const st_tensor **order;  /* its tensors, in file order */
    size_t n;
} st_shard;

struct oz_st {
    st_tensor *t;
    size_t n;
    uint32_t *slot;     /* per tensor of the index: 1 + its st_tensor, or 0 */
    oz_strmap keys;     /* key -> st_tensor */
    oz_strmap bytes;    /* "offset:length" in the archive -> st_tensor */
    char (*spans)[40];  /* the strings `bytes` borrows */
    st_shard *shards;
    size_t nshards;
    char *index;        /* NAME.safetensors.index.json, when sharded */
};

/* ONNX TensorProto.DataType -> safetensors dtype; NULL: not exactly
 * nameable (STRING, COMPLEX128, sub-byte packed types, unknown codes). */
static const char *st_dtype(int32_t t)
{
    static const char *const names[] = {
        [1] = "F32", [2] = "U8", [3] = "I8", [4] = "U16", [5] = "I16", [6] = "I32", [7] = "I64",
        [9] = "BOOL", [10] = "F16", [11] = "F64", [12] = "U32", [13] = "U64", [14] = "C64",
        [16] = "BF16", [17] = "F8_E4M3", [18] = "F8_E4M3FNUZ", [19] = "F8_E5M2", [20] = "F8_E5M2FNUZ",
        [24] = "F8_E8M0",
    };
    return t >= 0 && (size_t)t < sizeof names / sizeof names[0] ? names[t] : NULL;
}

/* Well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF): safetensors' header is UTF-8 JSON. */
static int is_utf8(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s, n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (n == 9 || (n == 1 && c < 0xC2) || (n == 3 && c > 0xF4)) return 0;
        for (unsigned i = 1; i <= n; i++)
            if ((s[i] & 0xC0) != 0x80) return 0;
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0) || (c == 0xF0 && s[1] < 0x90) ||
            (c == 0xF4 && s[1] >= 0x90))
            return 0;
        s += n + 1;
    }
    return 1;
}

static int st_init(unpack *u)
{
    size_t n = u->a->tensors.n;
    if (!(u->st = calloc(1, sizeof *u->st))) return oz_unpack_nomem();
    oz_strmap_init(&u->st->keys, 0);
    oz_strmap_init(&u->st->bytes, 0);
    u->st->t = calloc(n ? n : 1, sizeof *u->st->t);
    u->st->slot = calloc(n ? n : 1, sizeof *u->st->slot);
    u->st->spans = calloc(n ? n : 1, sizeof *u->st->spans);
    return u->st->t && u->st->slot && u->st->spans ? 0 : oz_unpack_nomem();
}

int oz_st_take(unpack *u, const onnxzip_tensor *v)
{
    if (!u->st && st_init(u)) return ONNXZIP_ENOMEM;
    struct oz_st *s = u->st;
    const char *dtype = st_dtype(v->data_type);
    if (!dtype || !is_utf8((const unsigned char *)v->key) || !strcmp(v->key, "__metadata__")) return 0;
    size_t i = (size_t)(v - u->a->tensors.v);
    char *span = s->spans[s->n];
    snprintf(span, sizeof s->spans[0], "%llx:%llx", (unsigned long long)v->file_offset,
             (unsigned long long)v->nbytes);
    uint32_t k;
    if (!oz_strmap_get(&s->bytes, span, strlen(span), &k)) { /* the same bytes: referenced, not copied */
        s->slot[i] = k + 1;
        return 1;
    }
    if (!oz_strmap_get(&s->keys, v->key, strlen(v->key), &k)) return 0; /* the key is taken */
    if (oz_strmap_put(&s->bytes, span, strlen(span), (uint32_t)s->n, NULL) < 0 ||
        oz_strmap_put(&s->keys, v->key, strlen(v->key), (uint32_t)s->n, NULL) < 0)
        return ONNXZIP_ENOMEM;
    s->t[s->n] = (st_tensor){ .v = v, .dtype = dtype };
    u->total += v->nbytes;
    s->slot[i] = (uint32_t)++s->n;
    return 1;
}

/* The largest power of two up to ST_ALIGN dividing n (ST_ALIGN for 0). */
static uint64_t size_align(uint64_t n)
{
    uint64_t a = n & (~n + 1);
    return !n || a > ST_ALIGN ? ST_ALIGN : a;
}

/* Largest alignment first, then model order (in t[]); empty tensors last. */
static int by_alignment(const void *x, const void *y)
{
    const st_tensor *a = *(const st_tensor *const *)x, *b = *(const st_tensor *const *)y;
    int ea = a->v->nbytes == 0, eb = b->v->nbytes == 0;
    if (ea != eb) return ea - eb;
    uint64_t la = size_align(a->v->nbytes), lb = size_align(b->v->nbytes);
    if (la != lb) return la > lb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Tensors into shards, in model order: a new shard when the next tensor
 * would take the current one past max_shard_size (HF's and onnx-ir's rule). */
static int split(unpack *u)
{
    struct oz_st *s = u->st;
    uint64_t max = u->o->max_shard_size, cur = 0;
    if (!(s->shards = calloc(s->n, sizeof *s->shards))) return oz_unpack_nomem();
    for (size_t i = 0; i < s->n; i++) {
        uint64_t n = s->t[i].v->nbytes;
        if (!s->nshards || (max && cur > 0 && (cur >= max || n > max - cur))) {
            s->nshards++;
            cur = 0;
        }
        st_shard *sh = &s->shards[s->nshards - 1];
        if (!sh->order && !(sh->order = malloc((s->n - i) * sizeof *sh->order))) return oz_unpack_nomem();
        sh->order[sh->n++] = &s->t[i];
        s->t[i].shard = (uint32_t)(s->nshards - 1);
        cur += n;
    }
    for (size_t k = 0; k < s->nshards; k++) {
        st_shard *sh = &s->shards[k];
        qsort((void *)sh->order, sh->n, sizeof *sh->order, by_alignment);
        for (size_t j = 0; j < sh->n; j++) {
            st_tensor *t = &s->t[sh->order[j] - s->t];
            t->off = sh->payload;
            sh->payload += t->v->nbytes;
        }
    }
    return 0;
}

/* The stem of onnx-ir's names: the model's file name without its last
 * extension (Python's os.path.splitext: a dot with only dots before it
 * starts no extension, as in ".onnx"). */
static size_t stem_len(const char *name)
{
    const char *dot = strrchr(name, '.');
    for (const char *p = name; dot && p < dot; p++)
        if (*p != '.') return (size_t)(dot - name);
    return strlen(name);
}

/* Shard k of n (from 1), or n == 0: NAME.safetensors, or k == 0 too: the index. */
static int add_file(unpack *u, char **out, size_t k, size_t n)
{
    char shown[OZ_PRINTABLE_CAP];
    size_t stem = stem_len(u->name), cap = stem + 64;
    if (!(*out = malloc(cap))) return oz_unpack_nomem();
    if (n)
        snprintf(*out, cap, "%.*s-%05zu-of-%05zu.safetensors", (int)stem, u->name, k, n);
    else
        snprintf(*out, cap, "%.*s.safetensors%s", (int)stem, u->name, k ? "" : ".index.json");
    if (oz_unpack_same_folded(*out, u->name) || (u->nents && oz_unpack_same_folded(*out, u->location)))
        return oz_err(ONNXZIP_EINVAL, -1, "%s: the safetensors file name '%s' is the %s", u->model_path,
                      oz_printable(*out, strlen(*out), shown, sizeof shown),
                      oz_unpack_same_folded(*out, u->name) ? "model's own name" : "side data file's name");
    u->files[u->nfiles++] = *out;
    return 0;
}

static int make_header(unpack *u, st_shard *sh); /* below, with the JSON */

int oz_st_plan(unpack *u)
{
    struct oz_st *s = u->st;
    if (!s || !s->n) return 0;
    int rc = split(u);
    for (size_t k = 0; !rc && k < s->nshards; k++)
        rc = add_file(u, &s->shards[k].file, k + 1, s->nshards > 1 ? s->nshards : 0);
    if (!rc && s->nshards > 1) rc = add_file(u, &s->index, 0, 0);
    for (size_t k = 0; !rc && k < s->nshards; k++) rc = make_header(u, &s->shards[k]);
    return rc;
}

/* Appends s as a JSON string. */
static int json_str(oz_buf *b, const char *s)
{
    int rc = oz_buf_append(b, "\"", 1);
    for (; !rc && *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\')
            snprintf(esc, sizeof esc, "\\%c", c);
        else if (c < 0x20)
            snprintf(esc, sizeof esc, "\\u%04x", c);
        else {
            rc = oz_buf_append(b, s, 1);
            continue;
        }
        rc = oz_buf_append(b, esc, strlen(esc));
    }
    return rc ? rc : oz_buf_append(b, "\"", 1);
}

static int json_u64(oz_buf *b, uint64_t x)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)x);
    return oz_buf_append(b, tmp, (size_t)n);
}

static int json_lit(oz_buf *b, const char *s)
{
    return oz_buf_append(b, s, strlen(s));
}

/* The 8-byte length and the header JSON of a shard, padded with spaces so
 * that the data starts at a multiple of ST_ALIGN. */
static int header_json(const st_shard *sh, oz_buf *b)
{
    static const uint8_t zero[8];
    int rc = oz_buf_append(b, zero, 8);
    if (!rc) rc = json_lit(b, "{\"__metadata__\":{\"format\":\"onnx\"}");
    for (size_t j = 0; !rc && j < sh->n; j++) {
        const st_tensor *t = sh->order[j];
        rc = json_lit(b, ",");
        if (!rc) rc = json_str(b, t->v->key);
        if (!rc) rc = json_lit(b, ":{\"dtype\":");
        if (!rc) rc = json_str(b, t->dtype);
        if (!rc) rc = json_lit(b, ",\"shape\":[");
        for (uint32_t d = 0; !rc && d < t->v->ndims; d++) {
            if (d) rc = json_lit(b, ",");
            if (!rc) rc = json_u64(b, (uint64_t)t->v->dims[d]);
        }
        if (!rc) rc = json_lit(b, "],\"data_offsets\":[");
        if (!rc) rc = json_u64(b, t->off);
        if (!rc) rc = json_lit(b, ",");
        if (!rc) rc = json_u64(b, t->off + t->v->nbytes);
        if (!rc) rc = json_lit(b, "]}");
    }
    if (!rc) rc = json_lit(b, "}");
    size_t pad = (ST_ALIGN - b->len % ST_ALIGN) % ST_ALIGN;
    while (!rc && pad--) rc = oz_buf_append(b, " ", 1);
    for (int i = 0; !rc && i < 8; i++) b->p[i] = (uint8_t)((uint64_t)(b->len - 8) >> (8 * i)); /* little-endian */
    return rc;
}

static int make_header(unpack *u, st_shard *sh)
{
    int rc = header_json(sh, &sh->head);
    if (!rc && sh->head.len - 8 > ST_MAX_HEADER)
        rc = oz_err(ONNXZIP_ELIMIT, -1, "%s: the header of %s would be %zu bytes, over safetensors' limit of %u; "
                    "split it with a smaller max_shard_size", u->model_path, sh->file, sh->head.len - 8,
                    ST_MAX_HEADER);
    return rc;
}

static int write_shard(unpack *u, st_shard *sh)
{
    int fd, rc = oz_unpack_create(u, sh->file, &fd);
    if (rc) return rc;
    rc = oz_unpack_write(u, fd, sh->file, sh->head.p, sh->head.len, 0);
    for (size_t j = 0; !rc && j < sh->n; j++) {
        const onnxzip_tensor *v = sh->order[j]->v;
        rc = oz_unpack_copy(u, fd, sh->file, v->file_offset, v->nbytes, v->entry);
    }
    return oz_unpack_close(u, fd, sh->file, rc);
}

/* {"metadata": {"total_size": T}, "weight_map": {KEY: FILE, ...}}, as
 * Hugging Face's and onnx-ir's writers indent it. */
static int write_index(unpack *u)
{
    struct oz_st *s = u->st;
    uint64_t total = 0;
    for (size_t i = 0; i < s->n; i++) total += s->t[i].v->nbytes;
    oz_buf b = { 0 };
    int fd, rc = json_lit(&b, "{\n  \"metadata\": {\n    \"total_size\": ");
    if (!rc) rc = json_u64(&b, total);
    if (!rc) rc = json_lit(&b, "\n  },\n  \"weight_map\": {");
    for (size_t i = 0; !rc && i < s->n; i++) {
        rc = oz_buf_append(&b, i ? ",\n    " : "\n    ", 6 - !i);
        if (!rc) rc = json_str(&b, s->t[i].v->key);
        if (!rc) rc = oz_buf_append(&b, ": ", 2);
        if (!rc) rc = json_str(&b, s->shards[s->t[i].shard].file);
    }
    if (!rc) rc = oz_buf_append(&b, "\n  }\n}\n", 7);
    if (!rc) rc = oz_unpack_create(u, s->index, &fd);
    if (!rc) rc = oz_unpack_close(u, fd, s->index, oz_unpack_write(u, fd, s->index, b.p, b.len, 0));
    oz_buf_free(&b);
    return rc;
}

int oz_st_write(unpack *u)
{
    struct oz_st *s = u->st;
    int rc = 0;
    for (size_t k = 0; s && !rc && k < s->nshards; k++) rc = write_shard(u, &s->shards[k]);
    if (!rc && s && s->index) rc = write_index(u);
    return rc;
}

int oz_st_ref(unpack *u, const onnxzip_tensor *v, oz_rewrite *rw)
{
    struct oz_st *s = u->st;
    uint32_t k = s ? s->slot[v - u->a->tensors.v] : 0;
    if (!k) return 0;
    const st_tensor *t = &s->t[k - 1];
    const st_shard *sh = &s->shards[t->shard];
    *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = sh->file, .has_offset = 1, .has_length = 1,
                        .offset = sh->head.len + t->off, .length = v->nbytes };
    return 1;
}

void oz_st_free(unpack *u)
{
    struct oz_st *s = u->st;
    if (!s) return;
    for (size_t k = 0; k < s->nshards; k++) {
        free(s->shards[k].file);
        free(s->shards[k].order);
        oz_buf_free(&s->shards[k].head);
    }
    free(s->shards);
    free(s->index);
    free(s->t);
    free(s->slot);
    free(s->spans);
    oz_strmap_free(&s->keys);
    oz_strmap_free(&s->bytes);
    free(s);
    u->st = NULL;
}

/* onnxzip_repack(): any zip holding an onnxzip model (e.g. one re-zipped with
 * deflate by another tool), read through libzip, rewritten by the aligned
 * writer. Entries are decompressed and streamed; only the model is held. */
#include "common/internal.h"
#include "convert/package_copy.h"

#if !ONNXZIP_HAVE_LIBZIP
int onnxzip_repack(const char *in_path, const char *out_path, const onnxzip_write_options *opts)
{
    if (in_path && out_path && oz_is_package(in_path)) return oz_package_copy(in_path, out_path, opts, NULL, NULL, 0);
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: cannot repack: this build of onnxzip has no libzip "
                  "(-Dlibzip=disabled), which reads foreign and compressed zips", in_path ? in_path : "(null)");
}
#else
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <zip.h>

#include "common/buf.h"
#include "common/entry_name.h"
#include "common/outputs.h"
#include "common/strmap.h"
#include "common/sys.h"
#include "onnx/dtype.h"
#include "onnx/onnx_walk.h"
#include "read/zip_diagnose.h"
#include "write/package_writer.h"
#include "write/zip_writer.h"

/* The onnxzip status for a libzip error code. */
static int status_for(int ze)
{
    switch (ze) {
    case ZIP_ER_NOZIP: return ONNXZIP_ENOTZIP;
    case ZIP_ER_INCONS: return ONNXZIP_ECDIR;
    case ZIP_ER_EOF: return ONNXZIP_ETRUNC;
    case ZIP_ER_CRC: return ONNXZIP_ECRC;
    case ZIP_ER_ZLIB: return ONNXZIP_ECRC; /* corrupt compressed data: the bytes are not what was stored */
#ifdef ZIP_ER_COMPRESSED_DATA
    case ZIP_ER_COMPRESSED_DATA: return ONNXZIP_ECRC;
#endif
    case ZIP_ER_EXISTS: return ONNXZIP_EDUPNAME; /* read-only: only a repeated name at open */
    case ZIP_ER_MEMORY: return ONNXZIP_ENOMEM;
    case ZIP_ER_INVAL: return ONNXZIP_EINVAL;
    case ZIP_ER_MULTIDISK: return ONNXZIP_EUNSUPPORTED;
    case ZIP_ER_COMPNOTSUPP: return ONNXZIP_EMETHOD;
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD:
    case ZIP_ER_WRONGPASSWD: return ONNXZIP_EFLAGS;
    default: return ONNXZIP_EIO;
    }
}

/* A zip libzip cannot open may be a cut download: the reader's diagnosis
 * (zip_diagnose.c) says so, with the size its local headers imply; its
 * error stands then. */
static int cut_short(const char *in_path)
{
    onnxzip_archive *a = NULL;
    int rc = onnxzip_open(in_path, 0, &a);
    onnxzip_close(&a);
    return rc == ONNXZIP_ETRUNC;
}

/* Records a libzip error for `in` (and entry `name` when not NULL). */
static int zip_fail(const zip_error_t *ze, const char *in, const char *name, const char *what)
{
    int code = zip_error_code_zip(ze);
    const char *msg = zip_error_strerror((zip_error_t *)ze); /* libzip's prototype is not const */
    if (!name) return oz_err(status_for(code), -1, "%s: %s: %s", in, what, msg);
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(name, strlen(name), shown, sizeof shown);
    return oz_err(status_for(code), -1, "%s: entry '%s': %s: %s", in, shown, what, msg);
}

typedef struct repack {
    const char *in, *out;
    zip_t *za;
    onnxzip_writer *w;
    zip_file_t *zf;   /* the entry being streamed */
    const char *name; /* its name */
    zip_int64_t n, model; /* entries; index of the model entry */
    const char *model_name; /* its name in the zip */
    size_t dir;       /* the length of its directory prefix ("out/"), if any */
    char **names;     /* per entry, its name in the archive; NULL: not copied */
    oz_strmap taken;  /* those names, ignoring case */
    uint8_t *model_buf;
    size_t model_len;
    oz_buf rewritten; /* the model with references renamed, when any are */
    size_t rewrites;
    char *checksum;   /* the checksum key of the tensor being rewritten */
} repack;

static int read_entry(void *user, void *buf, size_t n, size_t *got)
{
    repack *r = user;
    zip_int64_t k = zip_fread(r->zf, buf, n);
    if (k < 0) return zip_fail(zip_file_get_error(r->zf), r->in, r->name, "cannot read");
    *got = (size_t)k;
    return 0;
}

/* Opens entry i for reading into r->zf, after its stat: size known, not encrypted. */
static int open_entry(repack *r, zip_uint64_t i, const char *name, uint64_t *size)
{
    zip_stat_t st;
    char shown[OZ_PRINTABLE_CAP];
    r->name = name;
    if (zip_stat_index(r->za, i, 0, &st)) return zip_fail(zip_get_error(r->za), r->in, name, "cannot stat");
    if (!(st.valid & ZIP_STAT_SIZE))
        return oz_err(ONNXZIP_ECDIR, -1, "%s: entry '%s': size unknown", r->in,
                      oz_printable(name, strlen(name), shown, sizeof shown));
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
        return oz_err(ONNXZIP_EFLAGS, -1, "%s: entry '%s' is encrypted", r->in,
                      oz_printable(name, strlen(name), shown, sizeof shown));
    *size = st.size;
    if (!(r->zf = zip_fopen_index(r->za, i, 0))) return zip_fail(zip_get_error(r->za), r->in, name, "cannot open");
    return 0;
}

static void close_entry(repack *r)
{
    if (r->zf) zip_fclose(r->zf); /* errors were seen by the reads */
    r->zf = NULL;
}

/* Reads the model entry whole (at most 2 GiB by the spec) into r->model_buf. */
static int read_model(repack *r)
{
    uint64_t size;
    const char *name = r->model_name;
    int rc = open_entry(r, (zip_uint64_t)r->model, name, &size);
    if (rc) return rc;
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(name, strlen(name), shown, sizeof shown);
    if (size > OZ_MAX_MODEL) {
        close_entry(r);
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: entry '%s' of %llu bytes exceeds protobuf's 2 GiB limit", r->in,
                      shown, (unsigned long long)size);
    }
    if (!(r->model_buf = malloc(size ? (size_t)size : 1))) {
        close_entry(r);
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for the model (%llu bytes)", r->in,
                      (unsigned long long)size);
    }
    size_t done = 0, got = 1;
    uint8_t probe;
    while (!rc && done < size && got) {
        rc = read_entry(r, r->model_buf + done, (size_t)size - done, &got);
        done += got;
    }
    if (!rc && done < size)
        rc = oz_err(ONNXZIP_ETRUNC, -1, "%s: entry '%s' ended %llu bytes early", r->in, shown,
                    (unsigned long long)(size - done));
    if (!rc) rc = read_entry(r, &probe, 1, &got); /* reading the end checks the CRC */
    if (!rc && got)
        rc = oz_err(ONNXZIP_ESIZE, -1, "%s: entry '%s' holds more than its %llu bytes", r->in, shown,
                    (unsigned long long)size);
    close_entry(r);
    r->model_len = (size_t)size;
    return rc;
}

/* The model entry: its name as onnxzip, PyTorch or tf2onnx spell it, also
 * under a directory (oz_foreign_model_name), exactly one of them. */
static int find_model(repack *r)
{
    r->model = -1;
    for (zip_int64_t i = 0; i < r->n; i++) {
        const char *name = zip_get_name(r->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
        size_t dir;
        if (!name) return zip_fail(zip_get_error(r->za), r->in, NULL, "cannot read an entry name");
        if (!oz_foreign_model_name(name, strlen(name), &dir)) continue;
        if (r->model >= 0) {
            char a[OZ_PRINTABLE_CAP], b[OZ_PRINTABLE_CAP];
            return oz_err(ONNXZIP_EDUPNAME, -1, "%s: more than one model entry ('%s' and '%s')", r->in,
                          oz_printable(r->model_name, strlen(r->model_name), a, sizeof a),
                          oz_printable(name, strlen(name), b, sizeof b));
        }
        r->model = i;
        r->model_name = name;
        r->dir = dir;
    }
    if (r->model >= 0) return 0;
    const char *first = r->n > 0 ? zip_get_name(r->za, 0, ZIP_FL_ENC_RAW) : "";
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(first ? first : "", first ? strlen(first) : 0, shown, sizeof shown);
    return oz_err_no_model(r->in, r->n > 0 ? (uint64_t)r->n : 0, shown);
}

/* Entry i's name with the model's directory taken off, as the model's
 * references and the output name see it; NULL for the model, directories. */
static const char *local_name(const repack *r, zip_int64_t i)
{
    const char *name = zip_get_name(r->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
    if (!name || i == r->model || !*name || name[strlen(name) - 1] == '/') return NULL;
    if (r->dir && !strncmp(name, r->model_name, r->dir)) name += r->dir;
    return name;
}

static int take_name(repack *r, zip_int64_t i, const char *name)
{
    uint32_t had;
    if (!(r->names[i] = strdup(name))) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    int rc = oz_strmap_put(&r->taken, r->names[i], strlen(name), (uint32_t)i, &had);
    if (rc == 1) {
        char shown[OZ_PRINTABLE_CAP];
        oz_printable(name, strlen(name), shown, sizeof shown);
        return oz_err(ONNXZIP_EDUPNAME, -1, "%s: entry name '%s' is already used by an earlier entry "
                      "(ignoring case)", r->in, shown);
    }
    return rc;
}

/* Pass 1: entries whose names onnxzip accepts keep them; fillers are dropped
 * (the writer makes its own); other reserved names cannot be carried over. */
static int keep_names(repack *r)
{
    char shown[OZ_PRINTABLE_CAP];
    for (zip_int64_t i = 0; i < r->n; i++) {
        const char *name = local_name(r, i);
        if (!name) continue;
        oz_printable(name, strlen(name), shown, sizeof shown);
        switch (oz_classify_name(name, strlen(name))) {
        case OZ_NAME_TENSOR: {
            int rc = take_name(r, i, name);
            if (rc) return rc;
            break;
        }
        case OZ_NAME_RESERVED:
        case OZ_NAME_MODEL: /* "dir/__MODEL_PROTO" beside the model */
            return oz_err(ONNXZIP_ENAME, -1, "%s: entry '%s' has a reserved name (\"__\" prefix) unknown to this "
                          "version; refusing to drop or copy it", r->in, shown);
        default: break;
        }
    }
    return 0;
}

/* Pass 2: every other name (tf2onnx's and PyTorch's tensor names: dots,
 * dashes, slashes, colons) becomes the first free name of the spec's
 * mapping (section 7.2), in zip order; the model is rewritten to match. */
static int map_names(repack *r)
{
    char buf[OZ_MAX_NAME + 1];
    for (zip_int64_t i = 0; i < r->n; i++) {
        const char *name = local_name(r, i);
        if (!name || r->names[i] || oz_classify_name(name, strlen(name)) == OZ_NAME_FILLER) continue;
        uint32_t had;
        unsigned k = 0;
        int rc;
        do rc = onnxzip_entry_name_for(name, k++, buf, sizeof buf);
        while (rc >= 0 && !oz_strmap_get(&r->taken, buf, strlen(buf), &had));
        if (rc < 0 || (rc = take_name(r, i, buf))) return rc;
    }
    return 0;
}

static int ref_fail(const repack *r, const oz_tensor_info *t, const char *why, oz_span what)
{
    char name[OZ_PRINTABLE_CAP], shown[OZ_PRINTABLE_CAP];
    oz_printable(t->name.p, t->name.len, name, sizeof name);
    oz_printable(what.p, what.len, shown, sizeof shown);
    return oz_err(ONNXZIP_EREF, -1, "%s: tensor '%s': %s '%s'", r->in, name, why, shown);
}

/* The index of the copied entry that `ref` (a location, or a PyTorch tensor
 * name) names relative to the model's directory ("./" allowed); -1: none. */
static zip_int64_t find_entry(const repack *r, oz_span ref)
{
    while (ref.len >= 2 && ref.p[0] == '.' && ref.p[1] == '/') ref.p += 2, ref.len -= 2;
    char *full = malloc(r->dir + ref.len + 1);
    if (!full) return -1;
    memcpy(full, r->model_name, r->dir);
    memcpy(full + r->dir, ref.p, ref.len);
    full[r->dir + ref.len] = '\0';
    zip_int64_t i = memchr(ref.p, 0, ref.len) ? -1 : zip_name_locate(r->za, full, ZIP_FL_ENC_RAW);
    free(full);
    return i >= 0 && r->names[i] ? i : -1;
}

static int is_placeholder(const oz_tensor_info *t)
{
    static const char mark[] = "__EXTERNAL"; /* PyTorch's ZIP_ARCHIVE: the data is entry <tensor name> */
    return t->data_location == 0 && t->has_raw && t->raw.len == sizeof mark - 1 && !memcmp(t->raw.p, mark, t->raw.len);
}

/* A reference to entry i, keeping offset, length and checksum. */
static int refer(repack *r, const oz_tensor_info *t, zip_int64_t i, oz_rewrite *rw)
{
    rw->action = OZ_EXTERNAL;
    rw->location = r->names[i];
    if ((rw->has_offset = t->has_offset) && oz_parse_decimal(t->offset, &rw->offset))
        return ref_fail(r, t, "external_data offset is not a decimal number:", t->offset);
    if ((rw->has_length = t->has_length) && oz_parse_decimal(t->length, &rw->length))
        return ref_fail(r, t, "external_data length is not a decimal number:", t->length);
    free(r->checksum);
    r->checksum = t->has_checksum ? oz_strndup((const char *)t->checksum.p, t->checksum.len) : NULL;
    if (t->has_checksum && !r->checksum) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    rw->checksum = r->checksum;
    r->rewrites++;
    return 0;
}

static int visit(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    repack *r = ctx;
    if (t->data_location == 1 && t->has_location) {
        zip_int64_t i = find_entry(r, t->location);
        if (i < 0) return ref_fail(r, t, "its external data is not an entry of the zip:", t->location);
        if (strlen(r->names[i]) == t->location.len && !memcmp(r->names[i], t->location.p, t->location.len))
            return 0; /* as it was */
        return refer(r, t, i, rw);
    }
    if (!is_placeholder(t)) return 0;
    zip_int64_t i = t->name.len ? find_entry(r, t->name) : -1;
    if (i >= 0) return refer(r, t, i, rw);
    uint64_t n, bytes;
    if (!oz_dims_product(t->dims, t->ndims, &n) && !oz_dtype_nbytes(t->data_type, n, &bytes) && bytes == t->raw.len)
        return 0; /* ten bytes that happen to read "__EXTERNAL" */
    return ref_fail(r, t, "its raw_data is PyTorch's placeholder \"__EXTERNAL\", but the zip has no entry named",
                    t->name);
}

/* The model the archive gets: its references follow the renamed entries. */
static int rewrite_model(repack *r)
{
    oz_walk w = { .visit = visit, .ctx = r, .out = &r->rewritten, .path = r->in, .base = r->model_buf };
    return oz_walk_model(&w, r->model_buf, r->model_len);
}

/* ---- a package re-zipped (spec 19): its manifest says what each entry is ---- */

/* Entry i whole into memory (a model or the manifest: at most 2 GiB). */
static int read_whole(repack *r, zip_int64_t i, const char *name, uint8_t **out, size_t *len)
{
    r->model = i;
    r->model_name = name;
    free(r->model_buf);
    r->model_buf = NULL;
    int rc = read_model(r);
    *out = r->model_buf;
    *len = r->model_len;
    r->model_buf = NULL;
    return rc;
}

/* The manifest's line for `name` of kind `key` ("model", "file"), or NULL. */
static char *manifest_line(char *text, const char *key, const char *name)
{
    size_t k = strlen(key), n = strlen(name);
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, k) && l[k] == '\t' && !strncmp(l + k + 1, name, n) &&
            (l[k + 1 + n] == '\t' || l[k + 1 + n] == '\n'))
            return l + k + 1 + n;
    return NULL;
}

/* A model's data files and origin, from its manifest lines, into the writer. */
static int copy_origin(repack *r, char *text, const char *name)
{
    char *data = manifest_line(text, "model", name), *origin = manifest_line(text, "origin", name);
    if (!data || *data != '\t') return 0;
    const char *names[1024];
    size_t n = 0;
    char *end = strchr(data, '\n'), *copy = oz_strndup(data + 1, end ? (size_t)(end - data - 1) : strlen(data + 1));
    char *o = origin && *origin == '\t' ? oz_strndup(origin + 1, strcspn(origin + 1, "\n")) : NULL;
    if (!copy) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (char *p = copy; p && n < 1024; n++) {
        names[n] = p;
        if ((p = strchr(p, '\t'))) *p++ = '\0';
    }
    int rc = oz_pkg_writer_origin(oz_writer_package(r->w), name, names, n, o);
    free(copy);
    free(o);
    return rc;
}

static int copy_package(repack *r, zip_int64_t manifest)
{
    uint8_t *text = NULL, *m = NULL;
    size_t len = 0, mlen = 0;
    int rc = read_whole(r, manifest, "__PACKAGE", &text, &len);
    char *t = rc ? NULL : oz_strndup((const char *)text, len);
    if (!rc && !t) rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    for (int models = 0; models < 2 && !rc; models++) /* files and tensors first, then the models */
        for (zip_int64_t i = 0; i < r->n && !rc; i++) {
            const char *name = zip_get_name(r->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
            size_t nl = name ? strlen(name) : 0;
            if (!name || i == manifest || (nl && name[nl - 1] == '/') || !strncmp(name, "__PAD_", 6)) continue;
            int is_model = manifest_line(t, "model", name) != NULL;
            if (is_model != models) continue;
            if (is_model) {
                if (!(rc = read_whole(r, i, name, &m, &mlen))) rc = onnxzip_writer_add_model(r->w, name, m, mlen);
                free(m);
                m = NULL;
                if (!rc) rc = copy_origin(r, t, name);
                continue;
            }
            uint64_t size;
            if ((rc = open_entry(r, (zip_uint64_t)i, name, &size))) break;
            rc = manifest_line(t, "file", name) ? oz_writer_add_file_stream(r->w, name, size, read_entry, r)
                                                 : oz_writer_add_stream(r->w, name, size, read_entry, r);
            close_entry(r);
        }
    char *def = rc ? NULL : strstr(t, "\ndefault\t"); /* the header line comes first */
    if (def && !rc) {
        char *path = oz_strndup(def + 9, strcspn(def + 9, "\n"));
        rc = path ? onnxzip_writer_set_default_model(r->w, path) : oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
        free(path);
    }
    free(text);
    free(t);
    return rc;
}

static int copy_entries(repack *r)
{
    r->n = zip_get_num_entries(r->za, 0);
    zip_int64_t manifest = zip_name_locate(r->za, "__PACKAGE", ZIP_FL_ENC_RAW);
    if (manifest >= 0) return copy_package(r, manifest);
    int rc = find_model(r);
    if (!rc && !(r->names = calloc((size_t)r->n, sizeof *r->names)))
        rc = oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    if (!rc) rc = keep_names(r);
    if (!rc) rc = map_names(r);
    if (!rc) rc = read_model(r);
    if (!rc) rc = rewrite_model(r);
    for (zip_int64_t i = 0; !rc && i < r->n; i++) {
        if (!r->names[i]) continue;
        uint64_t size;
        const char *name = zip_get_name(r->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
        if ((rc = open_entry(r, (zip_uint64_t)i, name, &size))) break;
        rc = oz_writer_add_stream(r->w, r->names[i], size, read_entry, r);
        close_entry(r);
    }
    if (!rc && r->rewrites) rc = onnxzip_writer_set_model(r->w, r->rewritten.p, r->rewritten.len);
    else if (!rc) rc = onnxzip_writer_set_model(r->w, r->model_buf, r->model_len);
    return rc;
}

static void repack_free(repack *r)
{
    for (zip_int64_t i = 0; r->names && i < r->n; i++) free(r->names[i]);
    free(r->names);
    oz_strmap_free(&r->taken);
    free(r->model_buf);
    free(r->checksum);
    oz_buf_free(&r->rewritten);
}

int onnxzip_repack(const char *in_path, const char *out_path, const onnxzip_write_options *opts)
{
    if (!in_path || !out_path || !*in_path || !*out_path)
        return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_repack: NULL or empty path");
    int rc = oz_check_alignment(opts ? opts->alignment : 64);
    if (rc) return rc;
    oz_stat st;
    if (oz_sys_stat(in_path, &st))
        return oz_err_sys(ONNXZIP_EIO, -1, in_path, "%s: cannot open: %s", in_path, strerror(errno));
    if (st.kind != OZ_KIND_REG) return oz_err_not_regular(in_path, st.kind);
    if (st.size == 0) return oz_err(ONNXZIP_ENOTZIP, -1, "%s: empty file, not a zip archive", in_path);
    if (oz_is_package(in_path)) /* kept whole: its models, files and manifest (spec 19) */
        return oz_package_copy(in_path, out_path, opts, NULL, NULL, 0);
    oz_input in = { .dev = st.dev, .ino = st.ino, .role = "the input archive", .path = in_path };
    if ((rc = oz_output_check(OZ_AT_CWD, NULL, out_path, &in, 1))) return rc;
    int zerr = 0;
    repack r = { .in = in_path, .out = out_path };
    oz_strmap_init(&r.taken, 1);
    if (!(r.za = zip_open(in_path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr))) {
        if (cut_short(in_path)) return ONNXZIP_ETRUNC;
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        rc = zip_fail(&ze, in_path, NULL, "cannot open as a zip archive");
        zip_error_fini(&ze);
        return rc;
    }
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    if (opts) o = *opts;
    if (zip_name_locate(r.za, "__PACKAGE", ZIP_FL_ENC_RAW) >= 0) o.flags |= ONNXZIP_WRITE_PACKAGE;
    if (!(rc = onnxzip_writer_create(out_path, &o, &r.w))) {
        rc = copy_entries(&r);
        if (!rc) rc = oz_output_check(OZ_AT_CWD, NULL, out_path, &in, 1); /* once more before the rename */
        if (!rc) rc = onnxzip_writer_finish(&r.w);
        onnxzip_writer_abort(&r.w);
    }
    zip_discard(r.za);
    repack_free(&r);
    return rc;
}
#endif /* ONNXZIP_HAVE_LIBZIP */

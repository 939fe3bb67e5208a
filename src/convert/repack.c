/* onnxzip_repack(): any zip holding an onnxzip model (e.g. one re-zipped with
 * deflate by another tool), read through libzip, rewritten by the aligned
 * writer. Entries are decompressed and streamed; only the model is held. */
#include "common/internal.h"

#if !ONNXZIP_HAVE_LIBZIP
int onnxzip_repack(const char *in_path, const char *out_path, const onnxzip_write_options *opts)
{
    (void)out_path, (void)opts;
    return oz_err(ONNXZIP_EUNSUPPORTED, -1, "%s: cannot repack: this build of onnxzip has no libzip "
                  "(-Dlibzip=disabled), which reads foreign and compressed zips", in_path ? in_path : "(null)");
}
#else
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <zip.h>

#include "common/entry_name.h"
#include "common/outputs.h"
#include "common/sys.h"
#include "read/zip_diagnose.h"
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
    zip_int64_t model; /* index of __MODEL_PROTO */
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

/* Reads the model whole (at most 2 GiB by the spec) and hands it to the writer. */
static int copy_model(repack *r, zip_uint64_t i)
{
    uint64_t size;
    int rc = open_entry(r, i, OZ_MODEL_NAME, &size);
    if (rc) return rc;
    if (size > OZ_MAX_MODEL) {
        close_entry(r);
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: entry '%s' of %llu bytes exceeds protobuf's 2 GiB limit", r->in,
                      OZ_MODEL_NAME, (unsigned long long)size);
    }
    uint8_t *buf = malloc(size ? (size_t)size : 1);
    if (!buf) {
        close_entry(r);
        return oz_err(ONNXZIP_ENOMEM, -1, "%s: out of memory for the model (%llu bytes)", r->in,
                      (unsigned long long)size);
    }
    size_t done = 0, got = 1;
    uint8_t probe;
    while (!rc && done < size && got) {
        rc = read_entry(r, buf + done, (size_t)size - done, &got);
        done += got;
    }
    if (!rc && done < size)
        rc = oz_err(ONNXZIP_ETRUNC, -1, "%s: entry '%s' ended %llu bytes early", r->in, OZ_MODEL_NAME,
                    (unsigned long long)(size - done));
    if (!rc) rc = read_entry(r, &probe, 1, &got); /* reading the end checks the CRC */
    if (!rc && got)
        rc = oz_err(ONNXZIP_ESIZE, -1, "%s: entry '%s' holds more than its %llu bytes", r->in, OZ_MODEL_NAME,
                    (unsigned long long)size);
    close_entry(r);
    if (!rc) rc = onnxzip_writer_set_model(r->w, buf, (size_t)size);
    free(buf);
    return rc;
}

/* Which entries are copied: tensor entries; fillers are dropped (the writer
 * makes its own); other reserved names cannot be carried over. */
static int check_name(repack *r, zip_int64_t i, const char *name, oz_name_class *cls)
{
    char shown[OZ_PRINTABLE_CAP];
    oz_printable(name, strlen(name), shown, sizeof shown);
    *cls = oz_classify_name(name, strlen(name));
    switch (*cls) {
    case OZ_NAME_TENSOR:
        if (oz_writer_name_taken(r->w, name))
            return oz_err(ONNXZIP_EDUPNAME, -1, "%s: entry name '%s' is already used by an earlier entry "
                          "(ignoring case)", r->in, shown);
        return 0;
    case OZ_NAME_MODEL:
        if (i != r->model)
            return oz_err(ONNXZIP_EDUPNAME, -1, "%s: more than one %s entry", r->in, OZ_MODEL_NAME);
        return 0;
    case OZ_NAME_FILLER:
        return 0;
    case OZ_NAME_RESERVED:
        return oz_err(ONNXZIP_ENAME, -1, "%s: entry '%s' has a reserved name (\"__\" prefix) unknown to this "
                      "version; refusing to drop or copy it", r->in, shown);
    case OZ_NAME_TOO_LONG:
        return oz_err(ONNXZIP_ELIMIT, -1, "%s: entry name '%s' is longer than %d bytes", r->in, shown, OZ_MAX_NAME);
    default:
        return oz_err(ONNXZIP_ENAME, -1, "%s: entry '%s' is not a valid onnxzip entry name (a C identifier of "
                      "1-255 bytes not starting with \"__\")", r->in, shown);
    }
}

static int copy_entries(repack *r)
{
    zip_int64_t model = r->model = zip_name_locate(r->za, OZ_MODEL_NAME, ZIP_FL_ENC_RAW);
    if (model < 0) /* tf2onnx names it so: the same model, under another name */
        model = r->model = zip_name_locate(r->za, OZ_MODEL_NAME ".onnx", ZIP_FL_ENC_RAW);
    zip_int64_t n = zip_get_num_entries(r->za, 0);
    if (model < 0) {
        const char *first = n > 0 ? zip_get_name(r->za, 0, ZIP_FL_ENC_RAW) : "";
        char shown[OZ_PRINTABLE_CAP];
        oz_printable(first ? first : "", first ? strlen(first) : 0, shown, sizeof shown);
        return oz_err_no_model(r->in, n > 0 ? (uint64_t)n : 0, shown);
    }
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(r->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
        if (!name) return zip_fail(zip_get_error(r->za), r->in, NULL, "cannot read an entry name");
        oz_name_class cls = OZ_NAME_MODEL;
        int rc = i == model ? 0 : check_name(r, i, name, &cls);
        if (rc) return rc;
        if (cls != OZ_NAME_TENSOR) continue;
        uint64_t size;
        if ((rc = open_entry(r, (zip_uint64_t)i, name, &size))) return rc;
        rc = oz_writer_add_stream(r->w, name, size, read_entry, r);
        close_entry(r);
        if (rc) return rc;
    }
    return copy_model(r, (zip_uint64_t)model);
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
    oz_input in = { .dev = st.dev, .ino = st.ino, .role = "the input archive", .path = in_path };
    if ((rc = oz_output_check(OZ_AT_CWD, NULL, out_path, &in, 1))) return rc;
    int zerr = 0;
    repack r = { .in = in_path, .out = out_path };
    if (!(r.za = zip_open(in_path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr))) {
        if (cut_short(in_path)) return ONNXZIP_ETRUNC;
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        rc = zip_fail(&ze, in_path, NULL, "cannot open as a zip archive");
        zip_error_fini(&ze);
        return rc;
    }
    if (!(rc = onnxzip_writer_create(out_path, opts, &r.w))) {
        rc = copy_entries(&r);
        if (!rc) rc = oz_output_check(OZ_AT_CWD, NULL, out_path, &in, 1); /* once more before the rename */
        if (!rc) rc = onnxzip_writer_finish(&r.w);
        onnxzip_writer_abort(&r.w);
    }
    zip_discard(r.za);
    return rc;
}
#endif /* ONNXZIP_HAVE_LIBZIP */

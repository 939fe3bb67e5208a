/*
 * libzip_oracle — checks an onnxzip archive with libzip, an independent zip
 * implementation, as a test oracle.
 *
 *   libzip_oracle ARCHIVE [--expect-entries N]
 *
 * Opens ARCHIVE with ZIP_RDONLY | ZIP_CHECKCONS (libzip then compares every
 * local header with its central record and checks that entries do not
 * overlap), requires every entry to be STORED and unencrypted, reads every
 * entry to its end (libzip checks the CRC-32 when a read reaches the end),
 * cross-checks the byte count read with zip_stat, and requires the last
 * entry to be "__MODEL_PROTO". Prints
 *   libzip: N entries, B bytes, CRC ok
 * and exits 0, or prints the failure (with libzip's error) and exits 1.
 * Usage errors exit 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define CHUNK_SIZE ((zip_uint64_t)1 << 20)
#define MODEL_ENTRY "__MODEL_PROTO"

static int fail_archive(const char *path, const char *what, zip_t *za)
{
    fprintf(stderr, "libzip_oracle: %s: %s: %s\n", path, what, zip_strerror(za));
    return 1;
}

static int fail_file(const char *path, zip_uint64_t index, const char *name, const char *what,
                     zip_file_t *zf)
{
    fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': %s: %s\n", path, index,
            name ? name : "?", what, zf ? zip_file_strerror(zf) : "");
    return 1;
}

/* Reads entry `index` to its end; returns 0 or 1 (failure printed). */
static int read_entry(zip_t *za, const char *path, zip_uint64_t index, unsigned char *buf,
                      zip_uint64_t *total_bytes)
{
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za, index, 0, &st) != 0) {
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 ": zip_stat_index: %s\n", path,
                index, zip_strerror(za));
        return 1;
    }
    const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
                              ZIP_STAT_COMP_METHOD | ZIP_STAT_CRC | ZIP_STAT_ENCRYPTION_METHOD;
    if ((st.valid & need) != need) {
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 ": zip_stat lacks fields (valid=0x%"
                PRIx64 ")\n", path, index, (uint64_t)st.valid);
        return 1;
    }
    if (st.comp_method != ZIP_CM_STORE) {
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': method %d, not STORE\n",
                path, index, st.name, (int)st.comp_method);
        return 1;
    }
    if (st.encryption_method != ZIP_EM_NONE) {
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': encrypted (method %d)\n",
                path, index, st.name, (int)st.encryption_method);
        return 1;
    }
    if (st.comp_size != st.size) {
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': stored entry with "
                "compressed size %" PRIu64 " != size %" PRIu64 "\n", path, index, st.name,
                (uint64_t)st.comp_size, (uint64_t)st.size);
        return 1;
    }

    zip_file_t *zf = zip_fopen_index(za, index, 0);
    if (zf == NULL) {
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': zip_fopen_index: %s\n",
                path, index, st.name, zip_strerror(za));
        return 1;
    }
    zip_uint64_t got = 0;
    for (;;) {
        zip_int64_t n = zip_fread(zf, buf, CHUNK_SIZE);
        if (n < 0) {
            int rc = fail_file(path, index, st.name, "zip_fread", zf);
            zip_fclose(zf);
            return rc;
        }
        if (n == 0)
            break;
        got += (zip_uint64_t)n;
        if (got > st.size) {
            zip_fclose(zf);
            fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': read more than its "
                    "size %" PRIu64 "\n", path, index, st.name, (uint64_t)st.size);
            return 1;
        }
    }
    int err = zip_fclose(zf);
    if (err != 0) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, err);
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': zip_fclose: %s\n", path,
                index, st.name, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return 1;
    }
    if (got != st.size) {
        fprintf(stderr, "libzip_oracle: %s: entry %" PRIu64 " '%s': read %" PRIu64
                " bytes, zip_stat says %" PRIu64 "\n", path, index, st.name, got,
                (uint64_t)st.size);
        return 1;
    }
    *total_bytes += got;
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: libzip_oracle ARCHIVE [--expect-entries N]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int have_expect = 0;
    zip_uint64_t expect = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-entries") == 0) {
            if (i + 1 >= argc)
                return usage();
            char *end = NULL;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (errno != 0 || end == argv[i] || *end != '\0')
                return usage();
            expect = (zip_uint64_t)v;
            have_expect = 1;
        } else if (path == NULL && argv[i][0] != '-') {
            path = argv[i];
        } else {
            return usage();
        }
    }
    if (path == NULL)
        return usage();

    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (za == NULL) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        fprintf(stderr, "libzip_oracle: %s: zip_open: %s\n", path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return 1;
    }

    int rc = 0;
    zip_int64_t count = zip_get_num_entries(za, 0);
    if (count < 0) {
        rc = fail_archive(path, "zip_get_num_entries", za);
        goto out;
    }
    zip_uint64_t n = (zip_uint64_t)count;
    if (have_expect && n != expect) {
        fprintf(stderr, "libzip_oracle: %s: %" PRIu64 " entries, expected %" PRIu64 "\n", path,
                n, expect);
        rc = 1;
        goto out;
    }
    if (n == 0) {
        fprintf(stderr, "libzip_oracle: %s: no entries (no " MODEL_ENTRY ")\n", path);
        rc = 1;
        goto out;
    }
    unsigned char *buf = malloc((size_t)CHUNK_SIZE);
    if (buf == NULL) {
        fprintf(stderr, "libzip_oracle: out of memory\n");
        rc = 1;
        goto out;
    }
    zip_uint64_t total = 0;
    for (zip_uint64_t i = 0; i < n && rc == 0; i++)
        rc = read_entry(za, path, i, buf, &total);
    free(buf);
    if (rc != 0)
        goto out;

    const char *last = zip_get_name(za, n - 1, ZIP_FL_ENC_RAW);
    if (last == NULL) {
        rc = fail_archive(path, "zip_get_name(last)", za);
        goto out;
    }
    if (strcmp(last, MODEL_ENTRY) != 0) {
        fprintf(stderr, "libzip_oracle: %s: last entry is '%s', not " MODEL_ENTRY "\n", path,
                last);
        rc = 1;
        goto out;
    }
    printf("libzip: %" PRIu64 " entries, %" PRIu64 " bytes, CRC ok\n", n, total);

out:
    if (za != NULL)
        zip_discard(za); /* read-only: never writes */
    return rc;
}

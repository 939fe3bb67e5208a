/* plan_sha256 [--names] [--model M] ARCHIVE|URL [PATH...]: the SHA-256 of the files
 * `onnxzip unpack ARCHIVE DIR` writes, from their plans
 * (onnxzip_file_plan_*, oz_plan_sha256) without writing them, one line per
 * file: "HEX SIZE PATH" (every file of the folder, or the PATHs given);
 * --names: only the paths, from onnxzip_file_plan_names(). A
 * URL (http://) is read through onnxzip_open_url(); --model opens the
 * handle holding model M (the others are then read through it). For the
 * tests (tests/packages/test_file_plan.py) and the benchmark
 * (tools/bench/bench_digest.py) until `onnxzip verify` hashes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

#include "convert/plan_sha256.h"

static int fail(int rc)
{
    fprintf(stderr, "plan_sha256: %s\n", onnxzip_last_error()->message);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *model = NULL;
    int i = 1, names = 0;
    if (argc > 1 && !strcmp(argv[1], "--names")) names = i++;
    if (argc > i + 1 && !strcmp(argv[i], "--model")) {
        model = argv[i + 1];
        i += 2;
    }
    if (i >= argc) {
        fputs("usage: plan_sha256 [--names] [--model M] ARCHIVE|URL [PATH...]\n", stderr);
        return 2;
    }
    onnxzip_archive *a = NULL;
    int rc;
    if (!strncmp(argv[i], "http://", 7)) {
        onnxzip_remote_options o;
        onnxzip_remote_options_init(&o);
        o.allow_http = 1;
        o.model = model;
        rc = onnxzip_open_url(argv[i], &o, &a);
    } else {
        rc = onnxzip_open_model(argv[i], model, 0, &a);
    }
    if (rc) return fail(rc);
    /* Every exit below frees what it made: the tests run this under ASan
     * with leaks fatal, refusals (a changed byte on the server) included. */
    onnxzip_file_plan *p = NULL;
    const char **paths = NULL;
    uint8_t (*out)[32] = NULL;
    size_t n = (size_t)(argc - i - 1);
    if (names) {
        if (!(rc = onnxzip_file_plan_names(a, &p)))
            for (size_t k = 0; k < onnxzip_file_plan_count(p); k++)
                printf("%s\n", onnxzip_file_plan_at(p, k)->path);
        goto done;
    }
    paths = (const char **)argv + i + 1;
    if (!n) { /* every file */
        if ((rc = onnxzip_file_plan_create(a, NULL, &p))) goto done;
        n = onnxzip_file_plan_count(p);
        paths = malloc((n ? n : 1) * sizeof *paths);
        for (size_t k = 0; paths && k < n; k++) paths[k] = onnxzip_file_plan_at(p, k)->path;
    }
    out = malloc((n ? n : 1) * sizeof *out);
    if (!paths || !out) {
        rc = ONNXZIP_ENOMEM;
        goto done;
    }
    if ((rc = oz_plan_sha256(a, paths, n, out))) goto done;
    for (size_t k = 0; k < n && !rc; k++) {
        onnxzip_file_plan *one = NULL;
        if ((rc = onnxzip_file_plan_create(a, paths[k], &one))) break;
        for (int b = 0; b < 32; b++) printf("%02x", out[k][b]);
        const onnxzip_planned_file *f = onnxzip_file_plan_at(one, 0);
        printf(" %llu %s\n", (unsigned long long)(f ? f->size : 0), paths[k]);
        onnxzip_file_plan_free(&one);
    }
done:
    if (rc) rc = fail(rc); /* before the frees, which may set another error */
    free(out);
    if (p && paths) free((void *)paths);
    onnxzip_file_plan_free(&p);
    onnxzip_close(&a);
    return rc;
}

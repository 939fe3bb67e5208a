/* Outputs through the API (spec 12.3): onnxzip_pack() checks its output
 * again just before the rename. A progress callback, called while payloads
 * are copied (after the first check passed), puts a directory, a FIFO or a
 * hard link to the input at the output path; pack must then fail with
 * ENOTREG / ESAMEFILE, leave that node as it is, the input intact and no
 * temporary file. Also the writer API: a special path is refused at create.
 * Windows: the directory cases only (no FIFOs; hard links not made). */
#define _DEFAULT_SOURCE /* mkfifo, link */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"
#include "testutil.h"

typedef enum { PUT_FIFO, PUT_DIR, PUT_LINK } put_what;

typedef struct swap {
    const char *out, *model;
    put_what what;
    int done;
} swap;

static void put_node(void *user, uint64_t done, uint64_t total)
{
    swap *s = user;
    (void)done;
    (void)total;
    if (s->done++) return;
#ifdef _WIN32 /* no FIFOs; hard links not tested there */
    int rc = s->what == PUT_DIR ? tu_mkdir(s->out) : -1;
#else
    int rc = s->what == PUT_FIFO ? mkfifo(s->out, 0666) : s->what == PUT_DIR ? tu_mkdir(s->out)
                                                         : link(s->model, s->out);
#endif
    CHECK(rc == 0);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = malloc(1 << 16);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static void changed_before_rename(const char *dir, const char *model, put_what what, int want, int kind)
{
    size_t n0, n1;
    uint8_t *before = slurp(model, &n0);
    char out[4096];
    snprintf(out, sizeof out, "%s", tu_path(dir, "out.onnxzip"));
    swap s = { out, model, what, 0 };
    onnxzip_pack_options o;
    onnxzip_pack_options_init(&o);
    o.size_threshold = 0;
    o.progress = put_node;
    o.progress_user = &s;
    CHECK_RC(onnxzip_pack(model, out, &o), want);
    CHECK(s.done > 0);
    oz_stat st, ms;
    CHECK(oz_sys_stat_at(OZ_AT_CWD, out, 0, &st) == 0 && st.kind == kind);
    if (what == PUT_LINK) CHECK(oz_sys_stat(model, &ms) == 0 && ms.ino == st.ino && ms.dev == st.dev);
    uint8_t *after = slurp(model, &n1);
    CHECK(before && after && n0 == n1 && !memcmp(before, after, n0));
    CHECK(tu_count_files(dir, ".tmp-") == 0);
    free(before);
    free(after);
    oz_sys_unlink_at(OZ_AT_CWD, out, what == PUT_DIR);
}

int main(void)
{
    char *dir = tu_tmpdir();
    tu_tensor t[2] = { { "a", 2, { 3000 }, 1, NULL, 3000 }, { "b", 2, { 5000 }, 1, NULL, 5000 } };
    size_t len;
    uint8_t *m = tu_model(t, 2, &len);
    char model[4096];
    snprintf(model, sizeof model, "%s", tu_path(dir, "m.onnx"));
    FILE *f = fopen(model, "wb");
    CHECK(f && fwrite(m, 1, len, f) == len);
    if (f) fclose(f);
    free(m);

    changed_before_rename(dir, model, PUT_DIR, ONNXZIP_ENOTREG, OZ_KIND_DIR);
#ifndef _WIN32
    changed_before_rename(dir, model, PUT_FIFO, ONNXZIP_ENOTREG, OZ_KIND_FIFO);
    changed_before_rename(dir, model, PUT_LINK, ONNXZIP_ESAMEFILE, OZ_KIND_REG);
    CHECK(strstr(onnxzip_last_error()->message, "the input model") != NULL);
#endif

    /* the writer API: an existing directory or FIFO is refused before
     * anything is created */
    const char *sub = tu_path(dir, "sub");
    CHECK(tu_mkdir(sub) == 0);
    onnxzip_writer *w = NULL;
    CHECK_RC(onnxzip_writer_create(sub, NULL, &w), ONNXZIP_ENOTREG);
    CHECK(w == NULL && tu_count_files(dir, ".tmp-") == 0);
#ifndef _WIN32
    const char *fifo = tu_path(dir, "fifo");
    CHECK(mkfifo(fifo, 0666) == 0);
    CHECK_RC(onnxzip_writer_create(fifo, NULL, &w), ONNXZIP_ENOTREG);
    CHECK(w == NULL && tu_count_files(dir, ".tmp-") == 0);
    struct stat st;
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
#endif

    tu_rmtree(dir);
    free(dir);
    return tu_finish("outputs");
}

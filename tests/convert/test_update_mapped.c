/* onnxzip_update_model() while the archive is open (mapped) elsewhere, here
 * by a handle of this process. POSIX: the update succeeds, and the handle
 * opened before still reads the old model's tensors (spec 15.5). Windows
 * cannot shorten a file while a view of it is mapped: the update fails with
 * ONNXZIP_EIO naming the cause, the file still reads as the old model, and
 * once the handle is closed the same update completes (spec 15.5). Both
 * models are checked byte for byte through a fresh open. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* 1 when the archive at `path` holds exactly `model`, with its weights. */
static int holds(const char *path, const uint8_t *model, size_t len, int n, uint64_t each)
{
    onnxzip_archive *a;
    if (onnxzip_open(path, ONNXZIP_OPEN_VERIFY, &a)) return 0;
    const void *mb;
    size_t ml;
    int ok = !onnxzip_model_bytes(a, &mb, &ml) && ml == len && !memcmp(mb, model, len) &&
             onnxzip_tensor_count(a) == (size_t)n;
    for (int i = 0; ok && i < n; i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, (size_t)i);
        ok = t->nbytes == each && ((const uint8_t *)t->data)[0] == (uint8_t)(i + 1);
    }
    onnxzip_close(&a);
    return ok;
}

int main(void)
{
    enum { N = 3 };
    const uint64_t each = 70000;
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "m.onnxzip");
    size_t len[2];
    uint8_t *model[2] = { tu_model_entries(N, each, 10, &len[0]), tu_model_entries(N, each, 5000, &len[1]) };
    uint8_t *data = malloc(each);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        memset(data, i + 1, each);
        CHECK_RC(onnxzip_writer_add_memory(w, name, data, each), 0);
    }
    CHECK_RC(onnxzip_writer_set_model(w, model[0], len[0]), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    CHECK(holds(path, model[0], len[0], N, each));

    onnxzip_archive *open_before;
    CHECK_RC(onnxzip_open(path, 0, &open_before), 0);
    const onnxzip_tensor *t = open_before ? onnxzip_tensor_at(open_before, 2) : NULL;
#ifdef _WIN32
    CHECK_RC(onnxzip_update_model(path, model[1], len[1]), ONNXZIP_EIO);
    CHECK(strstr(onnxzip_last_error()->message, "maps the archive") != NULL);
    CHECK(holds(path, model[0], len[0], N, each)); /* still the old model */
    CHECK(t && ((const uint8_t *)t->data)[each - 1] == 3);
    onnxzip_close(&open_before);
    CHECK_RC(onnxzip_update_model(path, model[1], len[1]), 0); /* nothing maps it now */
#else
    CHECK_RC(onnxzip_update_model(path, model[1], len[1]), 0);
    CHECK(t && ((const uint8_t *)t->data)[each - 1] == 3); /* tensor data never moves */
    onnxzip_close(&open_before);
#endif
    CHECK(holds(path, model[1], len[1], N, each));
    CHECK(tu_count_files(dir, ".tmp-") == 0);
    tu_rmtree(dir);
    free(dir);
    free(data);
    free(model[0]);
    free(model[1]);
    return tu_finish("update_mapped");
}

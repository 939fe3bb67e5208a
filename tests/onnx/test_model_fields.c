/* onnxzip_verify() requires what onnx.checker requires of the ModelProto
 * itself (ir_version > 0, opset_import from ir_version 3 on, a graph) and
 * names each missing field; onnxzip_open(), even with ONNXZIP_OPEN_VERIFY,
 * still accepts such models, and onnxzip_pack() refuses them with verify's
 * message. The CLI side, against onnx.checker itself, is
 * tests/cli/model_fields.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ir_version (field 1), graph (7, empty), opset_import (8, version 13): each
 * present when its flag is set. */
static size_t model(uint8_t *out, int ir, int graph, int opset)
{
    size_t n = 0;
    if (ir) out[n++] = 1 << 3, out[n++] = (uint8_t)ir;
    if (graph) out[n++] = 7 << 3 | 2, out[n++] = 0;
    if (opset) out[n++] = 8 << 3 | 2, out[n++] = 2, out[n++] = 2 << 3, out[n++] = 13;
    return n;
}

static int says(const char *phrase)
{
    return strstr(onnxzip_last_error()->message, phrase) != NULL;
}

/* A classic model in memory: open (also with ONNXZIP_OPEN_VERIFY) accepts it,
 * verify says exactly which of the three fields are missing. */
static void classic(const uint8_t *buf, size_t len, int no_ir, int no_opset, int no_graph)
{
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open_buffer(buf, len, ONNXZIP_OPEN_VERIFY, &a), 0);
    if (!a) return;
    int want = no_ir || no_opset || no_graph ? ONNXZIP_EPROTO : 0;
    CHECK_RC(onnxzip_verify(a), want);
    if (want) {
        CHECK(says(": model: "));
        CHECK(says("no ir_version") == no_ir);
        CHECK(says("no opset_import") == no_opset);
        CHECK(says("no graph") == no_graph);
        CHECK(onnxzip_last_error()->offset == 0);
    }
    onnxzip_close(&a);
}

/* The same model packed: refused with the message verify would give the
 * archive (naming its entry), and no output left. (Verify of such an archive,
 * made by libzip: tests/read/test_errors.c.) */
static void archive(const char *dir, const uint8_t *buf, size_t len)
{
    const char *in = tu_path(dir, "m.onnx"), *out = tu_path(dir, "m.onnxzip");
    char in_copy[4096], out_copy[4096], want[4200];
    snprintf(in_copy, sizeof in_copy, "%s", in);
    snprintf(out_copy, sizeof out_copy, "%s", out);
    FILE *f = fopen(in_copy, "wb");
    CHECK(f && fwrite(buf, 1, len, f) == len);
    if (f) fclose(f);
    CHECK_RC(onnxzip_pack(in_copy, out_copy, NULL), ONNXZIP_EPROTO);
    snprintf(want, sizeof want, "%s: entry '__MODEL_PROTO': no ir_version, no graph (", out_copy);
    CHECK(strstr(onnxzip_last_error()->message, want) == onnxzip_last_error()->message);
    CHECK(tu_count_files(dir, "") == 3); /* ".", "..", m.onnx: no output, no temporary file */
}

int main(void)
{
    uint8_t p00[100], m[16];
    for (size_t i = 0; i < sizeof p00; i += 2) p00[i] = 'P', p00[i + 1] = 0; /* field 10 = 0, fifty times */
    classic(p00, sizeof p00, 1, 0, 1);
    classic(m, model(m, 8, 1, 1), 0, 0, 0);
    classic(m, model(m, 0, 1, 1), 1, 0, 0);
    classic(m, model(m, 8, 1, 0), 0, 1, 0);
    classic(m, model(m, 3, 1, 0), 0, 1, 0);
    classic(m, model(m, 8, 0, 1), 0, 0, 1);
    classic(m, model(m, 8, 0, 0), 0, 1, 1);
    classic(m, model(m, 2, 1, 0), 0, 0, 0); /* IR < 3: no opset_import needed */
    char *dir = tu_tmpdir();
    archive(dir, p00, sizeof p00);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("verify_model_fields");
}

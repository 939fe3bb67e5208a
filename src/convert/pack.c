/* onnxzip_pack(): a classic model — single-file or with external data — to
 * an archive (its walk: pack_model.c), or a folder to a package (pack_dir.c). */
#include <stdio.h>
#include <stdlib.h>

#include "common/outputs.h"
#include "common/sys.h"
#include "write/zip_writer.h"
#include "convert/pack_model.h"

/* Every file pack reads — the model and each external data file resolved so
 * far — against the output (outputs.h). */
static int check_output(oz_pack *p, const char *out_path)
{
    oz_input *in;
    size_t n;
    int rc = oz_pack_inputs(p, &in, &n);
    if (rc) return rc;
    rc = oz_output_check(OZ_AT_CWD, NULL, out_path, in, n);
    free(in);
    return rc;
}

static int pack_mapped(oz_pack *p, const onnxzip_pack_options *opts, const char *out_path)
{
    /* A first walk without output opens every external data file (and totals
     * the bytes for progress): the output is checked against all the inputs
     * before anything is written. */
    int rc = oz_pack_measure(p);
    onnxzip_writer *w = NULL;
    if (!rc) rc = check_output(p, out_path);
    if (!rc) rc = onnxzip_writer_create(out_path, &(onnxzip_write_options){ .alignment = opts->alignment,
                       .flags = (opts->flags & ONNXZIP_PACK_NO_SYNC) ? ONNXZIP_WRITE_NO_SYNC : 0 }, &w);
    if (rc) return rc;
    oz_buf model = { 0 };
    rc = oz_pack_emit(p, w, &model);
    if (!rc) rc = onnxzip_writer_set_model(w, model.p, model.len);
    oz_buf_free(&model);
    if (!rc) rc = check_output(p, out_path); /* once more before the rename: the path may have changed */
    if (!rc) return onnxzip_writer_finish(&w);
    onnxzip_writer_abort(&w);
    return rc;
}

int onnxzip_pack(const char *in_path, const char *out_path, const onnxzip_pack_options *opts)
{
    if (!in_path || !out_path) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_pack: NULL path");
    oz_stat st;
    if (!oz_sys_stat(in_path, &st) && st.kind == OZ_KIND_DIR) return onnxzip_pack_dir(in_path, out_path, opts);
    onnxzip_pack_options def;
    onnxzip_pack_options_init(&def);
    if (!opts) opts = &def;
    int rc = oz_check_alignment(opts->alignment);
    if (rc) return rc;
    oz_pack *p;
    rc = oz_pack_open(&p, in_path, opts, NULL, NULL);
    if (!rc) rc = pack_mapped(p, opts, out_path);
    oz_pack_close(p);
    return rc;
}

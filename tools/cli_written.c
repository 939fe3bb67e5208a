/*
 * cli_written.c — outputs that a trust check must pass before they are
 * kept (spec 20.5: the bytes checked are the bytes kept, each transferred
 * once): written as FILE.unverified, then renamed into place or removed.
 * What checks them is the library's: onnxzip_signed_check_file() for
 * "extract --file F" (cmd_extract.c), onnxzip_signed_check_fetched() for
 * "fetch --model M" (cmd_fetch.c), as Python's fetch() does.
 */
#include "cli.h"
#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

char *cli_unverified_path(const char *out, const char *input)
{
    /* The rename at the end would replace whatever OUT is: refused here as
     * the library refuses such outputs (spec 12.3) when it writes them. */
    cli_file_info o, i;
    if (!cli_stat_path(out, &o)) {
        if (o.kind != CLI_KIND_REG) {
            cli_fail(ONNXZIP_ENOTREG, "%s: not a regular file (%s); nothing written", out,
                     o.kind == CLI_KIND_DIR ? "a directory" : o.kind == CLI_KIND_FIFO ? "a FIFO" : "a device or socket");
            return NULL;
        }
        if (input && !cli_stat_path(input, &i) && i.dev == o.dev && i.ino == o.ino) {
            cli_fail(ONNXZIP_ESAMEFILE, "%s: is the archive %s itself; nothing written", out, input);
            return NULL;
        }
    }
    size_t n = strlen(out) + sizeof ".unverified";
    char *tmp = malloc(n);
    if (tmp) snprintf(tmp, n, "%s.unverified", out);
    else cli_fail(ONNXZIP_ENOMEM, "out of memory");
    return tmp;
}

int cli_settle(char *tmp, const char *out, int rc)
{
    if (!rc && rename(tmp, out) != 0)
        rc = cli_fail(ONNXZIP_EIO, "%s: cannot rename to %s: %s", tmp, out, strerror(errno));
    if (rc) remove(tmp);
    free(tmp);
    return rc;
}

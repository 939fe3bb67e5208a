/* fuzz_remote: what onnxzip_open_url() does with a file's bytes, without a
 * network. The archive parser runs on the file's tail only, copied into its
 * own allocation (so that ASan sees any read before the window), widened to
 * where it asks, as remote.c does; the result is compared with the local
 * parser's on the whole input:
 *   - the local parser accepts => the remote one accepts the same entries,
 *     and each entry's local header passes the first-read check exactly
 *     when its predicted data offset is the real one;
 *   - the local open and verify accept => the in-order stream check
 *     (verify URL, fetch) accepts the whole input, fed in uneven pieces. */
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/remote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The remote parse: a tail of 4096 to 65536 bytes (chosen by the input's
 * first byte), then as many widenings as asked, at most three. */
static int parse_remote(const uint8_t *data, size_t size, oz_zip *z, uint8_t **win, uint64_t *win_off)
{
    size_t tail = 4096u << (size ? data[0] % 5 : 0);
    *win_off = size > tail ? size - tail : 0;
    for (int round = 0; round < 4; round++) {
        free(*win);
        *win = malloc(size - *win_off + 1);
        memcpy(*win, data + *win_off, size - *win_off);
        uint64_t need = 0;
        int rc = oz_zip_parse_remote(z, *win, *win_off, size, "fuzz", &need);
        if (rc <= 0) return rc;
        if (need >= *win_off) fuzz_fail("the remote parser asks for bytes it has");
        *win_off = need;
    }
    fuzz_fail("the remote parser asked for more bytes three times");
}

static void compare(const uint8_t *data, const oz_zip *local, const oz_zip *remote)
{
    if (local->n != remote->n || local->model_index != remote->model_index || local->cd_offset != remote->cd_offset)
        fuzz_fail("remote and local parsers see other directories");
    for (size_t i = 0; i < local->n; i++) {
        const onnxzip_entry *l = &local->entries[i].pub, *r = &remote->entries[i].pub;
        if (strcmp(l->name, r->name) || l->header_offset != r->header_offset || l->size != r->size ||
            l->crc32 != r->crc32)
            fuzz_fail("an entry differs between the remote and local parsers");
        uint64_t hlen = r->data_offset - r->header_offset;
        int ok = oz_zip_check_local(remote, i, data + r->header_offset, (size_t)hlen, "fuzz", NULL) == 0;
        if (ok != (l->data_offset == r->data_offset))
            fuzz_fail("the first-read header check disagrees with the local parser");
    }
}

/* The stream check over the whole input, as verify URL feeds it. */
static void stream(const uint8_t *data, size_t size, const oz_zip *z, uint8_t *win, uint64_t win_off)
{
    onnxzip_archive *local = NULL;
    int good = onnxzip_open_buffer(data, size, ONNXZIP_OPEN_VERIFY, &local) == 0;
    onnxzip_close(&local);
    oz_remote r = { .win = win, .win_off = win_off };
    onnxzip_archive a;
    memset(&a, 0, sizeof a);
    a.zip = *z;
    a.size = size;
    a.remote = &r;
    a.path = (char *)"fuzz";
    oz_stream s;
    int rc = oz_stream_init(&s, &a);
    for (size_t at = 0, step = 1; !rc && at < size; at += step, step = step * 3 % 4099 + 1)
        rc = oz_stream_feed(&s, data + at, step < size - at ? step : size - at);
    if (!rc) rc = oz_stream_finish(&s);
    oz_stream_free(&s);
    if (good && rc) fuzz_fail("the stream check refuses what open + verify accept");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oz_zip local, remote;
    uint8_t *win = NULL;
    uint64_t win_off = 0;
    int lrc = oz_zip_parse(&local, data, size, -1, "fuzz");
    int rrc = parse_remote(data, size, &remote, &win, &win_off);
    if (!lrc && rrc) fuzz_fail("the remote parser refuses what the local one accepts");
    if (!lrc) compare(data, &local, &remote);
    if (!rrc) stream(data, size, &remote, win, win_off);
    if (!lrc) oz_zip_free(&local);
    if (!rrc) oz_zip_free(&remote);
    free(win);
    return 0;
}

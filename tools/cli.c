/*
 * cli.c — error printing, strict number parsing, text and JSON escaping
 * and the progress line shared by the onnxzip subcommands.
 */
#include "cli.h"
#include "platform.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

/* ---------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------- */

int cli_lib_error(int status)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    const char *msg = e->message;

    /* The last error belongs to the call that failed only if the statuses
     * agree; otherwise fall back to the generic description. */
    if (!msg || !*msg || e->status != status)
        msg = onnxzip_strerror(status);
    cli_line(stderr, "onnxzip: %s [%s]", msg, onnxzip_status_name(status));
    return CLI_EXIT_FAIL;
}

int cli_fail(int status, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = cli_vformat(fmt, ap);
    va_end(ap);
    cli_line(stderr, "onnxzip: %s [%s]", msg ? msg : fmt, onnxzip_status_name(status));
    free(msg);
    return CLI_EXIT_FAIL;
}

int cli_usage_error(const char *cmd, void (*usage)(FILE *), const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = cli_vformat(fmt, ap);
    va_end(ap);
    cli_line(stderr, "onnxzip %s: %s", cmd, msg ? msg : fmt);
    free(msg);
    usage(stderr);
    return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------------- */

/* Parses the leading digits of s into *out; returns the end, or NULL when
 * there is no digit or the value overflows. */
static const char *parse_digits(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;

    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return NULL;
        v = v * 10 + d;
    }
    if (p == s)
        return NULL;
    *out = v;
    return p;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v;
    const char *end = parse_digits(s, &v);

    if (!end || *end)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    unsigned shift = 0;
    const char *end = parse_digits(s, &v);

    if (!end)
        return -1;
    switch (*end) {
    case '\0': break;
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    default: return -1;
    }
    if (shift && end[1])
        return -1;
    if (v > (UINT64_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

char *cli_vformat(const char *fmt, va_list ap)
{
    va_list again;
    int n;
    char *s;

    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, again);
    va_end(again);
    if (n < 0 || !(s = malloc((size_t)n + 1)))
        return NULL;
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

void cli_line(FILE *f, const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    s = cli_vformat(fmt, ap);
    va_end(ap);
    cli_put_escaped(f, s ? s : fmt);
    fputc('\n', f);
    free(s);
}

/* ---------------------------------------------------------------------------
 * Progress
 * ------------------------------------------------------------------------- */

/* "812.0 KiB", "1.5 GiB": one decimal in the largest fitting binary unit. */
static void cli_human_bytes(char *buf, size_t cap, uint64_t n)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)n;
    unsigned u = 0;

    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)n);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
}

int cli_progress_init(cli_progress_state *s, const char *label, int quiet)
{
    s->label = label;
    s->start = cli_now();
    s->last = 0;
    s->shown = 0;
    return !quiet && cli_is_terminal(2);
}

void cli_progress(void *user, uint64_t done, uint64_t total)
{
    cli_progress_state *s = user;
    double t = cli_now(), elapsed = t - s->start, rate;
    char d[32], tot[32], eta[32] = "--:--";

    if (s->shown && done < total && t - s->last < 0.25)
        return;
    s->last = t;
    rate = elapsed > 0 ? (double)done / 1048576.0 / elapsed : 0;
    if (rate > 0 && total >= done) {
        unsigned long left = (unsigned long)((double)(total - done) / 1048576.0 / rate + 0.5);
        if (left >= 3600)
            snprintf(eta, sizeof eta, "%lu:%02lu:%02lu", left / 3600, left / 60 % 60, left % 60);
        else
            snprintf(eta, sizeof eta, "%02lu:%02lu", left / 60, left % 60);
    }
    cli_human_bytes(d, sizeof d, done);
    cli_human_bytes(tot, sizeof tot, total);
    fprintf(stderr, "\r%s: %s / %s, %.1f MiB/s, ETA %s\033[K", s->label, d, tot, rate, eta);
    fflush(stderr);
    s->shown = 1;
}

void cli_progress_end(cli_progress_state *s)
{
    if (!s->shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    s->shown = 0;
}

int cli_require_in_out(const char *cmd, void (*usage)(FILE *), const char *in, const char *in_what,
                       const char *out, const char *out_what)
{
    if (!in)
        return cli_usage_error(cmd, usage, "missing %s", in_what);
    if (!out)
        return cli_usage_error(cmd, usage, "missing -o %s", out_what);
    if (!*in || !*out)
        return cli_usage_error(cmd, usage, "empty file name");
    return 0;
}

const char *cli_package_counts(const onnxzip_archive *a, char *buf, size_t cap)
{
    size_t n = onnxzip_member_count(a), models = 0;
    for (size_t i = 0; i < n; i++) models += onnxzip_member_at(a, i)->kind == ONNXZIP_MEMBER_MODEL;
    snprintf(buf, cap, "%zu model%s and %zu file%s", models, models == 1 ? "" : "s", n - models,
             n - models == 1 ? "" : "s");
    return buf;
}

/* Re-reads the new archive for the summary line, so that it shows what is
 * on disk rather than what was intended. */
int cli_archive_summary(const char *verb, const char *in, const char *out)
{
    onnxzip_archive *a = NULL;
    cli_file_info st;
    size_t in_entries = 0, n;
    int rc = onnxzip_open(out, 0, &a);

    if (rc != 0)
        return cli_lib_error(rc);
    if (cli_stat_path(out, &st) != 0) {
        int err = errno;
        onnxzip_close(&a);
        return cli_fail(ONNXZIP_EIO, "%s: %s", out, strerror(err));
    }
    n = onnxzip_tensor_count(a);
    for (size_t i = 0; i < n; i++)
        if (onnxzip_tensor_at(a, i)->storage == ONNXZIP_STORAGE_ENTRY)
            in_entries++;
    char counts[CLI_COUNTS];
    if (onnxzip_member_count(a))
        cli_line(stdout, "%s %s -> %s: a package of %s in %zu entries, %" PRIu64 " bytes", verb, in, out,
                 cli_package_counts(a, counts, sizeof counts), onnxzip_entry_count(a), st.size);
    else
        cli_line(stdout, "%s %s -> %s: %zu tensors in %zu entries, %" PRIu64 " bytes", verb, in, out,
                 in_entries, onnxzip_entry_count(a), st.size);
    onnxzip_close(&a);
    return CLI_EXIT_OK;
}


static int fd_is_path(int fd, const char *path)
{
    cli_file_info a, b;
    return !cli_stat_fd(fd, &a) && a.kind == CLI_KIND_REG && !cli_stat_path(path, &b) && a.dev == b.dev &&
           a.ino == b.ino;
}

int cli_stdout_check(const char *what, const char *const *inputs, size_t n)
{
    if (cli_is_terminal(1))
        return cli_fail(ONNXZIP_EINVAL, "standard output is a terminal; refusing to write %s to it (redirect it, "
                        "or use -o FILE)", what);
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && fd_is_path(1, inputs[i]))
            return cli_fail(ONNXZIP_ESAMEFILE, "standard output is %s, an input; refusing to write into it",
                            inputs[i]);
    return 0;
}

int cli_write_stdout(const void *data, uint64_t n)
{
    const uint8_t *p = data;
    for (uint64_t left = n; left > 0;) {
        long long k = cli_write(1, p, left < (1u << 30) ? (size_t)left : (1u << 30));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return cli_fail(ONNXZIP_EIO, "standard output: cannot write: %s", k < 0 ? strerror(errno) : "no progress");
        p += k;
        left -= (uint64_t)k;
    }
    return CLI_EXIT_OK;
}

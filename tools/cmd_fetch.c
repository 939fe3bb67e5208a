/*
 * cmd_fetch.c — "onnxzip fetch": download a remote archive to a local file,
 * verified as it streams, resumable after an interruption.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onnxzip/onnxzip.h>

static void usage(FILE *f)
{
    fputs("usage: onnxzip fetch URL -o FILE [--tensors PATTERN]...\n"
          "\n"
          "Downloads the archive at URL to FILE: byte for byte, every local header\n"
          "and every entry's CRC-32 and XXH3 checked as the bytes arrive, into\n"
          "FILE.part, renamed to FILE only when complete. An interrupted download\n"
          "keeps FILE.part (and FILE.part.etag, naming the file it holds); running\n"
          "the same command again resumes it while the server still has that file.\n"
          "\n"
          "With --tensors, FILE is a new archive holding only the main graph's\n"
          "initializers whose names match a PATTERN (shell style: * and ?), each\n"
          "checked against the source's digests; the model declares the others as\n"
          "graph inputs. Only their entries are transferred.\n"
          "\n"
          "With --model PATH (a package), FILE is that model alone, as a single-\n"
          "model archive: only its tensors, the directory and the manifest are\n"
          "transferred.\n"
          "\n"
          "With --public-key or --certificate-chain the package's signature is\n"
          "checked, and the SHA-256 of the files FILE comes from against the signed\n"
          "statement (with --model: that model's model file and data files, as\n"
          "'onnxzip unpack' would write them; without: every file), each byte\n"
          "transferred once: FILE is written as FILE.unverified and renamed to\n"
          "FILE only when all match (removed otherwise). Not with --tensors.\n"
          "\n"
          "options:\n"
          "  -o, --output FILE   the archive to write\n"
          "  -t, --tensors PAT   keep the initializers matching PAT (repeatable)\n"
          "  -q, --quiet         no progress display\n"
          "  -h, --help          show this help\n", f);
    fputs(cli_trust_usage, f);
    fputs(cli_remote_usage, f);
}

#define MAX_PATTERNS 256

typedef struct patterns {
    const char *v[MAX_PATTERNS];
    size_t n;
} patterns;

typedef struct args {
    const char *url, *out;
    patterns tensors;
    int quiet;
    cli_trust_args trust;
    onnxzip_remote_options ro;
} args;

/* --tensors: one more pattern. */
static int add_pattern(const cli_parser *p, const cli_opt *o, const char *value, void *field)
{
    patterns *t = field;
    (void)o;
    if (t->n == MAX_PATTERNS)
        return cli_usage_error(p->c->name, p->c->usage, "more than %d --tensors", MAX_PATTERNS);
    t->v[t->n++] = value;
    return 0;
}

#define ARG(field) CLI_AT(args, field)

static const cli_opt options[] = {
    { .name = "output", .short_name = 'o', .kind = CLI_STRING, .at = ARG(out), .flags = CLI_ONCE },
    { .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, .at = ARG(quiet) },
    { .name = "tensors", .short_name = 't', .kind = CLI_CALL, .at = ARG(tensors), .call = add_pattern },
    CLI_TRUST_OPTIONS(args, trust),
    { .name = NULL },
};

static const cli_command command = { "fetch", usage, options, cli_remote_options, ARG(ro), { ARG(url) }, 1 };

/* The whole package with a trust: downloaded, then checked on disk
 * (nothing more is transferred). */
static int fetch_whole_signed(onnxzip_archive *h, const args *a, const onnxzip_trust *t, cli_progress_state *ps,
                              int show)
{
    char *tmp = cli_unverified_path(a->out, NULL);
    if (!tmp) return CLI_EXIT_FAIL;
    int rc = onnxzip_fetch(h, tmp, show ? cli_progress : NULL, ps);
    if (show) cli_progress_end(ps);
    if (rc) {
        free(tmp);
        return cli_lib_error(rc);
    }
    onnxzip_archive *local = NULL;
    rc = onnxzip_open_model(tmp, ONNXZIP_MODEL_NONE, 0, &local);
    rc = rc ? cli_lib_error(rc) : cli_trust_check(local, t, NULL, NULL);
    onnxzip_close(&local);
    if (rc) /* the message named the download's temporary name, now removed */
        cli_line(stderr, "onnxzip: %s: not written: %s does not match its signature", a->out,
                 onnxzip_archive_path(h));
    return cli_settle(tmp, a->out, rc);
}

/* One model with a trust: the signature first (through the URL: the
 * bundle only), the model fetched, then its files checked against the
 * statement from what was fetched (onnxzip_signed_check_fetched). */
static int fetch_model_signed(onnxzip_archive *h, const args *a, const onnxzip_trust *t, cli_progress_state *ps,
                              int show)
{
    onnxzip_signed *s = NULL;
    int rc = onnxzip_signed_open(h, t, &s);
    if (rc) return cli_lib_error(rc);
    char *tmp = cli_unverified_path(a->out, NULL);
    rc = tmp ? onnxzip_fetch_tensors(h, tmp, a->tensors.v, a->tensors.n, show ? cli_progress : NULL, ps)
             : CLI_EXIT_FAIL;
    if (show) cli_progress_end(ps);
    if (tmp && rc) {
        cli_lib_error(rc);
        free(tmp);
    } else if (tmp) {
        int c = onnxzip_signed_check_fetched(s, h, onnxzip_model_path(h), tmp);
        rc = cli_settle(tmp, a->out, c ? cli_lib_error(c) : 0);
    }
    onnxzip_signed_free(&s);
    return rc ? CLI_EXIT_FAIL : 0;
}

int cmd_fetch(int argc, char **argv)
{
    args a = { 0 };
    onnxzip_remote_options_init(&a.ro);
    int rc;
    if (cli_parse(&command, argc, argv, &a, &rc) ||
        (rc = cli_require_in_out(command.name, usage, a.url, "URL", a.out, "FILE")))
        return rc;
    if (!cli_is_url(a.url))
        return cli_usage_error(command.name, usage, "'%s' is not an http://, https:// or s3:// URL", a.url);
    /* A shard lacks the bytes its model's signed files are made of: the
     * check would read them apart from the bytes written (spec 20.5). */
    if (cli_trust_given(&a.trust) && a.tensors.n)
        return cli_usage_error(command.name, usage, "--tensors cannot be checked against a signature (a shard holds "
                               "part of the signed files): fetch --model M with the trust, then select from it");
    onnxzip_trust *t = NULL;
    if (cli_trust_given(&a.trust) && (rc = cli_trust_make(&a.trust, command.name, usage, &t)) != 0) return rc;
    onnxzip_archive *h = NULL;
    if ((rc = onnxzip_open_url(a.url, &a.ro, &h)) != 0) {
        onnxzip_trust_free(&t);
        return cli_lib_error(rc);
    }
    int whole_model = a.ro.model && !a.tensors.n;
    if (whole_model) /* one model of a package: all of its tensors, as an archive of its own */
        a.tensors.v[a.tensors.n++] = "*";
    cli_progress_state ps;
    int show = cli_progress_init(&ps, "fetching", a.quiet);
    if (t) {
        rc = whole_model ? fetch_model_signed(h, &a, t, &ps, show) : fetch_whole_signed(h, &a, t, &ps, show);
        onnxzip_trust_free(&t);
        if (rc) {
            onnxzip_close(&h);
            return rc;
        }
    } else {
        rc = a.tensors.n ? onnxzip_fetch_tensors(h, a.out, a.tensors.v, a.tensors.n, show ? cli_progress : NULL,
                                                 &ps)
                         : onnxzip_fetch(h, a.out, show ? cli_progress : NULL, &ps);
        if (show) cli_progress_end(&ps);
        if (rc) {
            cli_lib_error(rc);
            onnxzip_close(&h);
            return CLI_EXIT_FAIL;
        }
    }
    onnxzip_remote_stats st;
    onnxzip_remote_get_stats(h, &st);
    if (a.tensors.n) { /* what is on disk, and what it cost */
        rc = cli_archive_summary("fetched", onnxzip_archive_path(h), a.out);
        if (rc == CLI_EXIT_OK)
            cli_line(stdout, "received %llu of %llu bytes in %llu requests (%llu retries)",
                     (unsigned long long)st.bytes_received, (unsigned long long)st.file_size,
                     (unsigned long long)st.requests, (unsigned long long)st.retries);
        onnxzip_close(&h);
        return rc;
    }
    cli_line(stdout, "fetched %s -> %s: %zu entries, %zu tensors, %llu bytes, verified (%llu requests, %llu retries)",
             onnxzip_archive_path(h), a.out, onnxzip_entry_count(h), onnxzip_tensor_count(h),
             (unsigned long long)st.file_size, (unsigned long long)st.requests, (unsigned long long)st.retries);
    onnxzip_close(&h);
    return CLI_EXIT_OK;
}

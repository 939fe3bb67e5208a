/*
 * cli.h — helpers shared by the onnxzip command-line tool's subcommands.
 */
#ifndef ONNXZIP_TOOLS_CLI_H
#define ONNXZIP_TOOLS_CLI_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__MINGW32__)
/* MinGW-w64's C99 printf (__USE_MINGW_ANSI_STDIO), not msvcrt's */
#define CLI_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__)
#define CLI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CLI_PRINTF(fmt, args)
#endif

/* Exit codes: 1 for a failed operation, 2 for a bad command line. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* Subcommands: argv[0] is the subcommand's name. Return an exit code. */
int cmd_pack(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
int cmd_repack(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_set_model(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_sign(int argc, char **argv);

/* Prints "onnxzip: <last error message> [<status name>]" for a library
 * failure that returned `status`; returns CLI_EXIT_FAIL. */
int cli_lib_error(int status);

/* Prints "onnxzip: <formatted message> [<status name>]" for a failure the
 * tool detected itself, tagged like a library error so that scripts can
 * match every failure the same way; returns CLI_EXIT_FAIL. */
int cli_fail(int status, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Prints "onnxzip CMD: <formatted message>" to stderr, then the command's
 * usage to stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, void (*usage)(FILE *), const char *fmt, ...)
    CLI_PRINTF(3, 4);

/* Strict unsigned decimal: digits only, no sign, no blanks, no overflow.
 * Returns 0 on success, -1 otherwise. */
int cli_parse_u64(const char *s, uint64_t *out);

/* As cli_parse_u64() with an optional binary suffix K, M or G (either case,
 * 1024-based). */
int cli_parse_size(const char *s, uint64_t *out);

/* Writes `s` for a terminal: control characters and invalid UTF-8 bytes as
 * \xNN, "" for the empty string, - for NULL. Returns the number of columns used
 * (approximate for wide characters). With f == NULL only measures. */
size_t cli_put_text(FILE *f, const char *s);

/* cli_put_text() for a string that is neither NULL nor to be shown as "" when
 * empty (a formatted message). */
size_t cli_put_escaped(FILE *f, const char *s);

/* Formats like vsnprintf into a new string (free() it); NULL when out of
 * memory. */
CLI_PRINTF(1, 0) char *cli_vformat(const char *fmt, va_list ap);

/* Prints one formatted line and a newline, with control characters (C0,
 * DEL, C1) and bytes that are not UTF-8 written as \xNN, so that a file name
 * in it can neither break the line nor drive the terminal. Every line the
 * tool prints with a path or other outside text in it goes through here. */
void cli_line(FILE *f, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Progress of a long operation, for a library onnxzip_progress_fn: a "\r"
 * line on stderr with bytes done/total, MiB/s and the time left, redrawn at
 * most four times a second. */
typedef struct cli_progress_state {
    const char *label;  /* e.g. "unpacking" */
    double start, last; /* monotonic seconds */
    int shown;          /* a line is on the terminal */
} cli_progress_state;

/* Starts a display; returns 1 when it should be used: stderr is a terminal
 * and not `quiet`. Then pass cli_progress with `s` as the callback's user. */
int cli_progress_init(cli_progress_state *s, const char *label, int quiet);

/* Usage errors for a missing or empty input (`in_what` names it) or -o. */
int cli_require_in_out(const char *cmd, void (*usage)(FILE *), const char *in, const char *in_what,
                       const char *out, const char *out_what);

/* Prints "VERB IN -> OUT: T tensors in E entries, S bytes", re-reading OUT so
 * that the line shows what is on disk rather than what was intended. */
int cli_archive_summary(const char *verb, const char *in, const char *out);

/* "-o -": standard output must not be a terminal (`what` names the bytes,
 * e.g. "raw tensor bytes"), nor a regular file that is one of the `n` paths
 * in `inputs` (">>" into an input, ONNXZIP_ESAMEFILE). Returns 0, or prints
 * the error and returns the exit status. */
int cli_stdout_check(const char *what, const char *const *inputs, size_t n);

/* Writes all `n` bytes to standard output: 0, or prints and returns the exit
 * status. */
int cli_write_stdout(const void *data, uint64_t n);

/* An onnxzip_progress_fn; `user` is a cli_progress_state. */
void cli_progress(void *user, uint64_t done, uint64_t total);

/* Erases the line, if one is shown, so that the next output starts clean. */
void cli_progress_end(cli_progress_state *s);

/* Remote archives (cli_remote.c). Commands that take a URL parse
 * cli_remote_options as their shared group (options.h) into an
 * onnxzip_remote_options, and print cli_remote_usage in their help. */
#include <onnxzip/onnxzip.h>

#include "options.h"

extern const cli_opt cli_remote_options[];
extern const char cli_remote_usage[];

/* 1 when `s` is an http://, https:// or s3:// URL. */
int cli_is_url(const char *s);

/* onnxzip_open_url() for a URL, else onnxzip_open(). */
int cli_open(const char *path, const onnxzip_remote_options *o, onnxzip_archive **a);

/* "1 model and 5 files": the models and files among a package's members,
 * into buf (CLI_COUNTS bytes hold any two counts); returns buf. */
#define CLI_COUNTS 64
const char *cli_package_counts(const onnxzip_archive *a, char *buf, size_t cap);

/* Signed packages (cli_trust.c): the trust options, in a command's own
 * table through CLI_TRUST_OPTIONS (a command has one shared group, the
 * remote one), and cli_trust_usage in its help. */
typedef struct cli_trust_args {
    const char *public_key, *chain, *signature;
} cli_trust_args;

#define CLI_TRUST_OPTIONS(type, field)                                                                     \
    { .name = "public-key", .kind = CLI_TEXT, .at = CLI_AT(type, field.public_key), .flags = CLI_ONCE },  \
    { .name = "certificate-chain", .kind = CLI_TEXT, .at = CLI_AT(type, field.chain), .flags = CLI_ONCE }, \
    { .name = "signature", .kind = CLI_TEXT, .at = CLI_AT(type, field.signature), .flags = CLI_ONCE }

extern const char cli_trust_usage[];

/* 1 when any trust option was given: the command checks the signature. */
int cli_trust_given(const cli_trust_args *ta);

/* The trust the options name: their files read and added (a usage error
 * for --signature alone). 0 with *out set, or the exit status after
 * printing why, naming the option and its file. */
int cli_trust_make(const cli_trust_args *ta, const char *cmd, void (*usage)(FILE *), onnxzip_trust **out);

/* Opens the signature of the package `a` against `t` (onnxzip_signed_open)
 * and checks `path`'s files (a plain file, a model and its data files, or
 * NULL: every file) against it. 0 with *out set (when out is not NULL), or
 * CLI_EXIT_FAIL after printing the library's error. */
int cli_trust_check(onnxzip_archive *a, const onnxzip_trust *t, const char *path, onnxzip_signed **out);

/* Outputs with a trust are written as OUT.unverified and renamed to OUT
 * once checked (removed otherwise), so that OUT appears verified or not at
 * all: the temporary name (free() it; NULL after saying why: out of memory,
 * OUT an existing directory, FIFO or device, or the file `input` (NULL:
 * none) itself), and
 * the end: rc 0: tmp renamed to out, else tmp removed; frees tmp, returns
 * rc (or the rename's failure). */
char *cli_unverified_path(const char *out, const char *input);
int cli_settle(char *tmp, const char *out, int rc);



#endif /* ONNXZIP_TOOLS_CLI_H */

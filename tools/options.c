/*
 * options.c — the subcommands' command lines, parsed from their option
 * tables: see options.h.
 */
#include "options.h"
#include "cli.h"

#include <string.h>

/* Every command's: a table of its own, looked up last. */
static const cli_opt help_options[] = { { .name = "help", .short_name = 'h', .kind = CLI_FLAG }, { .name = NULL } };

static int takes_value(const cli_opt *o)
{
    return o->kind != CLI_FLAG && o->kind != CLI_BIT && o->kind != CLI_SET;
}

/* Whether `o` is one of the shared group's (its value errors print no usage). */
static int is_shared(const cli_command *c, const cli_opt *o)
{
    for (const cli_opt *s = c->shared; s && s->name; s++)
        if (s == o)
            return 1;
    return 0;
}

/* The first of o's long names, as messages show it. */
static int shown_len(const cli_opt *o)
{
    const char *bar = strchr(o->name, '|');
    return bar ? (int)(bar - o->name) : (int)strlen(o->name);
}

int cli_bad_value(const cli_parser *p, const cli_opt *o, const char *value, const char *why)
{
    if (value)
        cli_line(stderr, "onnxzip %s: --%.*s: '%s' %s", p->c->name, shown_len(o), o->name, value, why);
    else
        cli_line(stderr, "onnxzip %s: --%.*s: %s", p->c->name, shown_len(o), o->name, why);
    if (!is_shared(p->c, o))
        p->c->usage(stderr);
    return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------- */

static int set_number(const cli_parser *p, const cli_opt *o, const char *v, void *field)
{
    uint64_t n;
    int pow2 = o->kind == CLI_POW2;
    if (cli_parse_u64(v, &n) || n < o->min || n > o->max || (pow2 && (n & (n - 1)))) {
        char why[96];
        snprintf(why, sizeof why, pow2 ? "is not a power of two between %llu and %llu"
                                       : "is not a number from %llu to %llu",
                 (unsigned long long)o->min, (unsigned long long)o->max);
        return cli_bad_value(p, o, v, why);
    }
    if (pow2)
        *(uint32_t *)field = (uint32_t)n;
    else
        *(unsigned *)field = (unsigned)n;
    return 0;
}

static int set_choice(const cli_parser *p, const cli_opt *o, const char *v, void *field)
{
    for (int i = 0; o->choices[i]; i++)
        if (!strcmp(v, o->choices[i])) {
            *(int *)field = i;
            return 0;
        }
    return cli_bad_value(p, o, v, o->what);
}

static int set_string(const cli_parser *p, const cli_opt *o, const char *v, void *field)
{
    if (o->kind == CLI_TEXT && !*v)
        return cli_bad_value(p, o, NULL, "an empty value");
    if ((o->flags & CLI_ONCE) && *(const char **)field) { /* named as "-o" when it has a short name */
        char shown[3] = { '-', o->short_name, '\0' };
        return cli_usage_error(p->c->name, p->c->usage, "%s%.*s given twice", o->short_name ? shown : "--",
                               o->short_name ? 0 : shown_len(o), o->name);
    }
    *(const char **)field = v;
    return 0;
}

/* Stores the value (NULL for an option without one) of `o` in `field`. */
static int set_value(const cli_parser *p, const cli_opt *o, const char *v, void *field)
{
    switch (o->kind) {
    case CLI_FLAG: *(int *)field = 1; return 0;
    case CLI_BIT: *(uint32_t *)field |= (uint32_t)o->min; return 0;
    case CLI_SET: *(const char **)field = o->what; return 0;
    case CLI_TEXT:
    case CLI_STRING: return set_string(p, o, v, field);
    case CLI_UINT:
    case CLI_POW2: return set_number(p, o, v, field);
    case CLI_SIZE: {
        uint64_t n;
        if (cli_parse_size(v, &n) || n < o->min)
            return cli_bad_value(p, o, v, o->what);
        *(uint64_t *)field = n;
        return 0;
    }
    case CLI_CHOICE: return set_choice(p, o, v, field);
    case CLI_CALL: return o->call(p, o, v, field);
    }
    return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------------------
 * Words
 * ------------------------------------------------------------------------- */

/* Whether `name` (len bytes) is one of o's long names ("a|b"). */
static int long_match(const cli_opt *o, const char *name, size_t len)
{
    for (const char *n = o->name; n;) {
        const char *bar = strchr(n, '|');
        size_t k = bar ? (size_t)(bar - n) : strlen(n);
        if (k == len && !memcmp(n, name, len))
            return 1;
        n = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* The option `arg` names (a long name when `len`, else its short one), in
 * the command's table, the shared group or the help; *base: where its
 * table's fields are. NULL when none. */
static const cli_opt *find(const cli_command *c, const char *arg, size_t len, size_t *base)
{
    const cli_opt *tables[] = { c->options, c->shared, help_options };
    for (size_t t = 0; t < 3; t++)
        for (const cli_opt *o = tables[t]; o && o->name; o++)
            if (len ? long_match(o, arg, len) : o->short_name && o->short_name == arg[0]) {
                *base = t == 1 ? c->shared_at : 0;
                return o;
            }
    return NULL;
}

/* The option in argv word `arg` ("--name[=value]" or "-x[value]"): its
 * entry and value; 0, or the exit code after printing why. */
static int option_word(cli_parser *p, const char *arg, const cli_opt **o, const char **value, size_t *base)
{
    int is_long = arg[1] == '-';
    const char *name = arg + (is_long ? 2 : 1), *eq = is_long ? strchr(name, '=') : NULL;
    size_t len = is_long ? (eq ? (size_t)(eq - name) : strlen(name)) : 0;
    const char *inline_value = is_long ? (eq ? eq + 1 : NULL) : (arg[2] ? arg + 2 : NULL);
    *o = find(p->c, name, len, base);
    /* "-xvalue" only for options with a value: "-qv" is no flag bundle */
    if (!*o || (!is_long && inline_value && !takes_value(*o))) {
        cli_line(stderr, "onnxzip %s: unknown option '%.*s'", p->c->name, is_long ? (int)len + 2 : (int)strlen(arg),
                 arg);
        p->c->usage(stderr);
        return CLI_EXIT_USAGE;
    }
    *value = inline_value;
    if (takes_value(*o) && !*value && p->index < p->argc)
        *value = p->argv[p->index++];
    const char *why = !takes_value(*o) ? (inline_value ? "takes no value" : NULL) : *value ? NULL : "needs a value";
    if (!why)
        return 0;
    cli_line(stderr, "onnxzip %s: option '%.*s' %s", p->c->name, is_long ? (int)len + 2 : (int)strlen(arg), arg,
             why);
    p->c->usage(stderr);
    return CLI_EXIT_USAGE;
}

static int operand(cli_parser *p, const char *arg, void *args)
{
    if ((size_t)p->operands == p->c->noperands)
        return cli_usage_error(p->c->name, p->c->usage, "unexpected argument '%s'", arg);
    *(const char **)((char *)args + p->c->operands[p->operands++]) = arg;
    return 0;
}

/* cli_parse(): 0, -1 after the help, or the exit code. */
static int parse(const cli_command *c, int argc, char **argv, void *args)
{
    cli_parser p = { c, argc, argv, 1, 0, 0 };
    while (p.index < argc) {
        const char *arg = argv[p.index++], *value = NULL;
        if (!p.options_done && !strcmp(arg, "--")) {
            p.options_done = 1;
            continue;
        }
        if (p.options_done || arg[0] != '-' || arg[1] == '\0') {
            int rc = operand(&p, arg, args);
            if (rc)
                return rc;
            continue;
        }
        const cli_opt *o;
        size_t base = 0;
        int rc = option_word(&p, arg, &o, &value, &base);
        if (!rc && o == help_options) {
            c->usage(stdout);
            return -1;
        }
        if (!rc)
            rc = set_value(&p, o, value, (char *)args + base + o->at);
        if (rc)
            return rc;
    }
    return 0;
}

int cli_parse(const cli_command *c, int argc, char **argv, void *args, int *code)
{
    int rc = parse(c, argc, argv, args);
    *code = rc < 0 ? CLI_EXIT_OK : rc;
    return rc != 0;
}

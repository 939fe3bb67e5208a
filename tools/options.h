/*
 * options.h — the subcommands' command lines, parsed from tables.
 *
 * GNU style: options and operands in any order; "--name=value",
 * "--name value", "-x value", "-xvalue", and "--" ending the options; "-"
 * alone is an operand. Every command takes -h/--help. A command declares
 * its options in a table saying where each value goes in its arguments (a
 * struct of its own) and how it is checked; cli_parse() fills the struct,
 * or says what is wrong and how the command exits.
 */
#ifndef ONNXZIP_TOOLS_OPTIONS_H
#define ONNXZIP_TOOLS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an option's value is, and where it goes (the field at `at`). */
typedef enum cli_kind {
    CLI_FLAG,   /* no value; int = 1 */
    CLI_BIT,    /* no value; uint32_t |= `min` */
    CLI_SET,    /* no value; const char * = `what` */
    CLI_STRING, /* const char * = the value; with CLI_ONCE given at most once */
    CLI_TEXT,   /* const char * = the value, which may not be empty */
    CLI_UINT,   /* unsigned = the value, a decimal number from `min` to `max` */
    CLI_POW2,   /* uint32_t = the value, a power of two from `min` to `max` */
    CLI_SIZE,   /* uint64_t = the value, bytes with an optional K, M or G
                 * suffix (cli_parse_size), at least `min`; else `what` */
    CLI_CHOICE, /* int = the index of the value in `choices`; else `what` */
    CLI_CALL,   /* call(p, o, value, field): anything else */
} cli_kind;

enum { CLI_ONCE = 1 }; /* cli_opt.flags */

typedef struct cli_parser cli_parser;
typedef struct cli_opt cli_opt;

struct cli_opt {
    const char *name;      /* the long name, without "--"; "a|b": b is an
                            * old name of a (messages say a); NULL ends a table */
    char short_name;       /* 0 when there is none */
    cli_kind kind;
    size_t at;             /* the field: its offset in the arguments */
    uint64_t min, max;     /* bounds (CLI_UINT, CLI_POW2, CLI_SIZE); the bit (CLI_BIT) */
    const char *what;      /* why a bad value is refused: "is not a ..."; CLI_SET's string */
    const char *const *choices; /* CLI_CHOICE: the names, NULL-terminated */
    /* CLI_CALL: parses `value` into `field`; 0, or the exit code after
     * printing why (cli_bad_value()) */
    int (*call)(const cli_parser *p, const cli_opt *o, const char *value, void *field);
    unsigned flags;        /* CLI_ONCE */
};

/* A command's command line. */
typedef struct cli_command {
    const char *name;        /* "pack": messages begin "onnxzip pack: " */
    void (*usage)(FILE *);   /* the help, also printed after a usage error */
    const cli_opt *options;  /* the command's own */
    const cli_opt *shared;   /* a group of options several commands take
                              * (cli_remote_options), or NULL; a bad value of
                              * one prints no usage: the group's help is long
                              * and would push the message off the screen */
    size_t shared_at;        /* where the group's struct is in the arguments */
    size_t operands[2];      /* the fields (const char *) of the operands, in order */
    size_t noperands;        /* operands taken; one more is an error */
} cli_command;

/* CLI_SIZE's `what` for a byte count that may be 0. */
#define CLI_BYTE_COUNT "is not a byte count (a non-negative integer, optional suffix K, M or G)"

/* Where a field is: offsetof() in the command's argument struct. */
#define CLI_AT(type, field) offsetof(type, field)

/* The parse in progress, as CLI_CALL sees it. */
struct cli_parser {
    const cli_command *c;
    int argc;
    char **argv;
    int index;        /* the next argv element */
    int options_done; /* "--" seen */
    int operands;     /* operands stored so far */
};

/* Parses argv[1..argc) into `args` as `c` says: 0 when the command goes
 * on; else 1, and the command returns *code: CLI_EXIT_OK after --help
 * printed the usage to stdout, CLI_EXIT_USAGE after a bad command line
 * ("onnxzip CMD: ..." on stderr, then the usage), or a CLI_CALL's code. */
int cli_parse(const cli_command *c, int argc, char **argv, void *args, int *code);

/* Prints "onnxzip CMD: --NAME: 'VALUE' WHY" ('VALUE' left out when NULL),
 * then the usage unless o is a shared option; returns CLI_EXIT_USAGE. */
int cli_bad_value(const cli_parser *p, const cli_opt *o, const char *value, const char *why);

#endif /* ONNXZIP_TOOLS_OPTIONS_H */

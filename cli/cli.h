/* cli.h: the afdkit command-line framework shared by every subcommand.
 *
 * Conventions (docs/cli.md): the table goes to stdout and nothing else
 * does; errors are one line "afdkit: COMMAND: message" on stderr with exit 2
 * for usage/input errors and 1 for runtime failures; warnings are
 * "afdkit: COMMAND: warning: message".
 */
#ifndef AFD_CLI_H
#define AFD_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "afdkit.h"

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* An OpenMP directive that vanishes in a build without OpenMP (an unknown
 * #pragma is a warning, an error under --enable-werror). */
#if defined(_OPENMP)
#define CLI_OMP(directive) _Pragma(directive)
#else
#define CLI_OMP(directive)
#endif

/* ---- messages */

/* Printable excerpt of an argument for messages: at most CLI_EXCERPT_MAX
 * bytes, control and non-ASCII bytes as \xNN, "..." when cut.  Returns buf.
 * (Every message also cuts its quoted spans at CLI_EXCERPT_MAX bytes.) */
#define CLI_EXCERPT_MAX 40
const char *cli_excerpt(const char *s, char *buf, size_t cap);
/* The same for s[0..len) (a span of a longer argument). */
const char *cli_excerpt_n(const char *s, size_t len, char *buf, size_t cap);
/* Print "afdkit: CMD: message (see 'afdkit CMD --help')" and return 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Print "afdkit: CMD: message" and return 2 (bad input data, not usage). */
int cli_input_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Print "afdkit: CMD: message" and return 1. */
int cli_runtime_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* No feasible answer for valid input (an unstable queue, an SLO that no
 * pool meets, no split with positive goodput): every command follows the one
 * rule of docs/cli.md, exit 1 with "afdkit: CMD: message" naming the reason
 * and no table.  Call it before anything is printed on stdout.  Returns 1. */
int cli_infeasible(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* The cli_infeasible error of an unstable c-server queue whose offered
 * load a (named load: "lambda*D") is >= c: the smallest stable c, floor(a)
 * + 1, in full below 2^53, and "c > a" in 15 significant digits above,
 * where a + 1 is no double ("1e+308", not 309 digits); for an infinite a,
 * that no c makes it stable.  Whole numbers in messages are printed so:
 * "%.15g" (of nearbyint(v) where v may have a fraction) is "%.0f" below
 * 1e15 and exponent notation above.  Returns 1. */
int cli_unstable_queue(const char *cmd, const char *load, double c, double a);
/* Print "afdkit: CMD: warning: message". */
void cli_warn(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Print "afdkit: CMD: note: message": what only informs (a search space
 * pruned as designed, a fit's error), not printed after cli_notes_quiet(1)
 * (-q/--quiet).  Warnings (a result to doubt) and errors always print. */
void cli_note(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
void cli_notes_quiet(int quiet);
/* Report a library error about a file: "afdkit: CMD: FILE:LINE: text"; the
 * exit code follows the status (AFD_EIO, AFD_ENOMEM, AFD_ENUMERIC and
 * AFD_EUNSTABLE are runtime failures, the rest, AFD_ELIMIT included, input
 * errors). */
int cli_file_error(const char *cmd, const char *path, afd_status st, const afd_error *err);
/* Loading --OPT SPEC (a preset name or a file) failed with st: when SPEC
 * names no file (no '/', nothing there) a usage error naming the presets
 * (preset_name(0), preset_name(1), ... up to NULL), with "did you mean" for
 * a close one; otherwise cli_file_error.  Returns the exit code. */
int cli_spec_error(const char *cmd, const char *opt, const char *spec, afd_status st,
                   const afd_error *err, const char *(*preset_name)(size_t));
/* Whether the model (device) named `name` in a latency file is the one a
 * --model (--device) argument `spec` loaded as `loaded` (its afd_model.name
 * or afd_device.name): the same name, or the preset that spec resolves to
 * (spec itself when a preset name, else the preset whose text the file
 * holds byte for byte, as data/models/NAME.json does). */
int cli_same_model(const char *name, const char *spec, const char *loaded);
int cli_same_device(const char *name, const char *spec, const char *loaded);
/* Edit distance (insertions, deletions, substitutions, adjacent
 * transpositions) between a[0..na) and b[0..nb); SIZE_MAX beyond 64 bytes. */
size_t cli_edit_distance(const char *a, size_t na, const char *b, size_t nb);
/* The one name among names[0..count) that typed[0..n) begins, if only one
 * does; else the name closest to it when close enough to be what was meant
 * (distance at most a third of the longer name, or typed a prefix of it);
 * else NULL. */
const char *cli_suggest(const char *typed, size_t n, const char *const *names, size_t count);
/* Exit code for a library status. */
int cli_exit_code(afd_status st);

/* ---- options */

typedef struct cli_option {
    const char *name;  /* long name without the dashes, e.g. "mu-p" */
    char short_name;   /* e.g. 'B', or 0 */
    const char *arg;   /* metavariable ("N", "FILE"), NULL for a flag */
    const char *help;  /* one line */
    int id;            /* returned by cli_next */
} cli_option;

/* An option whose metavariable ends in "..." ("EXPR...") may be given more
 * than once (a list built up option by option); any other option with a
 * value given twice is a usage error (see cli_parser). */
int cli_option_repeatable(const cli_option *o);

typedef struct cli_group {
    const char *title;          /* "Workload", "Output", ... */
    const cli_option *options;  /* terminated by an entry with name == NULL */
} cli_group;

typedef struct cli_command cli_command;
struct cli_command {
    const char *name;        /* "theta"; "barrier" for "mc barrier" */
    const char *path;        /* full name used in messages: "mc barrier" */
    const char *summary;     /* one line for the command list */
    const char *usage;       /* synopsis after "afdkit ", e.g. "theta WORKLOAD [--csv]" */
    const char *description; /* paragraphs printed by --help */
    const cli_group *const *groups;    /* NULL-terminated */
    int (*run)(const cli_command *self, int argc, char **argv);
    const cli_command *const *subcommands; /* NULL-terminated, or NULL */
};

#define CLI_MAX_SEEN 256

/* Iterator over argv[1..argc): options ("--name VALUE", "--name=VALUE",
 * "-B 256", "-B256"), positional arguments and "--".  It records the
 * options seen, so that an option taking a value given a second time
 * (under any of its names) is a usage error unless cli_option_repeatable;
 * flags may repeat (they change nothing). */
typedef struct cli_parser {
    const cli_command *cmd;
    int argc;
    char **argv;
    int i;
    int no_more_options;
    int nseen;
    const cli_option *seen[CLI_MAX_SEEN];
} cli_parser;

enum {
    CLI_DONE = 0,       /* no arguments left */
    CLI_OPTION = 1,     /* *opt and *arg set (arg NULL for flags) */
    CLI_POSITIONAL = 2, /* *arg set, *opt NULL */
    CLI_HELP = 3,       /* -h/--help seen: caller prints help, exits 0 */
    CLI_ERROR = -1      /* message printed; exit 2 */
};

void cli_parser_init(cli_parser *p, const cli_command *cmd, int argc, char **argv);
int cli_next(cli_parser *p, const cli_option **opt, const char **arg);

/* Print the command's --help to stdout. */
void cli_print_help(const cli_command *cmd);

/* Option ids shared by the groups below (commands use ids >= 100). */
enum {
    OPT_TRACE = 1, OPT_PROMPT_COL, OPT_OUTPUT_COL, OPT_DECODE_OFFSET, OPT_GEOMETRIC,
    OPT_MU_P, OPT_MU_D, OPT_THETA, OPT_NU, OPT_WHERE, OPT_TIME_COL, OPT_TIME_UNIT, OPT_FORMAT,
    OPT_CSV = 20, OPT_PRECISION, OPT_PROVENANCE, OPT_QUIET,
    OPT_JSON = 26, OPT_SHARD = 27,
    OPT_HW = 30, OPT_ALPHA_A, OPT_BETA_A, OPT_ALPHA_F, OPT_BETA_F, OPT_ALPHA_C, OPT_BETA_C,
    OPT_COMMAND = 100
};

/* ---- strict numbers and lists (cli/parse.c)
 * Each returns 0 on success; on error it prints a usage error naming the
 * option and returns 2. */
int cli_real(const char *cmd, const char *opt, const char *arg, double *out);
int cli_real_min(const char *cmd, const char *opt, const char *arg, double lo, int lo_open,
                 double *out);
/* A real in the interval from lo to hi, each end open or closed:
 * "--OPT must be in (0, 1]: 'ARG'" otherwise. */
int cli_real_in(const char *cmd, const char *opt, const char *arg, double lo, int lo_open,
                double hi, int hi_open, double *out);
/* ARG one of the NULL-terminated names: *index its position, else
 * "--OPT: unknown WHAT 'ARG' (NAME, NAME, ...)". */
int cli_choice(const char *cmd, const char *opt, const char *what, const char *arg,
               const char *const *names, int *index);
int cli_integer(const char *cmd, const char *opt, const char *arg, int64_t lo, int64_t hi,
                int64_t *out);
/* --threads N, taken by every command that runs parallel work: the OpenMP
 * team size, an integer in 1..AFD_MC_MAX_THREADS (afd_mc.h); *out stays 0,
 * afd_mc_threads's default, when the option is not given. */
#define CLI_THREADS_HELP "threads (default OMP_NUM_THREADS or the processors, at most 256)"
int cli_threads(const char *cmd, const char *opt, const char *arg, unsigned *out);

/* A duration ("2s", "150ms", "800us", or a bare number in unit) or a rate
 * ("5/s", "300/min", or a bare number per unit) in the latency model's unit
 * (afd_parse_time, afd_parse_rate).  A suffix against a model in cycles, or
 * a latency file that states no unit (unit ""), is a usage error that says
 * why.  The one rule every command follows: without a latency file unit is
 * "s" (bare numbers are seconds, suffixes convert to seconds); with one it
 * is the file's unit. */
int cli_time(const char *cmd, const char *opt, const char *arg, const char *unit, double *out);
int cli_rate(const char *cmd, const char *opt, const char *arg, const char *unit, double *out);
/* cli_time where the user stated the unit of a bare number (--unit U): a
 * bare number is read in unit, never refused. */
int cli_time_in(const char *cmd, const char *opt, const char *arg, const char *unit, double *out);
/* A device's price, "2.99/h": dollars per device-hour in [0, 1000] (the
 * range of a device file's price_per_hour); a bare number or another unit
 * is a usage error that says how to write it. */
int cli_price(const char *cmd, const char *opt, const char *arg, double *out);
/* Refuses arg, a list of bare numbers, as rates in unit when unit is stated
 * and is not the second: 0, or the exit code after the message. */
int cli_bare_rate(const char *cmd, const char *opt, const char *arg, const char *unit);

#define CLI_LIST_MAX 1000000

typedef struct cli_list {
    size_t n;
    double *v;
} cli_list;

/* Parse "1,2,4:8,16:64:8" (a:b inclusive, a:b:step).  Integer lists require
 * integer values and steps; every value must lie in [lo, hi].  Empty items,
 * reversed ranges, steps <= 0 and lists longer than CLI_LIST_MAX are errors. */
int cli_list_parse(const char *cmd, const char *opt, const char *arg, int integers, double lo,
                   double hi, cli_list *out);
void cli_list_free(cli_list *l);

/* Pure parsers behind the above, for tests and fuzzing: no printing; on
 * error msg (of size cap) holds the reason. */
int cli_list_parse_quiet(const char *arg, int integers, double lo, double hi, cli_list *out,
                         char *msg, size_t cap);

/* ---- table writer (cli/table.c) */

typedef struct cli_output {
    int csv;
    int precision;    /* significant digits for reals, default 10 */
    int provenance;   /* print "## key=value" lines */
    int quiet;        /* no progress reports, no notes */
    int json;         /* JSON Lines, one object per row */
    unsigned shard_k, shard_n; /* --shard K/N; shard_n == 0: the whole list */
} cli_output;

extern const cli_group cli_output_group;
void cli_output_init(cli_output *o);
/* Handle an output-group option; returns 0, or 2 after printing an error. */
int cli_output_option(const char *cmd, cli_output *o, const cli_option *opt, const char *arg);

typedef struct cli_table cli_table;

/* The table is buffered and written by cli_table_finish, so that an error
 * part-way leaves stdout empty. */
cli_table *cli_table_new(const cli_output *o);
/* "## key=value" provenance line (dropped unless --provenance, and in CSV). */
void cli_table_meta(cli_table *t, const char *key, const char *fmt, ...) CLI_PRINTF(3, 4);
/* The unit of the table's numbers ("ms", "s", "cycles", "requests/s", ...):
 * "## unit=U" as the last line before the first header, always (also
 * without --provenance; not in CSV); "unit" in the JSON provenance object.
 * Call it before cli_table_begin; a table without times or rates has none. */
void cli_table_unit(cli_table *t, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Start a block with the given column names: cli_table_begin(t, "r", "kappa").
 * The macro appends the typed NULL that ends the list, so no call site can
 * forget it or pass an untyped NULL through the variadic part. */
#define cli_table_begin(t, ...) cli_table_begin_cols((t), __VA_ARGS__, (const char *)NULL)
void cli_table_begin_cols(cli_table *t, const char *first, ...);
/* The same with the names in an array (at most 256 columns either way). */
void cli_table_begin_array(cli_table *t, size_t n, const char *const *names);
void cli_table_int(cli_table *t, long long v);
void cli_table_uint(cli_table *t, unsigned long long v);
void cli_table_real(cli_table *t, double v);
/* A count held in a double (NaN where there is none): printed as a real, and
 * in JSON as an integer when it is one. */
void cli_table_count(cli_table *t, double v);
void cli_table_str(cli_table *t, const char *s);
void cli_table_end_row(cli_table *t);
/* Append one line already in the table's format (afdkit merge only). */
void cli_table_raw_line(cli_table *t, const char *line);
/* Write the table to stdout and free it; returns 0, or 1 after printing an
 * error if stdout cannot be written. */
int cli_table_finish(cli_table *t, const char *cmd);
/* As cli_table_finish, writing to the file path instead of stdout. */
int cli_table_finish_file(cli_table *t, const char *cmd, const char *path);
/* Write data[0..len) to path: through a temporary file in the same directory
 * renamed on success and removed on failure, so path is either the whole new
 * content or untouched (a non-regular path such as /dev/stdout is written in
 * place).  0, or EXIT_RUNTIME after "CMD: PATH: cannot write: REASON". */
int cli_write_file(const char *cmd, const char *path, const char *data, size_t len);
/* Free without writing (after an error). */
void cli_table_discard(cli_table *t);

/* Column name for a percentile: PREFIX_p95, PREFIX_p99_9 (the decimal point
 * of 100 p becomes '_'), then SUFFIX (may be ""). */
void cli_percentile_name(char *buf, size_t cap, const char *prefix, double p,
                         const char *suffix);

/* ---- sharding: --shard K/N (cli/table.c)
 *
 * How a command that evaluates a list (values of --r or --c, candidate
 * configurations, SLO pairs) takes part:
 *   1. list &cli_shard_group among its option groups; cli_parse_args then
 *      stores --shard K/N in cli_output.shard_k/shard_n (0/0: no sharding);
 *   2. evaluate item i (0-based, in list order) only if cli_shard_take(out, i)
 *      (round robin, i mod N == K - 1, so that costs growing along the list
 *      spread evenly), or for a cli_list call cli_shard_list(out, &list) once
 *      after parsing and evaluate what is left;
 *   3. draw an item's random numbers from Philox streams addressed by the item
 *      itself (its value or configuration, as sim and mc do), never by its
 *      position among the items evaluated, so that a shard prints exactly the
 *      rows the whole run prints for its items;
 *   4. print one row per item, in list order, in one block.  A command that
 *      sorts its rows calls cli_table_shard_order(t, COLUMN, descending)
 *      before cli_table_begin and sorts stably (ties in list order): merge then
 *      sorts the joined rows the same way.  Rows that depend on other items
 *      (a frontier, a best-of) cannot be sharded that way: print every
 *      item's row when sharded, or do not offer --shard.
 * The table then starts with "## shard=K/N" (JSON: "shard" in the
 * provenance object) even without --provenance, and "afdkit merge FILES..."
 * rebuilds the table of the whole run byte for byte.  --shard with --csv is a
 * usage error (a CSV file cannot say which part it is). */
#define CLI_SHARD_MAX 1000000
extern const cli_group cli_shard_group;
/* Parse "K/N" (1 <= K <= N <= CLI_SHARD_MAX); 0, or 2 after a usage error. */
int cli_shard_parse(const char *cmd, const char *arg, unsigned *k, unsigned *n);
/* 1 if item i (0-based) belongs to this run's shard (always without --shard). */
int cli_shard_take(const cli_output *o, size_t i);
/* Keep only this shard's items of l, in order. */
void cli_shard_list(const cli_output *o, cli_list *l);
/* Declare that the rows are sorted by COLUMN (a sharded table says so). */
void cli_table_shard_order(cli_table *t, const char *column, int descending);

/* Format one real as the table does ("nan" for non-finite). */
void cli_format_real(char *buf, size_t cap, double v, int precision);

/* Record the command line for provenance lines. */
void cli_set_command_line(int argc, char **argv);
/* argv[0] of the recorded command line ("afdkit" if none). */
const char *cli_program_name(void);
void cli_table_provenance(cli_table *t);

/* ---- workload option group (cli/workload_opts.c) */

#define CLI_WHERE_NAME_MAX 128

/* --format F, the trace's format (every group that takes a trace): csv or
 * jsonl, else a usage error.  Returns 0 or the exit code. */
#define CLI_FORMAT_HELP "trace format: csv or jsonl (default: told from the first non-blank byte)"
int cli_trace_format(const char *cmd, const char *arg, const char **format);

typedef struct cli_workload_args {
    const char *trace; /* "-": standard input */
    afd_workload_trace_options topt;
    afd_trace_filter where[AFD_TRACE_MAX_WHERE]; /* --where COLUMN=VALUE (repeatable) */
    char where_col[AFD_TRACE_MAX_WHERE][CLI_WHERE_NAME_MAX];
    int decode_offset_set;
    int geometric;
    double mu_p, mu_d;
    int have_mu_p, have_mu_d;
    double theta, nu;
    int have_theta, have_nu;
} cli_workload_args;

extern const cli_group cli_workload_group;

void cli_workload_init(cli_workload_args *a);
/* Handle a workload-group option; returns 0 or 2. */
int cli_workload_option(const char *cmd, cli_workload_args *a, const cli_option *opt,
                        const char *arg);

enum {                       /* flags of cli_workload_load */
    CLI_WL_ANY = 0,              /* trace, geometric or theta/nu */
    CLI_WL_NEEDS_LENGTHS = 1,    /* a trace or the geometric model (samplers) */
    CLI_WL_NO_SE_WARNING = 2,    /* the command reports no standard errors */
    CLI_WL_NO_MOMENTS = 4        /* the command reads only the kept rows or pairs:
                                    no theta, nu or tail index (NaN), so lengths up
                                    to 2^64 - 1 are accepted */
};

/* Most trace rows kept in memory for samplers: 2^26 rows, 1 GiB. */
#define CLI_MAX_KEPT_ROWS ((size_t)1 << 26)
/* Most distinct (P, D) pairs kept (CLI_KEEP_PAIRS): 2^25 pairs, 768 MiB. */
#define CLI_MAX_KEPT_PAIRS ((size_t)1 << 25)

enum {                 /* the keep_rows argument of cli_workload_load */
    CLI_KEEP_NONE = 0, /* statistics only: memory independent of the trace */
    CLI_KEEP_ROWS = 1, /* every used row (samplers that replay rows in order) */
    CLI_KEEP_PAIRS = 2, /* the distinct (P, D) with their counts: memory
                          bounded by the distinct pairs, not by the rows */
    CLI_KEEP_BLOCKS = 3 /* every used row with its prompt blocks (hash_ids) */
};

/* Build the workload; warns about skipped rows; keep_rows (CLI_KEEP_*) keeps
 * trace rows in memory for samplers (at most CLI_MAX_KEPT_ROWS) or the
 * distinct pairs (at most CLI_MAX_KEPT_PAIRS).  Returns 0, or the exit code
 * after printing an error. */
int cli_workload_load(const char *cmd, const cli_workload_args *a, int need, int keep_rows,
                      const cli_output *out, afd_workload *w);

/* ---- arrival rates (cli/lambda.c) */

/* 1 if a --lambda argument asks for the trace's own rate ("trace"). */
int cli_lambda_is_trace(const char *arg);
/* The rates of a --lambda argument, per unit of time (afd_unit_seconds):
 * "trace" (the rate of w's timestamps, one value; w may be NULL otherwise),
 * a list "1,2,5:10" of bare numbers per unit, or rates with units
 * "5/s,300/min" (cli_rate).  Bare numbers are refused against a unit other
 * than the second (cli_bare_rate) unless bare_in_unit says the user stated
 * the unit (--unit U).  Every value > 0.  Returns 0 or the exit code after
 * printing an error; free out with cli_list_free. */
int cli_lambda_list(const char *cmd, const char *opt, const char *arg, const char *unit,
                    int bare_in_unit, const afd_workload *w, const char *trace, cli_list *out);
/* Warn when the trace's dispersion indices put Poisson arrivals more than 5
 * standard errors away at some window, saying by how much; the warning ends
 * with INSTEAD, what the command offers beside the Poisson formulas. */
void cli_dispersion_warning(const char *cmd, const char *trace, const afd_workload *w,
                            const char *instead);

/* ---- hardware option group (cli/hw_opts.c) */

typedef struct cli_hw_args {
    const char *hw;  /* preset name or key=value file */
    const char *arg[6]; /* --alpha-a ... --beta-c overrides as given: a bare number
                           or with a unit (2ms; per token for the alphas), converted
                           by cli_hw_load */
    int have[6];
} cli_hw_args;

extern const cli_group cli_hw_group;
void cli_hw_init(cli_hw_args *a);
/* Load --model (preset or config.json) or --device (preset or key = value
 * file); print the error (with the preset names for an unknown name). */
int cli_load_model(const char *cmd, const char *spec, afd_model *m);
int cli_load_device(const char *cmd, const char *spec, afd_device *d);
/* The same for an option of another name (--device-a, --device-f). */
int cli_load_device_as(const char *cmd, const char *opt, const char *spec, afd_device *d);

int cli_hw_option(const char *cmd, cli_hw_args *a, const cli_option *opt, const char *arg);
/* Build the coefficients: the --hw preset or file, then the overrides;
 * without --hw all six coefficients must be given.  Returns 0 or the exit
 * code after printing an error. */
int cli_hw_load(const char *cmd, const cli_hw_args *a, afd_hw *out);
/* The tensor-parallel size of a command against the one its latency file's
 * laws time (hw->tp, 0 when the file states none): given by --tp
 * (given = 1) and different, a usage error naming both values, since the
 * laws would time one instance and the memory and device counts another;
 * not given, the file's replaces *tp (the option's default).  file is the
 * name printed.  Returns 0 or the exit code after printing an error. */
int cli_hw_tp(const char *cmd, const char *file, const afd_hw *hw, int given, double *tp);
/* The same for the devices per instance the six AFD coefficients time
 * (hw->afd_tp, 0 when the file states none), which price an Attention and
 * an FFN instance: a --tp other than the file's is refused, none takes the
 * file's. */
int cli_hw_afd_tp(const char *cmd, const char *file, const afd_hw *hw, int given, double *tp);

/* -B N: an integer micro-batch >= 1 (at most 2^31). */
int cli_batch(const char *cmd, const char *arg, double *B);

/* ---- service-law option group (cli/svc_opts.c): the prefill time of the
 * queues with deadlines, exactly one of --service S, --service-exp MEAN, or
 * --trace FILE with --hw FILE.  --service and --service-exp have ids >=
 * OPT_COMMAND: a command's own() forwards them to cli_service_option. */
enum { OPT_SVC_CONST = 200, OPT_SVC_EXP };
#define CLI_IS_SERVICE_OPTION(id) ((id) == OPT_SVC_CONST || (id) == OPT_SVC_EXP)

typedef struct cli_service_args {
    const char *service, *service_exp; /* NULL: not given */
} cli_service_args;

extern const cli_group cli_service_group;
int cli_service_option(cli_service_args *a, const cli_option *opt, const char *arg);

/* ---- cost option group (cli/cost_opts.c): prices and powers of the
 * Attention and FFN devices.  The group's options have ids >= OPT_COMMAND,
 * so a command's own() forwards them to cli_cost_option. */
enum {
    OPT_PRICE_A = 190, OPT_PRICE_F, OPT_POWER_A, OPT_POWER_F,
    OPT_DEVICE_A, OPT_DEVICE_F, OPT_COST_MODEL, OPT_COST_TP
};
#define CLI_IS_COST_OPTION(id) ((id) >= OPT_PRICE_A && (id) <= OPT_COST_TP)

typedef struct cli_cost_args {
    double price_a, price_f; /* per instance-hour; NAN: not given */
    double power_a, power_f; /* watts; NAN: not given */
    int have_price, have_power;
    double unit_seconds;     /* seconds per time unit of the latency model, NAN: none */
    const char *device_a, *device_f; /* --device-a/--device-f, NULL: none */
    const char *model;       /* --model: coefficients from the estimator */
    double tp;               /* --tp, devices per instance (default: the --hw file's afd_tp, else 1) */
    int have_tp;             /* --tp given */
} cli_cost_args;

extern const cli_group cli_cost_group;
void cli_cost_init(cli_cost_args *a);
int cli_cost_option(const char *cmd, cli_cost_args *a, const cli_option *opt, const char *arg);
/* After parsing, before the system is loaded: read --device-a/--device-f
 * and take their price_per_hour and power_w (times --tp, per instance) where
 * --price-x/--power-x were not given; with --model, fit the six
 * coefficients for the pair (afd_estimate_laws_afd) into *hw and set
 * *have_hw (--hw and the coefficient options are then usage errors).
 * Returns 0 or the exit code after printing an error. */
int cli_cost_devices(const char *cmd, cli_cost_args *a, const cli_hw_args *hwa, afd_hw *hw,
                     int *have_hw);
/* After parsing: both of a pair or neither (usage error otherwise); the
 * time unit of hw (a warning when it is not a unit of time). */
int cli_cost_finish(const char *cmd, cli_cost_args *a, const afd_hw *hw);
/* Tokens per dollar / per joule of an rA-1F bundle with cycle time tau
 * (afd_bundle_per_cost); NAN without prices / powers. */
double cli_cost_per_dollar(const cli_cost_args *a, double r, double B, double tau);
double cli_cost_per_joule(const cli_cost_args *a, double r, double B, double tau);

/* ---- the shared argument loop (cli/common.c) */

typedef struct cli_common {
    cli_workload_args wl;
    cli_hw_args hw;
    cli_output out;
} cli_common;

void cli_common_init(cli_common *c);

/* After parsing: exactly one service law; with --trace, load --hw (which
 * must hold a prefill law).  *unit: the time unit of bare numbers (hw's
 * unit, else "s").  Returns 0 or the exit code after printing an error. */
int cli_service_setup(const char *cmd, const cli_service_args *a, const cli_common *c,
                      afd_hw *hw, const char **unit);
/* The law itself: --service/--service-exp parsed in unit (> 0, finite; the
 * value in *value), or the trace loaded into *w (rows kept) and each
 * prompt's prefill time under hw.  Returns 0 or the exit code after
 * printing an error; the caller frees *law and *w. */
int cli_service_law(const char *cmd, const cli_service_args *a, const cli_common *c,
                    const afd_hw *hw, const char *unit, afd_workload *w, double *value,
                    afd_svc_law **law);

/* Parse argv for a command: shared groups are handled here, options with
 * id >= OPT_COMMAND go to own(ctx, opt, arg), which returns 0 or an exit
 * code; positional arguments go to own with opt == NULL (NULL own: an
 * error).  Returns CLI_CONTINUE when the command should run, else the exit
 * code (0 after --help). */
#define CLI_CONTINUE (-1)
int cli_parse_args(const cli_command *self, int argc, char **argv, cli_common *common,
                   int (*own)(void *ctx, const cli_option *opt, const char *arg), void *ctx);

/* The system of the closed forms: the coefficients of c->hw, theta and nu
 * of the workload of c->wl (any kind), and B; *stats (if not NULL) gets the
 * workload's statistics with their standard errors.  Returns 0 or the exit
 * code after printing an error. */
int cli_system_load(const char *cmd, const cli_common *c, double B, afd_system *s,
                    afd_renewal_stats *stats);
/* The same with the coefficients given (hw not NULL) instead of c->hw's. */
int cli_system_load_hw(const char *cmd, const cli_common *c, const afd_hw *hw, double B,
                       afd_system *s, afd_renewal_stats *stats);

/* ---- progress on stderr (cli/progress.c) */

typedef struct cli_progress {
    const char *cmd;
    const char *what;
    double start;
    double last;
    double delay; /* seconds before the first report */
    double every; /* seconds between two reports */
    int shown;
    int enabled;
    int tty; /* stderr is a terminal: one line rewritten in place */
    double done, total, done_shown; /* the last update, and the last one printed */
    const char *unit;
} cli_progress;

double cli_now(void);
void cli_progress_init(cli_progress *p, const char *cmd, const char *what, int quiet);
/* Report done/total units (total 0: unknown) on stderr, the first time after
 * 2 s, then on a terminal every 0.5 s on one line rewritten in place, and
 * elsewhere one full line every 3 s: "afdkit: CMD: WHAT: done/total UNIT
 * (P%, T s elapsed, R s remaining)", the last one when done reaches total.
 * -q (quiet) or AFDKIT_PROGRESS=off turns them off; AFDKIT_PROGRESS=S starts
 * them after S seconds and AFDKIT_PROGRESS_EVERY=S spaces them S seconds
 * apart (0: every update).  Off a terminal, cli_progress_end prints the
 * last update when a report was printed and this one was not. */
void cli_progress_update(cli_progress *p, double done, double total, const char *unit);
void cli_progress_end(cli_progress *p);

/* ---- commands */

/* ---- afdkit merge: the table of one part of a run split by --shard K/N */

/* Most provenance entries ("## key=value") one part may carry. */
#define CLI_PART_MAX_META 64

typedef struct cli_part_meta {
    char *key, *value;
    size_t line;
} cli_part_meta;

/* One part: a whole file in memory, cut into lines in place. */
typedef struct cli_part {
    const char *path; /* for messages */
    char *text;       /* the file, NUL-terminated, owned (freed by cli_part_free) */
    int json;
    unsigned k, n; /* "## shard=K/N"; n = 0 when there is none */
    size_t shard_line;
    char *order; /* "COLUMN asc|desc" or NULL */
    char *unit;  /* the "## unit=" value, or NULL */
    size_t unit_line;
    char *header; /* TSV: the header line without "# " */
    size_t header_line;
    cli_part_meta meta[CLI_PART_MAX_META];
    size_t n_meta;
    char **rows;      /* row lines (TSV or JSON text) */
    size_t *row_line; /* their line numbers */
    size_t n_rows, cap_rows;
    json_t **objs;  /* JSON: the parsed rows */
    char msg[512];  /* the error: "PATH:LINE: what", one line */
} cli_part;

/* Cut p->text (set with p->path, the rest zeroed) into provenance, header
 * and rows: afdkit's tab-separated table or, when its first non-blank byte
 * is '{', JSON Lines.  0, or the exit code (2: not a part's table, 1: out of
 * memory) with the message in p->msg.  Nothing is printed. */
int cli_part_parse(cli_part *p);
/* A warning for each of the first nlaws laws of fit (AFD_FIT_PREFILL,
 * AFD_FIT_DECODE, AFD_FIT_ATTENTION, AFD_FIT_FFN) off the estimator by more
 * than AFD_ESTIMATE_FIT_WARN (cli/hw_opts.c). */
void cli_warn_fit(const char *cmd, const afd_estimate_fit *fit, int nlaws);
/* The laws a command evaluates (cli_note_fit): the prefill and decode laws,
 * the six AFD coefficients. */
enum { CLI_LAWS_SERVING = 1, CLI_LAWS_AFD = 2 };
/* One note per group of laws in `which` that hw uses, stating its largest
 * relative error against the estimator over the grid it was fitted on, as
 * the library recorded it (fit_max_rel_err for the prefill and decode laws,
 * afd_fit_max_rel_err for the AFD ones; afd_estimate_laws, a latency file
 * written by estimate --out, hw --out or calibrate --out): "afdkit: CMD:
 * note: SOURCE: ... off the estimator by at most X% ...".  source: the --hw
 * file (its error is against the times it was fitted to: the estimator's,
 * or measurements for calibrate), or NULL for laws fitted in this run
 * ("the estimator's laws for MODEL on TP x DEVICE").  Nothing for a group whose laws hw lacks or whose error is
 * unknown (NaN: coefficients not fitted to the estimator). */
void cli_note_fit(const char *cmd, const char *source, const afd_hw *hw, unsigned which);

/* Free what p holds (text included). */
void cli_part_free(cli_part *p);

extern const cli_command cli_cmd_theta;
extern const cli_command cli_cmd_kappa;
extern const cli_command cli_cmd_ratio;
extern const cli_command cli_cmd_sweep;
extern const cli_command cli_cmd_pipeline;
extern const cli_command cli_cmd_kvretrieve;
extern const cli_command cli_cmd_hw;
extern const cli_command cli_cmd_calibrate;
extern const cli_command cli_cmd_sim;
extern const cli_command cli_cmd_pd;
extern const cli_command cli_cmd_goodput;
extern const cli_command cli_cmd_serve;
extern const cli_command cli_cmd_strategies;
extern const cli_command cli_cmd_plan;
extern const cli_command cli_cmd_regime;
extern const cli_command cli_cmd_pareto;
extern const cli_command cli_cmd_estimate;
extern const cli_command cli_cmd_model;
extern const cli_command cli_cmd_mc;
extern const cli_command cli_cmd_mc_barrier;
extern const cli_command cli_cmd_mc_slot;
extern const cli_command cli_cmd_mc_mdc;
extern const cli_command cli_cmd_mdc;
extern const cli_command cli_cmd_offload;
extern const cli_command cli_cmd_twotier;
extern const cli_command cli_cmd_hist;
extern const cli_command cli_cmd_plot;
extern const cli_command cli_cmd_merge;

#endif /* AFD_CLI_H */

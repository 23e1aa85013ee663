/* cmd_hist.c: afdkit hist, the empirical distribution of prompt or decode
 * lengths of a trace beside the geometric law of the same mean (Appendix
 * A.8, Figure 5). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Most bins a histogram may have. */
#define MAX_BINS ((uint64_t)1000000)
/* Most log-spaced bins per decade. */
#define MAX_PER_DECADE 1000

enum { OPT_COLUMN = OPT_COMMAND, OPT_BINS };

static const cli_option hist_options[] = {
    {"column", 0, "WHICH", "decode (default): D = output tokens - K; or prompt: P", OPT_COLUMN},
    {"bins", 0, "SPEC", "W: bins of W consecutive integers (default 1); log:K: K per decade",
     OPT_BINS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group hist_group = {"Options", hist_options};

/* The trace half of the workload group: the same options and ids, so that
 * the shared parser handles them; the models have no histogram to print. */
static const cli_option trace_options[] = {
    {"trace", 0, "FILE", "request trace CSV (required)", OPT_TRACE},
    {"prompt-col", 0, "NAME", "prompt-token column of the trace (default: recognised)",
     OPT_PROMPT_COL},
    {"output-col", 0, "NAME", "output-token column of the trace (default: recognised)",
     OPT_OUTPUT_COL},
    {"format", 0, "F", CLI_FORMAT_HELP, OPT_FORMAT},
    {"decode-offset", 0, "K", "decode lifetime D = output tokens - K (default 0)",
     OPT_DECODE_OFFSET},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group trace_group = {"Trace", trace_options};
static const cli_group *const hist_groups[] = {&hist_group, &trace_group, &cli_output_group, NULL};

struct args {
    int prompt;     /* histogram of P instead of D */
    uint64_t width; /* bin width, or 0 for log bins */
    int per_decade; /* log bins per decade */
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    char ex[200];
    int64_t v;
    if (opt == NULL)
        return cli_usage_error("hist", "unexpected argument '%s'", cli_excerpt(arg, ex, sizeof ex));
    if (opt->id == OPT_COLUMN) {
        if (strcmp(arg, "decode") == 0)
            a->prompt = 0;
        else if (strcmp(arg, "prompt") == 0)
            a->prompt = 1;
        else
            return cli_usage_error("hist", "--column must be decode or prompt: '%s'",
                                   cli_excerpt(arg, ex, sizeof ex));
        return 0;
    }
    if (strncmp(arg, "log:", 4) == 0) {
        if (afd_parse_i64(arg + 4, &v) != AFD_OK || v < 1 || v > MAX_PER_DECADE)
            return cli_usage_error("hist", "--bins log:K needs an integer K in [1, %d]: '%s'",
                                   MAX_PER_DECADE, cli_excerpt(arg, ex, sizeof ex));
        a->width = 0;
        a->per_decade = (int)v;
        return 0;
    }
    if (afd_parse_i64(arg, &v) != AFD_OK || v < 1)
        return cli_usage_error("hist", "--bins takes an integer width W >= 1 or log:K: '%s'",
                               cli_excerpt(arg, ex, sizeof ex));
    a->width = (uint64_t)v;
    return 0;
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a = {0, 1, 0};
    cli_common c;
    afd_workload w;
    afd_hist_spec spec;
    afd_hist h;
    afd_status st;
    cli_table *t;
    size_t i;
    int rc;

    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    if (c.wl.trace == NULL)
        return cli_usage_error(cmd, "--trace FILE is required");
    if ((rc = cli_workload_load(cmd, &c.wl, CLI_WL_NEEDS_LENGTHS | CLI_WL_NO_SE_WARNING | CLI_WL_NO_MOMENTS,
                                CLI_KEEP_PAIRS, &c.out, &w)) != 0)
        return rc;

    memset(&spec, 0, sizeof spec);
    spec.prompt = a.prompt;
    spec.width = a.width;
    spec.per_decade = a.per_decade;
    spec.max_bins = MAX_BINS;
    st = afd_hist_workload(&w, &spec, &h);
    afd_workload_free(&w);
    if (st == AFD_ELIMIT)
        return cli_input_error(cmd,
                               "%s: %llu bins of width %llu up to %llu exceed %llu: use a "
                               "wider --bins W or --bins log:K",
                               c.wl.trace, (unsigned long long)h.n, (unsigned long long)a.width,
                               (unsigned long long)h.max, (unsigned long long)MAX_BINS);
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "%s", afd_strerror(st));

    t = cli_table_new(&c.out);
    if (t == NULL) {
        afd_hist_free(&h);
        return cli_runtime_error(cmd, "out of memory");
    }
    cli_table_provenance(t);
    cli_table_meta(t, "column", "%s", a.prompt ? "prompt" : "decode");
    cli_table_meta(t, "n", "%llu", (unsigned long long)h.total);
    cli_table_meta(t, "mean", "%.10g", h.mean);
    if (a.width > 0)
        cli_table_meta(t, "bins", "width %llu from %llu", (unsigned long long)a.width,
                       (unsigned long long)(a.prompt ? 0 : 1));
    else
        cli_table_meta(t, "bins", "log, %d per decade", a.per_decade);
    cli_table_begin(t, "value", "count", "pmf", "geometric_pmf", "lo", "hi");
    for (i = 0; i < h.n; i++) {
        const afd_hist_bin *b = &h.bin[i];
        double width = (double)(b->hi - b->lo) + 1;
        cli_table_real(t, ((double)b->lo + (double)b->hi) / 2);
        cli_table_uint(t, b->count);
        cli_table_real(t, (double)b->count / ((double)h.total * width));
        cli_table_real(t, afd_geometric_mass(h.mean, b->lo, b->hi) / width);
        cli_table_uint(t, b->lo);
        cli_table_uint(t, b->hi);
        cli_table_end_row(t);
    }
    afd_hist_free(&h);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_hist = {
    .name = "hist",
    .path = "hist",
    .summary = "histogram of decode or prompt lengths beside the geometric law (Figure 5)",
    .usage = "hist --trace FILE [--column decode|prompt] [--bins W|log:K]",
    .description =
        "Prints one row per bin: value count pmf geometric_pmf lo hi.\n"
        "\n"
        "A bin holds the integers lo..hi; value is its midpoint (lo + hi)/2 and count the\n"
        "requests whose length falls in it.  pmf = count / (n (hi - lo + 1)) is the\n"
        "empirical probability per integer, so bins of any width compare on one scale;\n"
        "geometric_pmf is the same average of the geometric law on {1,2,...} whose mean\n"
        "is the sample mean (the model of --geometric, Corollary 4.5): with p = 1/mean,\n"
        "P(X = k) = p (1-p)^(k-1).  It is nan when the mean is below 1.\n"
        "\n"
        "--bins W (default 1) cuts 1..max (0..max for prompts) into bins of W integers;\n"
        "--bins log:K into K bins per decade, bin i holding the integers in\n"
        "[10^(i/K), 10^((i+1)/K)) (prompts of 0 tokens get a bin of their own).  Empty\n"
        "bins are printed with count 0.\n"
        "\n"
        "The requests are those every command uses: rows with D = output - K <= 0 are\n"
        "skipped with a warning, for the prompt histogram as well.\n"
        "\n"
        "Memory: the trace is read once and only its distinct (P, D) pairs are kept,\n"
        "with their counts: 24 bytes per distinct pair (at most 2^25) plus a fixed\n"
        "12 MiB, however many rows the trace has.",
    .groups = hist_groups,
    .run = run,
};

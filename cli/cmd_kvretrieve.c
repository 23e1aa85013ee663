/* cmd_kvretrieve.c: afdkit kvretrieve, fetching a prefix's KV cache from a
 * memory hierarchy against recomputing it (libanalytic/serving/afd_kvretrieve.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "cli.h"

enum {
    OPT_TIER = OPT_COMMAND,
    OPT_TOKENS,
    OPT_KVB,
    OPT_MODEL,
    OPT_TP,
    OPT_RA,
    OPT_RB,
    OPT_RC,
    OPT_MC,
    OPT_SEED,
    OPT_THREADS
};

enum { MAX_TIERS = 16 };

static const cli_option kv_options[] = {
    {"tier", 0, "NAME,HIT,LATENCY,GBPS...",
     "a tier, in lookup order: hit rate, lookup latency (e.g. 80ns, 50us), GB/s; repeat", OPT_TIER},
    {"tokens", 0, "LIST", "prefix lengths in tokens (default 1024,4096,24576)", OPT_TOKENS},
    {"kv-bytes-per-token", 0, "X", "KV-cache bytes per token", OPT_KVB},
    {"model", 0, "M", "or: the model's KV bytes per token (afdkit model)", OPT_MODEL},
    {"tp", 0, "T", "tensor-parallel size for --model (default: the tp of --hw FILE, else 1)",
     OPT_TP},
    {"recompute-a", 0, "S", "recompute (prefill) time a + b L + c L^2: a", OPT_RA},
    {"recompute-b", 0, "S", "b, seconds per token", OPT_RB},
    {"recompute-c", 0, "S", "c, seconds per token^2 (default 0)", OPT_RC},
    {"mc", 0, "N", "add a Monte Carlo of N lookups per length (retrieval_mc, _se)", OPT_MC},
    {"seed", 's', "S", "seed of the Philox stream (default 1)", OPT_SEED},
    {"threads", 0, "N", CLI_THREADS_HELP, OPT_THREADS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group kv_group = {"Options", kv_options};
static const cli_group *const kv_groups[] = {&kv_group, &cli_hw_group, &cli_output_group, NULL};

struct args {
    afd_kv_tier tier[MAX_TIERS];
    size_t n;
    cli_list tokens;
    double kvb, ra, rb, rc, tp;
    int have_tp; /* --tp given */
    const char *model;
    int64_t mc, seed;
    unsigned threads;
};

static int parse_tier(const char *cmd, const char *arg, afd_kv_tier *t)
{
    char buf[256], *f[4], *p, ex[64];
    size_t k = 0, len = strlen(arg);
    if (len >= sizeof buf)
        return cli_usage_error(cmd, "--tier: too long: '%s'", cli_excerpt(arg, ex, sizeof ex));
    memcpy(buf, arg, len + 1);
    for (p = buf; k < 4; k++) {
        f[k] = p;
        p = strchr(p, ',');
        if (p == NULL)
            break;
        *p++ = '\0';
    }
    if (k != 3 || p != NULL)
        return cli_usage_error(cmd,
                               "--tier wants NAME,HIT,LATENCY,GBPS (e.g. dram,0.6,80ns,150): "
                               "'%s'",
                               cli_excerpt(arg, ex, sizeof ex));
    if (f[0][0] == '\0' || strlen(f[0]) >= sizeof t->name)
        return cli_usage_error(cmd, "--tier: the name must have 1 to %zu characters: '%s'",
                               sizeof t->name - 1, cli_excerpt(arg, ex, sizeof ex));
    snprintf(t->name, sizeof t->name, "%s", f[0]);
    if (afd_parse_double(f[1], &t->hit) != AFD_OK || !(t->hit >= 0 && t->hit <= 1))
        return cli_usage_error(cmd, "--tier %s: the hit rate must lie in [0, 1]: '%s'", t->name,
                               cli_excerpt(f[1], ex, sizeof ex));
    if (afd_parse_time(f[2], "s", &t->latency) != AFD_OK || !(t->latency >= 0))
        return cli_usage_error(cmd, "--tier %s: not a latency (e.g. 80ns, 50us, 20ms): '%s'",
                               t->name, cli_excerpt(f[2], ex, sizeof ex));
    if (afd_parse_double(f[3], &t->bw) != AFD_OK || !(t->bw > 0) || !isfinite(t->bw))
        return cli_usage_error(cmd, "--tier %s: the bandwidth must be > 0 GB/s: '%s'", t->name,
                               cli_excerpt(f[3], ex, sizeof ex));
    t->bw *= 1e9;
    return 0;
}

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    const char *cmd = "kvretrieve";
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_TIER:
        if (a->n == MAX_TIERS)
            return cli_usage_error(cmd, "at most %d tiers", MAX_TIERS);
        return parse_tier(cmd, arg, &a->tier[a->n++]);
    case OPT_TOKENS:
        cli_list_free(&a->tokens);
        return cli_list_parse(cmd, opt->name, arg, 0, 0, 1e9, &a->tokens);
    case OPT_KVB:
        return cli_real_min(cmd, opt->name, arg, 0, 1, &a->kvb);
    case OPT_MODEL:
        a->model = arg;
        return 0;
    case OPT_TP:
        a->have_tp = 1;
        return cli_real_min(cmd, opt->name, arg, 1, 0, &a->tp);
    case OPT_RA:
        return cli_time(cmd, opt->name, arg, "s", &a->ra);
    case OPT_RB:
        return cli_time(cmd, opt->name, arg, "s", &a->rb);
    case OPT_RC:
        return cli_time(cmd, opt->name, arg, "s", &a->rc);
    case OPT_MC:
        return cli_integer(cmd, opt->name, arg, 2, (int64_t)1 << 40, &a->mc);
    case OPT_SEED:
        return cli_integer(cmd, opt->name, arg, 0, INT64_MAX, &a->seed);
    case OPT_THREADS:
        return cli_threads(cmd, opt->name, arg, &a->threads);
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    static struct args a;
    static const double default_tokens[] = {1024, 4096, 24576};
    cli_common c;
    afd_kv_law law;
    afd_hw hw;
    const double *tok;
    size_t ntok, k;
    cli_table *t;
    int rc;

    memset(&a, 0, sizeof a);
    a.kvb = a.ra = a.rb = a.rc = NAN;
    a.tp = 1;
    a.seed = 1;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if (a.n == 0) {
        rc = cli_usage_error(cmd, "give at least one --tier NAME,HIT,LATENCY,GBPS");
        goto out;
    }
    /* the recompute law of --hw (unless given by the options) times an
     * instance of the file's tp devices: the size --model's KV is split over */
    if (isnan(a.ra) && isnan(a.rb) && c.hw.hw != NULL &&
        ((rc = cli_hw_load(cmd, &c.hw, &hw)) != 0 ||
         (rc = cli_hw_tp(cmd, c.hw.hw, &hw, a.have_tp, &a.tp)) != 0))
        goto out;
    if (a.model != NULL) {
        afd_model m;
        afd_error err;
        if (!isnan(a.kvb)) {
            rc = cli_usage_error(cmd, "--model and --kv-bytes-per-token exclude each other");
            goto out;
        }
        if (afd_model_load(a.model, &m, &err) != AFD_OK) {
            rc = cli_input_error(cmd, "%s: %s", a.model, err.text);
            goto out;
        }
        a.kvb = afd_kv_bytes_per_token(&m, a.tp);
    }
    if (isnan(a.kvb)) {
        rc = cli_usage_error(cmd, "--kv-bytes-per-token X (or --model M) is required");
        goto out;
    }
    /* the recompute law: options, else the prefill law of --hw */
    if (!isnan(a.ra) || !isnan(a.rb)) {
        if (isnan(a.ra) || isnan(a.rb)) {
            rc = cli_usage_error(cmd, "--recompute-a and --recompute-b go together");
            goto out;
        }
        law.a = a.ra;
        law.b = a.rb;
        law.c = isnan(a.rc) ? 0 : a.rc;
    } else if (c.hw.hw != NULL) {
        double sec;
        if (!afd_hw_has_prefill(&hw) || afd_unit_seconds(hw.unit, &sec) != AFD_OK) {
            rc = cli_input_error(cmd,
                                 "%s: no prefill law in a unit of time (prefill_a, "
                                 "prefill_b, prefill_c; unit s, ms or us)",
                                 c.hw.hw);
            goto out;
        }
        law.a = hw.prefill_a * sec;
        law.b = hw.prefill_b * sec;
        law.c = hw.prefill_c * sec;
    } else {
        rc = cli_usage_error(cmd, "the recompute time is needed: --recompute-a A --recompute-b B "
                                  "[--recompute-c C], or --hw FILE with a prefill law");
        goto out;
    }
    if (!(law.a >= 0 && law.b >= 0 && law.c >= 0)) {
        rc = cli_usage_error(cmd, "the recompute coefficients must be >= 0");
        goto out;
    }
    tok = a.tokens.n > 0 ? a.tokens.v : default_tokens;
    ntok = a.tokens.n > 0 ? a.tokens.n : 3;

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_unit(t, "s");
    cli_table_meta(t, "kv_bytes_per_token", "%.10g", a.kvb);
    if (a.mc > 0) {
        cli_table_meta(t, "seed", "%lld", (long long)a.seed);
        cli_table_begin(t, "tokens", "kv_bytes", "retrieval", "recompute", "p_recompute", "faster",
                        "retrieval_mc", "retrieval_se");
    } else {
        cli_table_begin(t, "tokens", "kv_bytes", "retrieval", "recompute", "p_recompute", "faster");
    }
    for (k = 0; k < ntok; k++) {
        double L = tok[k], S = L * a.kvb, R = law.a + law.b * L + law.c * L * L, f, M;
        afd_status st = afd_kv_retrieval_time(a.tier, a.n, S, R, &f, &M);
        if (st != AFD_OK) {
            cli_table_discard(t);
            rc = cli_runtime_error(cmd, "tokens = %g: %s", L, afd_strerror(st));
            goto out;
        }
        cli_table_count(t, L);
        cli_table_real(t, S);
        cli_table_real(t, f);
        cli_table_real(t, R);
        cli_table_real(t, M);
        cli_table_str(t, f < R ? "retrieve" : "recompute");
        if (a.mc > 0) {
            double mean, se;
            st = afd_mc_kv_retrieval(a.tier, a.n, S, R, (uint64_t)a.mc, (uint64_t)a.seed,
                                     a.threads, &mean, &se);
            if (st != AFD_OK) {
                cli_table_discard(t);
                rc = cli_runtime_error(cmd, "Monte Carlo: %s", afd_strerror(st));
                goto out;
            }
            cli_table_real(t, mean);
            cli_table_real(t, se);
        }
        cli_table_end_row(t);
    }
    cli_table_begin(t, "tier", "hit", "p_served", "latency", "bw_gbps", "break_even_tokens",
                    "fetch_wins");
    {
        double reach = 1;
        for (k = 0; k <= a.n; k++) {
            double be;
            afd_kv_break_even(a.tier, a.n, k, a.kvb, &law, &be);
            if (k < a.n) {
                cli_table_str(t, a.tier[k].name);
                cli_table_real(t, a.tier[k].hit);
                cli_table_real(t, reach * a.tier[k].hit);
                cli_table_real(t, a.tier[k].latency);
                cli_table_real(t, a.tier[k].bw / 1e9);
                reach *= 1 - a.tier[k].hit;
            } else {
                cli_table_str(t, "hierarchy");
                cli_table_real(t, 1 - reach);
                cli_table_real(t, 1 - reach);
                cli_table_real(t, NAN);
                cli_table_real(t, NAN);
            }
            cli_table_real(t, be);
            cli_table_str(t, be == 0 ? "always" : isinf(be) ? "never" : "above");
            cli_table_end_row(t);
        }
    }
    rc = cli_table_finish(t, cmd);
out:
    cli_list_free(&a.tokens);
    return rc;
}

const cli_command cli_cmd_kvretrieve = {
    .name = "kvretrieve",
    .path = "kvretrieve",
    .summary = "fetch a prefix's KV cache from a memory hierarchy or recompute it",
    .usage = "kvretrieve --tier NAME,HIT,LATENCY,GBPS... (--kv-bytes-per-token X | --model M)\n"
             "       (--recompute-a A --recompute-b B [--recompute-c C] | --hw FILE)\n"
             "       [--tokens LIST] [--mc N [--seed S]]",
    .description =
        "Block 1, one row per prefix length L: tokens kv_bytes retrieval recompute\n"
        "p_recompute faster.  retrieval is the expected time of the MIST recursion\n"
        "f_n = H_n (T_n + S / BW_n) + (1 - H_n) f_{n+1} over the tiers in --tier order,\n"
        "S = L x KV bytes per token, with f_{N+1} = recompute = a + b L + c L^2 (the\n"
        "prefill law); p_recompute the probability that every tier misses; faster says\n"
        "which is quicker.  --mc N adds retrieval_mc and retrieval_se, a Monte Carlo of\n"
        "N lookups.\n"
        "\n"
        "Block 2, one row per tier and a row 'hierarchy': tier hit p_served latency\n"
        "bw_gbps break_even_tokens fetch_wins: the prefix length above which a hit at\n"
        "that tier (or a lookup through the whole hierarchy) beats recomputing, and\n"
        "fetch_wins: always (break-even 0), above (longer prefixes) or never (the\n"
        "break-even is infinite, printed nan).\n"
        "Times in seconds.  The derivation is in\n"
        "libanalytic/serving/afd_kvretrieve.h and docs/kvretrieve.md.",
    .groups = kv_groups,
    .run = run,
};

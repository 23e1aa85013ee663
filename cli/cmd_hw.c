/* cmd_hw.c: afdkit hw, latency coefficients from model dimensions and
 * hardware specifications (Appendix B, eq. 17-31). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum {
    OPT_MODEL = OPT_COMMAND, OPT_HIDDEN, OPT_KV_DIM, OPT_KV_BYTES, OPT_D_EXPERT, OPT_EXPERTS,
    OPT_TOP_K, OPT_MTP, OPT_HBM, OPT_MEM_EFF, OPT_PEAK, OPT_COMPUTE_EFF, OPT_NET, OPT_EPC,
    OPT_BA, OPT_BF, OPT_BC, OPT_UNIT, OPT_OUT
};

static const cli_option model_options[] = {
    {"model", 0, "NAME", "model preset (default deepseek-v3)", OPT_MODEL},
    {"hidden", 0, "H", "hidden size", OPT_HIDDEN},
    {"kv-dim", 0, "N", "cached elements per token, d_c + d_rope", OPT_KV_DIM},
    {"kv-bytes", 0, "N", "bytes per cached element (2 for BF16)", OPT_KV_BYTES},
    {"d-expert", 0, "N", "expert intermediate dimension", OPT_D_EXPERT},
    {"experts", 0, "N", "routed experts in the system, N_expert", OPT_EXPERTS},
    {"top-k", 0, "K", "experts per token", OPT_TOP_K},
    {"mtp-depth", 0, "N", "multi-token-prediction depth", OPT_MTP},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_option spec_options[] = {
    {"hbm-bw", 0, "TB/s", "peak HBM bandwidth beta_HBM (required)", OPT_HBM},
    {"mem-eff", 0, "E", "effective memory bandwidth ratio eta_mem (default 1)", OPT_MEM_EFF},
    {"peak-tflops", 0, "T", "peak compute pi_peak in TFLOPS (required)", OPT_PEAK},
    {"compute-eff", 0, "E", "effective compute ratio eta_compute (default 1)", OPT_COMPUTE_EFF},
    {"net-bw", 0, "GB/s", "effective A-F network bandwidth beta_net (required)", OPT_NET},
    {"experts-per-card", 0, "N", "experts per FFN card, N_expert/card (required)", OPT_EPC},
    {"beta-a", 0, "S", "Attention intercept in seconds (empirical; default 0)", OPT_BA},
    {"beta-f", 0, "S", "FFN intercept in seconds (default 0)", OPT_BF},
    {"beta-c", 0, "S", "communication intercept in seconds (default 0)", OPT_BC},
    {"unit", 0, "U", "time unit of the output: s, ms, us or ns (default s)", OPT_UNIT},
    {"out", 'o', "FILE", "also write the coefficients as a key=value file for --hw", OPT_OUT},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group model_group = {"Model (Appendix B.1; overrides the preset)",
                                      model_options};
static const cli_group spec_group = {"Hardware specifications (Table 2)", spec_options};
static const cli_group *const hw_groups[] = {&model_group, &spec_group, &cli_output_group, NULL};

struct args {
    const char *model, *unit, *out;
    double dims[7];
    int have_dims[7];
    afd_hw_specs specs;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    const char *cmd = "hw";
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_MODEL: a->model = arg; return 0;
    case OPT_UNIT: a->unit = arg; return 0;
    case OPT_OUT: a->out = arg; return 0;
    case OPT_HBM: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->specs.hbm_bw);
    case OPT_MEM_EFF: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->specs.mem_eff);
    case OPT_PEAK: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->specs.peak_flops);
    case OPT_COMPUTE_EFF: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->specs.compute_eff);
    case OPT_NET: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->specs.net_bw);
    case OPT_EPC: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->specs.experts_per_card);
    case OPT_BA: return cli_real_min(cmd, opt->name, arg, 0, 0, &a->specs.beta_a);
    case OPT_BF: return cli_real_min(cmd, opt->name, arg, 0, 0, &a->specs.beta_f);
    case OPT_BC: return cli_real_min(cmd, opt->name, arg, 0, 0, &a->specs.beta_c);
    }
    {
        int k = opt->id - OPT_HIDDEN;
        a->have_dims[k] = 1;
        return cli_real_min(cmd, opt->name, arg, 0, k == 6 ? 0 : 1, &a->dims[k]);
    }
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    afd_model_dims m;
    afd_hw hw;
    cli_common c;
    cli_table *t;
    double scale;
    int rc, k;

    memset(&a, 0, sizeof a);
    a.model = "deepseek-v3";
    a.unit = "s";
    a.specs.hbm_bw = a.specs.peak_flops = a.specs.net_bw = a.specs.experts_per_card = NAN;
    a.specs.mem_eff = a.specs.compute_eff = 1;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;

    if (afd_model_preset(a.model, &m) != AFD_OK)
        return cli_usage_error(cmd, "--model: unknown model '%s' (known: deepseek-v3)", a.model);
    {
        double *const dims[7] = {&m.hidden,    &m.kv_dim, &m.kv_bytes, &m.d_expert,
                                 &m.n_experts, &m.top_k,  &m.mtp_depth};
        for (k = 0; k < 7; k++)
            if (a.have_dims[k])
                *dims[k] = a.dims[k];
    }
    if (isnan(a.specs.hbm_bw) || isnan(a.specs.peak_flops) || isnan(a.specs.net_bw) ||
        isnan(a.specs.experts_per_card))
        return cli_usage_error(cmd, "--hbm-bw, --peak-tflops, --net-bw and --experts-per-card "
                                    "are required");
    if (a.specs.mem_eff > 1 || a.specs.compute_eff > 1)
        return cli_usage_error(cmd, "efficiencies must be in (0, 1]");
    if (strcmp(a.unit, "s") == 0)
        scale = 1;
    else if (strcmp(a.unit, "ms") == 0)
        scale = 1e3;
    else if (strcmp(a.unit, "us") == 0)
        scale = 1e6;
    else if (strcmp(a.unit, "ns") == 0)
        scale = 1e9;
    else
        return cli_usage_error(cmd, "--unit must be s, ms, us or ns: '%s'", a.unit);

    /* Table 2 units to SI */
    a.specs.hbm_bw *= 1e12;
    a.specs.peak_flops *= 1e12;
    a.specs.net_bw *= 1e9;
    if (afd_hw_derive(&m, &a.specs, &hw) != AFD_OK)
        return cli_usage_error(cmd, "model dimensions and specifications must be positive");
    hw.alpha_a *= scale;
    hw.beta_a *= scale;
    hw.alpha_f *= scale;
    hw.beta_f *= scale;
    hw.alpha_c *= scale;
    hw.beta_c *= scale;
    snprintf(hw.unit, sizeof hw.unit, "%s", a.unit);

    if (a.out != NULL) {
        char text[1024];
        if (afd_hw_format(&hw, "afdkit hw: Appendix B coefficients (eq. 19, 26, 31)", text,
                          sizeof text) != AFD_OK)
            return cli_runtime_error(cmd, "internal error: hw file text too long");
        if ((rc = cli_write_file(cmd, a.out, text, strlen(text))) != 0)
            return rc;
    }

    t = cli_table_new(&c.out);
    if (t == NULL)
        return cli_runtime_error(cmd, "out of memory");
    cli_table_provenance(t);
    cli_table_begin(t, "alpha_a", "beta_a", "alpha_f", "beta_f", "alpha_c", "beta_c", "unit");
    cli_table_real(t, hw.alpha_a);
    cli_table_real(t, hw.beta_a);
    cli_table_real(t, hw.alpha_f);
    cli_table_real(t, hw.beta_f);
    cli_table_real(t, hw.alpha_c);
    cli_table_real(t, hw.beta_c);
    cli_table_str(t, hw.unit);
    cli_table_end_row(t);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_hw = {
    .name = "hw",
    .path = "hw",
    .summary = "latency coefficients from model dimensions and hardware specs (Appendix B)",
    .usage = "hw --hbm-bw TB/s --peak-tflops T --net-bw GB/s --experts-per-card N [OPTIONS]",
    .description =
        "Prints one row: alpha_a beta_a alpha_f beta_f alpha_c beta_c unit; --out FILE\n"
        "writes the same as a key=value file that --hw FILE reads.\n"
        "\n"
        "  alpha_a = (d_c + d_rope) kv_bytes / (beta_HBM eta_mem)                    eq. (19)\n"
        "  alpha_f = N_e/card 6 H d_expert / (pi_peak eta_compute) k (1+MTP) / N_e   eq. (26)\n"
        "  alpha_c = N_e/card 3 H / beta_net k (1+MTP) / N_e                         eq. (31)\n"
        "alpha_a is per token of KV load, alpha_f and alpha_c per request of the\n"
        "aggregated batch.  The intercepts are empirical (Appendix B.2.1): give them with\n"
        "--beta-a/f/c or fit them with afdkit calibrate.  The paper prints eq. (29)\n"
        "without the factor N_e/card that eq. (31) keeps; afdkit follows eq. (31).",
    .groups = hw_groups,
    .run = run,
};

/* cmd_hw.c: afdkit hw, latency coefficients from a model description and
 * hardware specifications (Appendix B, eq. 17-31), for the whole model. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
    OPT_MODEL = OPT_COMMAND, OPT_DEVICE, OPT_HIDDEN, OPT_KV_DIM, OPT_KV_BYTES, OPT_D_EXPERT,
    OPT_EXPERTS, OPT_TOP_K, OPT_MTP, OPT_LAYERS, OPT_FFN_LAYERS, OPT_HBM, OPT_MEM_EFF, OPT_PEAK,
    OPT_COMPUTE_EFF, OPT_NET, OPT_EPC, OPT_BA, OPT_BF, OPT_BC, OPT_UNIT, OPT_OUT, OPT_TP
};
#define N_DIMS 9

static const cli_option model_options[] = {
    {"model", 'm', "NAME|FILE",
     "model preset or config.json (default deepseek-v3)", OPT_MODEL},
    {"hidden", 0, "H", "hidden size", OPT_HIDDEN},
    {"kv-dim", 0, "N", "cached elements per token and layer, d_c + d_rope", OPT_KV_DIM},
    {"kv-bytes", 0, "N", "bytes per cached element (2 for BF16)", OPT_KV_BYTES},
    {"d-expert", 0, "N", "expert intermediate dimension", OPT_D_EXPERT},
    {"experts", 0, "N", "routed experts in the system, N_expert", OPT_EXPERTS},
    {"top-k", 0, "K", "experts per token", OPT_TOP_K},
    {"mtp-depth", 0, "N", "multi-token-prediction depth", OPT_MTP},
    {"layers", 0, "N", "attention layers counted in alpha_a", OPT_LAYERS},
    {"ffn-layers", 0, "N", "FFN-side (MoE) layers in alpha_f and alpha_c",
     OPT_FFN_LAYERS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_option spec_options[] = {
    {"device", 'd', "NAME|FILE",
     "device preset or file for the bandwidths, peak and efficiencies",
     OPT_DEVICE},
    {"hbm-bw", 0, "TB/s", "peak HBM bandwidth beta_HBM, in [0.05, 50]", OPT_HBM},
    {"mem-eff", 0, "E", "memory bandwidth efficiency eta_mem in (0, 1] (default 1)",
     OPT_MEM_EFF},
    {"peak-tflops", 0, "T", "peak compute pi_peak in TFLOP/s, in [1, 20000]", OPT_PEAK},
    {"compute-eff", 0, "E", "compute efficiency eta_compute in (0, 1] (default 1)",
     OPT_COMPUTE_EFF},
    {"net-bw", 0, "GB/s", "effective A-F network bandwidth in [0.1, 10000]", OPT_NET},
    {"experts-per-card", 0, "N", "experts per FFN card in [1, 1024] (MoE: required)",
     OPT_EPC},
    {"beta-a", 0, "T", "Attention intercept per step: 50us, or seconds (default 0)",
     OPT_BA},
    {"beta-f", 0, "T", "FFN intercept per step (default 0)", OPT_BF},
    {"beta-c", 0, "T", "communication intercept per step (default 0)", OPT_BC},
    {"unit", 0, "U", "time unit of the output: s, ms, us or ns (default s)", OPT_UNIT},
    {"out", 'o', "FILE", "also write the coefficients as a key=value file for --hw, with "
                         "the prefill and decode laws when --device is given", OPT_OUT},
    {"tp", 't', "T", "with --out: tensor-parallel size of the instance the laws time "
                     "(default 1)", OPT_TP},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group model_group = {"Model (Appendix B.1; options override the description)",
                                      model_options};
static const cli_group spec_group = {"Hardware specifications (Table 2; options override "
                                     "--device)",
                                     spec_options};
static const cli_group *const hw_groups[] = {&model_group, &spec_group, &cli_output_group, NULL};

struct args {
    const char *model, *device, *unit, *out;
    const char *beta[3];
    double tp;
    int have_tp, overrides, have_dims_any;
    double dims[N_DIMS];
    int have_dims[N_DIMS];
    double spec[AFD_HW_N_SPECS];
};

/* A Table-2 number given as an option, checked against its range. */
static int spec_option(const char *cmd, const char *opt, const char *arg, afd_hw_spec k,
                       double *out)
{
    double lo, hi;
    int lo_open, rc;
    const char *name, *unit;
    char ex[200];
    if ((rc = cli_real(cmd, opt, arg, out)) != 0)
        return rc;
    afd_hw_spec_range(k, &lo, &hi, &lo_open, &name, &unit);
    if (!(lo_open ? *out > lo : *out >= lo) || !(*out <= hi))
        return cli_usage_error(cmd, "--%s must be in %s%g, %g]%s%s: '%s'", opt,
                               lo_open ? "(" : "[", lo, hi, unit[0] ? " " : "", unit,
                               cli_excerpt(arg, ex, sizeof ex));
    return 0;
}

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    const char *cmd = "hw";
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_MODEL: a->model = arg; return 0;
    case OPT_DEVICE: a->device = arg; return 0;
    case OPT_UNIT: a->unit = arg; return 0;
    case OPT_OUT: a->out = arg; return 0;
    case OPT_TP: {
        int64_t v = 0; /* left unset when ARG is not an integer */
        int rc = cli_integer(cmd, opt->name, arg, 1, 1024, &v);
        a->tp = (double)v;
        a->have_tp = 1;
        return rc;
    }
    default: break;
    }
    if (opt->id >= OPT_HBM && opt->id <= OPT_NET)
        a->overrides = 1;
    switch (opt->id) {
    case OPT_HBM: return spec_option(cmd, opt->name, arg, AFD_HW_HBM_TBPS, &a->spec[0]);
    case OPT_MEM_EFF: return spec_option(cmd, opt->name, arg, AFD_HW_MEM_EFF, &a->spec[1]);
    case OPT_PEAK: return spec_option(cmd, opt->name, arg, AFD_HW_PEAK_TFLOPS, &a->spec[2]);
    case OPT_COMPUTE_EFF:
        return spec_option(cmd, opt->name, arg, AFD_HW_COMPUTE_EFF, &a->spec[3]);
    case OPT_NET: return spec_option(cmd, opt->name, arg, AFD_HW_NET_GBPS, &a->spec[4]);
    case OPT_EPC:
        return spec_option(cmd, opt->name, arg, AFD_HW_EXPERTS_PER_CARD, &a->spec[5]);
    case OPT_BA: a->beta[0] = arg; return 0;
    case OPT_BF: a->beta[1] = arg; return 0;
    case OPT_BC: a->beta[2] = arg; return 0;
    }
    {
        int k = opt->id - OPT_HIDDEN;
        a->have_dims[k] = 1;
        a->have_dims_any = 1;
        char ex[200];
        int rc = cli_real_min(cmd, opt->name, arg, 0, k == 6 ? 0 : 1, &a->dims[k]);
        if (rc != 0)
            return rc;
        /* a config.json's dimensions are integers below 1e9; an element is
         * at most 8 bytes (FP64) */
        if (k == 2 ? a->dims[k] > 8 : !(a->dims[k] < 1e9))
            return cli_usage_error(cmd, "--%s must be %s: '%s'", opt->name,
                                   k == 2 ? "in (0, 8] bytes" : "below 1e9",
                                   cli_excerpt(arg, ex, sizeof ex));
        return 0;
    }
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    static const char *const beta_names[3] = {"beta-a", "beta-f", "beta-c"};
    static const char *const spec_opts[AFD_HW_N_SPECS] = {
        "--hbm-bw", "--mem-eff", "--peak-tflops", "--compute-eff", "--net-bw",
        "--experts-per-card"};
    struct args a;
    afd_model desc;
    afd_model_dims m;
    afd_hw_specs specs;
    afd_hw hw, laws;
    afd_estimate_fit fit;
    int have_fit = 0;
    afd_device dev;
    afd_error err;
    char why[600] = "";
    cli_common c;
    cli_table *t;
    double beta[3] = {0, 0, 0};
    int rc, k;

    memset(&a, 0, sizeof a);
    a.model = "deepseek-v3";
    a.unit = "s";
    a.tp = 1;
    for (k = 0; k < AFD_HW_N_SPECS; k++)
        a.spec[k] = NAN;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;

    if (a.have_tp && a.out == NULL)
        return cli_usage_error(cmd, "--tp goes with --out: it sizes the instance that the "
                                    "file's prefill and decode laws time");
    if (a.have_tp && a.device == NULL)
        return cli_usage_error(cmd, "--tp: the prefill and decode laws come from the estimator "
                                    "and need --device NAME|FILE");
    if ((rc = cli_load_model(cmd, a.model, &desc)) != 0)
        return rc;
    if (afd_model_dims_from_model(&desc, &m) != AFD_OK)
        return cli_usage_error(cmd, "--model %s: the description gives no positive dimensions",
                               a.model);
    {
        double *const dims[N_DIMS] = {&m.hidden,    &m.kv_dim, &m.kv_bytes,
                                      &m.d_expert,  &m.n_experts, &m.top_k,
                                      &m.mtp_depth, &m.attn_layers, &m.ffn_layers};
        for (k = 0; k < N_DIMS; k++)
            if (a.have_dims[k])
                *dims[k] = a.dims[k];
    }
    if (a.device != NULL) {
        /* the device's numbers where no option gave one; its link times the
         * decode comm_eff is the effective network bandwidth */
        if ((rc = cli_load_device(cmd, a.device, &dev)) != 0)
            return rc;
        afd_hw_specs_from_device(&dev, a.spec);
    }
    if (isnan(a.spec[AFD_HW_MEM_EFF]))
        a.spec[AFD_HW_MEM_EFF] = 1;
    if (isnan(a.spec[AFD_HW_COMPUTE_EFF]))
        a.spec[AFD_HW_COMPUTE_EFF] = 1;
    if (isnan(a.spec[AFD_HW_EXPERTS_PER_CARD]) && m.n_experts == 1)
        a.spec[AFD_HW_EXPERTS_PER_CARD] = 1; /* a dense MLP: one "expert" per card */
    /* a device gives the bandwidths and the peak, never the experts per card */
    for (k = 0; k < AFD_HW_N_SPECS; k++)
        if (k != AFD_HW_EXPERTS_PER_CARD && isnan(a.spec[k]))
            return cli_usage_error(cmd, "%s is required (or --device NAME|FILE for the "
                                        "bandwidths and peak)",
                                   spec_opts[k]);
    if (isnan(a.spec[AFD_HW_EXPERTS_PER_CARD]))
        return cli_usage_error(cmd, "--experts-per-card N is required for %s (%g routed "
                                    "experts): how many one FFN card holds, which no device "
                                    "file gives",
                               a.model, m.n_experts);
    if (a.spec[AFD_HW_EXPERTS_PER_CARD] > m.n_experts)
        return cli_usage_error(cmd, "--experts-per-card %g exceeds the %g routed experts of %s",
                               a.spec[AFD_HW_EXPERTS_PER_CARD], m.n_experts, a.model);
    /* a token reaches at most every expert, and the FFN-side layers are
     * some of the model's layers */
    if (m.top_k > m.n_experts)
        return cli_usage_error(cmd, "%g experts per token (--top-k) exceed the %g routed experts "
                                    "(--experts) of %s",
                               m.top_k, m.n_experts, a.model);
    if (m.ffn_layers > m.attn_layers)
        return cli_usage_error(cmd, "%g FFN-side layers (--ffn-layers) exceed the %g layers "
                                    "(--layers) of %s",
                               m.ffn_layers, m.attn_layers, a.model);
    for (k = 0; k < 3; k++) {
        char ex[200];
        if (a.beta[k] == NULL)
            continue;
        /* the one unit rule: no latency file, so bare numbers are seconds */
        if ((rc = cli_time(cmd, beta_names[k], a.beta[k], "s", &beta[k])) != 0)
            return rc;
        if (!(beta[k] >= 0) || !isfinite(beta[k]))
            return cli_usage_error(cmd, "--%s must be >= 0: '%s'", beta_names[k],
                                   cli_excerpt(a.beta[k], ex, sizeof ex));
    }
    if (afd_hw_specs_from_table2(a.spec, beta[0], beta[1], beta[2], &specs, &err) != AFD_OK)
        return cli_usage_error(cmd, "%s%s: %s", a.device != NULL ? "--device " : "",
                               a.device != NULL ? a.device : "specifications", err.text);
    if (afd_hw_derive(&m, &specs, &hw) != AFD_OK)
        return cli_usage_error(cmd, "model dimensions must be positive");
    if (afd_hw_seconds_to_unit(&hw, a.unit) != AFD_OK)
        return cli_usage_error(cmd, "--unit must be s, ms, us or ns: '%s'", a.unit);
    snprintf(hw.model, sizeof hw.model, "%s", desc.name);
    if (a.device != NULL) {
        const char *slash = strrchr(a.device, '/');
        snprintf(hw.device, sizeof hw.device, "%s", slash != NULL ? slash + 1 : a.device);
    }

    /* The serving laws: BestServe's estimator for the model description and
     * the device as described (afd_estimate_laws, in ms), converted to the
     * file's unit.  They need the whole device (memory, per-phase
     * efficiencies), so raw Table-2 numbers give none. */
    afd_hw_init(&laws);
    memset(&fit, 0, sizeof fit);
    if (a.out != NULL && a.device == NULL) {
        snprintf(why, sizeof why, "no prefill or decode laws: they come from the estimator, "
                                  "which needs --device NAME|FILE (memory, per-phase "
                                  "efficiencies), not the Table-2 numbers alone");
    } else if (a.out != NULL) {
        afd_status st = afd_estimate_laws_fit(&desc, &dev, a.tp, &laws, &fit, &err);
        have_fit = st == AFD_OK;
        if (st != AFD_OK && a.have_tp)
            return st == AFD_EINVAL ? cli_usage_error(cmd, "--tp %g: %s", a.tp, err.text)
                                    : cli_runtime_error(cmd, "%s", err.text);
        if (st != AFD_OK)
            snprintf(why, sizeof why, "no prefill or decode laws for %s on %s at TP 1: %s; "
                                      "give --tp", desc.name, dev.name, err.text);
        else if (afd_hw_copy_laws(&hw, &laws) != AFD_OK)
            return cli_runtime_error(cmd, "internal error: laws in %s, file in %s", laws.unit,
                                     hw.unit);
    }

    if (a.out != NULL) {
        char *text, comment[1200];
        if (why[0] != '\0')
            snprintf(comment, sizeof comment,
                     "afdkit hw: Appendix B coefficients (eq. 19, 26, 31), whole model\n# %s",
                     why);
        else
            snprintf(comment, sizeof comment,
                     "afdkit hw: Appendix B coefficients (eq. 19, 26, 31), whole model\n"
                     "# prefill and decode laws: BestServe's estimator for %s on %s, TP %g "
                     "(largest relative error %.3g), as afdkit estimate --out",
                     desc.name, dev.name, a.tp, laws.fit_max_rel_err);
        text = malloc(AFD_HW_TEXT_MAX);
        if (text == NULL)
            return cli_runtime_error(cmd, "out of memory");
        if (afd_hw_format(&hw, comment, text, AFD_HW_TEXT_MAX) != AFD_OK) {
            free(text);
            return cli_runtime_error(cmd, "internal error: hw file text too long");
        }
        rc = cli_write_file(cmd, a.out, text, strlen(text));
        free(text);
        if (rc != 0)
            return rc;
        if (have_fit) /* the file holds the prefill and decode laws of the fit */
            cli_warn_fit(cmd, &fit, AFD_FIT_DECODE + 1);
        if (why[0] != '\0')
            cli_warn(cmd, "%s", why);
        else if (a.overrides || a.have_dims_any)
            cli_warn(cmd, "the prefill and decode laws in %s are the estimator's for %s on %s "
                          "as described: the dimension and specification options change only "
                          "the six Appendix B coefficients",
                     a.out, desc.name, dev.name);
    }

    t = cli_table_new(&c.out);
    if (t == NULL)
        return cli_runtime_error(cmd, "out of memory");
    cli_table_provenance(t);
    cli_table_meta(t, "model",
                   "%s hidden=%g kv_dim=%g kv_bytes=%g d_expert=%g experts=%g top_k=%g "
                   "mtp_depth=%g layers=%g ffn_layers=%g",
                   desc.name, m.hidden, m.kv_dim, m.kv_bytes, m.d_expert, m.n_experts, m.top_k,
                   m.mtp_depth, m.attn_layers, m.ffn_layers);
    cli_table_meta(t, "specs",
                   "%s%s%shbm_tbps=%g mem_eff=%g peak_tflops=%g compute_eff=%g net_gbps=%g "
                   "experts_per_card=%g",
                   a.device != NULL ? "device=" : "", a.device != NULL ? a.device : "",
                   a.device != NULL ? " " : "", a.spec[0], a.spec[1], a.spec[2], a.spec[3], a.spec[4], a.spec[5]);
    cli_table_meta(t, "scope",
                   "one decode step of the whole model: alpha_a x %g attention layers, "
                   "alpha_f and alpha_c x %g FFN layers",
                   m.attn_layers, m.ffn_layers);
    cli_table_unit(t, "%s", hw.unit);
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
    .summary = "whole-model latency coefficients from a model and hardware specs (Appendix B)",
    .usage = "hw [--model NAME|FILE] (--device NAME|FILE | --hbm-bw TB/s --peak-tflops T "
             "--net-bw GB/s) [--experts-per-card N] [--out FILE [--tp T]] [OPTIONS]",
    .description =
        "Prints one row: alpha_a beta_a alpha_f beta_f alpha_c beta_c unit; --out FILE\n"
        "writes the same as a key=value file that --hw FILE reads.\n"
        "\n"
        "The coefficients time one decode step of a micro-batch through the WHOLE\n"
        "model (Section 3.1).  Appendix B derives each slope for one layer, and a\n"
        "step runs every layer, so\n"
        "  alpha_a = L_attn (d_c + d_rope) kv_bytes / (beta_HBM eta_mem)      eq. (19)\n"
        "  alpha_f = L_ffn N_e/card 6 H d_expert / (pi_peak eta_compute)\n"
        "            x k (1+MTP) / N_e                                        eq. (26)\n"
        "  alpha_c = L_ffn N_e/card 3 H / beta_net x k (1+MTP) / N_e          eq. (31)\n"
        "with L_attn = num_hidden_layers (every layer has attention) and L_ffn the\n"
        "layers whose MLP runs on the FFN side: num_hidden_layers -\n"
        "first_k_dense_replace for a MoE model (61 and 58 for DeepSeek-V3), every\n"
        "layer of a dense model (its MLP is one expert: N_e = k = N_e/card = 1).\n"
        "The first dense MLPs stay with Attention and read their weights once per\n"
        "step whatever the load: part of beta_a.  Shared experts and the MTP\n"
        "module's own layer are not counted (Appendix B has neither).  alpha_a is\n"
        "per token of KV load, alpha_f and alpha_c per request of the aggregated\n"
        "batch.  --layers 1 --ffn-layers 1 gives Appendix B's per-layer values.\n"
        "\n"
        "--model takes a preset (afdkit help --presets) or a Hugging Face\n"
        "config.json, as estimate does: H = hidden_size, d_c + d_rope = kv_lora_rank\n"
        "+ qk_rope_head_dim (MLA; GQA: 2 num_key_value_heads head_dim), kv_bytes\n"
        "from torch_dtype, d_expert = moe_intermediate_size, N_e = n_routed_experts,\n"
        "k = num_experts_per_tok, MTP = num_nextn_predict_layers; the dimension\n"
        "options override single values.  --device takes hbm_tbps, peak_tflops\n"
        "(dense 16-bit; Table 2 asks for the INT8 peak of the quantized expert\n"
        "GEMMs: give --peak-tflops for that), the decode mbu and mfu as eta_mem and\n"
        "eta_compute, and net_gbps x comm_eff (its tensor-parallel link) as\n"
        "beta_net; options override it.\n"
        "Every device number must lie in a plausible range, so that a value in the\n"
        "wrong unit (--hbm-bw 3350 meant as GB/s) is refused: --hbm-bw [0.05, 50]\n"
        "TB/s, --peak-tflops [1, 20000], --net-bw [0.1, 10000] GB/s, efficiencies\n"
        "(0, 1], --experts-per-card [1, 1024] and at most N_e.\n"
        "The intercepts are empirical (Appendix B.2.1): give them with --beta-a/f/c\n"
        "(50us, or bare seconds) or fit them with afdkit calibrate.  --provenance\n"
        "prints the dimensions and numbers used (## model=, ## specs=, ## scope=).\n"
        "The paper prints eq. (29) without the factor N_e/card that eq. (31) keeps;\n"
        "afdkit follows eq. (31).\n"
        "\n"
        "--out FILE with --device also writes the prefill and decode laws, fit_max_rel_err,\n"
        "model, device and tp = T: what afdkit estimate --out writes for the model on the\n"
        "device at --tp T (default 1), in --unit, for pd, goodput and serve.  They time a\n"
        "collocated instance of T devices (BestServe's estimator); the six coefficients\n"
        "are Appendix B's for the Attention and FFN stages, derived apart and independent\n"
        "of T.  The laws take the model and device as described: the dimension options\n"
        "and --hbm-bw ... --net-bw change only the six (a warning says so).  Raw numbers\n"
        "without --device give no laws (the estimator needs the device's memory and\n"
        "per-phase efficiencies), nor do weights that do not fit at the default TP 1;\n"
        "the file says why in a comment and a warning repeats it.\n"
        "\n"
        "--out also writes afd_tp = 1, the devices per instance the six time: eq. (19)\n"
        "reads the KV through one card's HBM and eq. (23) runs one card's experts, so\n"
        "ratio and sweep price one device per instance whatever T.  With fewer experts\n"
        "per card than experts an FFN instance spans N_e / N_e/card cards against one\n"
        "for Attention: no one size, and no afd_tp line.",
    .groups = hw_groups,
    .run = run,
};

/* serve_opts.h: the options of the serving simulator shared by afdkit serve
 * and afdkit strategies. */
#ifndef AFD_CLI_SERVE_OPTS_H
#define AFD_CLI_SERVE_OPTS_H

#include <stdint.h>

#include "afd_serve.h"
#include "cli.h"

/* Option ids 300..349 belong to these groups. */
enum {
    OPT_SV_ARCH = 300, OPT_SV_INSTANCES, OPT_SV_PREFILL, OPT_SV_DECODE, OPT_SV_PBMAX,
    OPT_SV_DBMAX, OPT_SV_CHUNK, OPT_SV_PSEUDO, OPT_SV_KVB, OPT_SV_NET, OPT_SV_KVLAT,
    OPT_SV_LAMBDA, OPT_SV_LENGTHS, OPT_SV_REQUESTS, OPT_SV_WARMUP, OPT_SV_BATCHES,
    OPT_SV_SEED, OPT_SV_TTFT, OPT_SV_TPOT, OPT_SV_UNSTABLE, OPT_SV_MODEL, OPT_SV_DEVICE,
    OPT_SV_TP, OPT_SV_ARRIVALS, OPT_SV_TSCALE, OPT_SV_ROUTER, OPT_SV_PCACHE, OPT_SV_BLOCK,
    OPT_SV_DROUTER, OPT_SV_LAST
};

typedef struct cli_serve_args {
    const char *cmd;
    const char *arch;
    int64_t instances, prefill, decode, prefill_bmax, decode_bmax, chunk;
    double pseudo_tau, kv_bytes, net_gbps;
    afd_serve_router router, decode_router;
    int64_t prefix_blocks, block_size; /* --prefix-cache (0: none), --block-size */
    int prefix_kv;                     /* --prefix-cache kv: the KV memory left free */
    const char *lambda, *ttft_slo, *tpot_slo, *kv_latency; /* parsed once the unit is known */
    int64_t prompt, output; /* --lengths, 0 if not given */
    int64_t requests, warmup, batches, seed;
    int allow_unstable;
    const char *model, *device; /* the latency laws from the estimator, instead of --hw */
    int laws;                   /* the command evaluates the laws in closed forms (a note
                                 * states their error even where step tables exist) */
    int64_t tp;
    int have_tp;         /* --tp given */
    int replay;          /* --arrivals trace */
    double time_scale;   /* --time-scale, NAN if not given */
    int have_requests, have_warmup;
    uint64_t given; /* bit id - OPT_SV_ARCH of every option of ids 300..363 given */
} cli_serve_args;

/* The bit of option id in cli_serve_args.given. */
#define CLI_SERVE_BIT(id) (UINT64_C(1) << ((id) - OPT_SV_ARCH))

extern const cli_group cli_serve_arch_group;
extern const cli_group cli_serve_model_group;
/* --model and --device without --tp, headed without --hw: for the commands
 * that take no latency file and try a list of tensor-parallel sizes. */
extern const cli_group cli_serve_model_only_group;
extern const cli_group cli_serve_run_group;
/* --arrivals poisson|trace, --time-scale X (afdkit serve only). */
extern const cli_group cli_serve_arrivals_group;

void cli_serve_init(cli_serve_args *a, const char *cmd);
/* Handle an option of the two groups; 0 or an exit code. */
int cli_serve_option(cli_serve_args *a, const cli_option *opt, const char *arg);

typedef struct cli_serve_setup {
    afd_serve_params params;
    afd_hw hw;
    afd_workload wl;
    int have_wl;
    double unit_seconds; /* seconds per unit of the latency laws */
    double kv_ms_per_token; /* --model: KV transfer per prompt token, ms */
    double kv_capacity;     /* --model: KV-cache tokens per instance (NAN otherwise) */
    double *times;          /* --arrivals trace: the replayed arrival times, or NULL */
    double replay_rate;     /* --arrivals trace: the replayed rate, per second */
} cli_serve_setup;

/* The serving laws of an instance of tp devices of `device` serving `model`
 * (afd_estimate_laws, in ms), the KV transfer time per prompt token between
 * instances (the instance's KV bytes per token over its tp links of
 * net_gbps, in ms) and the KV-cache capacity of an instance in tokens (NAN
 * and a printed error when the weights do not fit: exit code returned).
 * 0 or an exit code after printing an error. */
int cli_serve_laws(const char *cmd, const char *model, const char *device, double tp, afd_hw *hw,
                   double *kv_ms_per_token, double *kv_capacity);

/* Load the latency file and the workload, convert the times and rates to the
 * latency unit and fill su->params (need_lambda: --lambda is required).
 * 0 or an exit code after printing an error (su then holds nothing); on
 * success free su with cli_serve_setup_free. */
int cli_serve_prepare(const cli_serve_args *a, const cli_common *c, int need_lambda,
                      cli_serve_setup *su);
void cli_serve_setup_free(cli_serve_setup *su);

/* The readers of a KV-cache capacity, which take one below a request
 * differently. */
typedef enum { CLI_KV_TAICHI, CLI_KV_TWOTIER, CLI_KV_REGIME } cli_kv_reader;

/* A KV-cache capacity of cap tokens per instance below one request of the
 * workload (its largest, prompt + output tokens, of fixed lengths or a
 * trace, or for the geometric model, whose lengths have no largest, its
 * mean) is simulated all the same: a one-line warning naming what (e.g.
 * "--kv-capacity 500"), cap, the request and what who does with it
 * (taichi: only the flow mark watermark x cap, nothing when uniform;
 * twotier: a prompt that does not fit is prefilled alone on an empty HP
 * instance).  Nothing when it fits or cap is +inf. */
void cli_serve_warn_kv(const char *cmd, const char *what, double cap, const cli_serve_setup *su,
                       cli_kv_reader who, double watermark, int uniform);

/* The requests of a command that takes --lengths P,G or a workload of the
 * workload group (--trace FILE or --geometric; --theta/--nu give no
 * lengths): exactly one.  A workload is loaded into *w (the trace's
 * prompt/output pairs kept, which the simulator draws), *have_wl set; *len
 * gets the statistics the closed forms read (afd_taichi_lengths_of: the
 * means E[P], E[G] and theta of Lemma 4.1).  0 or an exit code after
 * printing an error; on success with *have_wl, free *w with
 * afd_workload_free. */
int cli_serve_requests(const cli_serve_args *a, const cli_common *c, afd_workload *w,
                       int *have_wl, afd_taichi_lengths *len);

/* The decode batch cap of an instance with the laws hw and kv_capacity KV
 * tokens serving the requests len under the TPOT SLO tpot (the unit of hw;
 * +inf: none): *fit = afd_decode_bmax's (the KV memory, the SLO and the
 * batches the law was fitted on; 0: none holds one sequence, *why then
 * AFD_DECODE_BMAX_MEMORY or _TPOT).  *bmax = *fit, or with --decode-bmax B
 * given, min(B, the sequences whose whole requests the memory holds) (0:
 * not one; *why = AFD_DECODE_BMAX_MEMORY). */
void cli_serve_decode_cap(const cli_serve_args *a, const afd_hw *hw, double kv_capacity,
                          const afd_taichi_lengths *len, double tpot, unsigned *bmax,
                          unsigned *fit, int *why);

/* Whether a given --decode-bmax binds: among n values at the given cap
 * (at[k]) and at the cap that does not bind (fit[k]; NaN where not
 * computed), stride bytes apart, the index of the largest relative rise
 * fit / at - 1 above min_rise (from 0, an infinite rise), or n when none. */
size_t cli_cap_binds(const double *at, const double *fit, size_t n, size_t stride,
                     double min_rise);

/* --router's name of a router. */
const char *cli_serve_router_name(afd_serve_router r);

#endif /* AFD_CLI_SERVE_OPTS_H */

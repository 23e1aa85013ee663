"""The C declarations afdkit's Python functions call, and the loader.

cffi's ABI mode: no compiler is needed at install time.  The declarations
below copy the installed headers (libanalytic/*/afd_*.h) and the Monte Carlo
engine's (montecarlo/afd/afd_mc.h, afd_pipeline.h); the test suite compiles a
program against the headers and checks that every struct's size and every
field's offset agree with these copies, so they cannot drift unnoticed.

Where the libraries are found, first match wins:
  1. AFDKIT_BUILD_DIR: an afdkit build tree (libanalytic/.libs/ and
     montecarlo/.libs/ under it);
  2. AFDKIT_LIBDIR: a directory holding libanalytic.so.0 (and afdkit/ below
     it holding libafdmontecarlo.so);
  3. pkg-config's libdir of the afdkit package (set PKG_CONFIG_PATH for a
     prefix other than the system's);
  4. the dynamic loader's own search (ldconfig, LD_LIBRARY_PATH).
"""

import os
import subprocess

import cffi

CDEF = r"""
typedef enum afd_status {
    AFD_OK = 0, AFD_EOF, AFD_EINVAL, AFD_EPARSE, AFD_ERANGE, AFD_EEMPTY, AFD_EIO,
    AFD_ENOMEM, AFD_ENUMERIC, AFD_EUNSTABLE, AFD_EINFINITE, AFD_ELIMIT
} afd_status;
typedef struct afd_error { long line; long column; char text[240]; } afd_error;
typedef struct afd_result { double val; double err; } afd_result;
const char *afd_strerror(afd_status status);
void afd_error_clear(afd_error *err);
const char *afd_version(void);

/* afd_renewal.h, afd_arrivals.h, afd_trace.h, afd_workload.h */
typedef struct afd_renewal_stats {
    uint64_t n; double theta; double nu; double theta_se; double nu_se;
    double cov_theta_nu; double ey2; double mean_p; double mean_d;
} afd_renewal_stats;
typedef struct afd_arrival_stats {
    uint64_t n; double first, last; double span; double lambda;
    double idc[3]; double idc_se[3]; uint64_t windows[3]; long unsorted_line;
} afd_arrival_stats;
typedef struct afd_trace_filter { const char *column; const char *value; } afd_trace_filter;
typedef struct afd_trace_options {
    const char *prompt_col; const char *output_col; const char *time_col;
    const char *time_unit; const afd_trace_filter *where; size_t n_where;
    const char *format; const char *hash_col;
} afd_trace_options;
typedef enum afd_workload_kind {
    AFD_WORKLOAD_TRACE = 1, AFD_WORKLOAD_GEOMETRIC, AFD_WORKLOAD_GIVEN
} afd_workload_kind;
typedef struct afd_workload_pair { uint64_t prompt; uint64_t decode; uint64_t count; } afd_workload_pair;
typedef struct afd_workload {
    afd_workload_kind kind; afd_renewal_stats stats; double mu_p, mu_d;
    uint64_t rows; uint64_t skipped; uint64_t filtered; long first_skipped_line;
    uint64_t max_d; double tail_alpha; double tail_alpha_se; size_t tail_k;
    size_t n_kept; uint64_t *prompt; uint64_t *decode; double *time;
    afd_arrival_stats arrivals;
    size_t n_pairs; afd_workload_pair *pairs;
    uint32_t *blocks; uint64_t *block_start; size_t n_block_ids;
} afd_workload;
typedef struct afd_workload_trace_options {
    afd_trace_options columns; uint64_t decode_offset; int keep_rows; size_t max_rows;
    void (*progress)(void *ctx, uint64_t rows, uint64_t bytes); void *progress_ctx;
    int keep_pairs; size_t max_pairs; int keep_blocks; int no_moments;
} afd_workload_trace_options;
afd_status afd_workload_from_trace(const char *path, const afd_workload_trace_options *opt,
                                   afd_workload *out, afd_error *err);
afd_status afd_workload_geometric(double mu_p, double mu_d, afd_workload *out);
afd_status afd_workload_given(double theta, double nu, afd_workload *out);
void afd_workload_free(afd_workload *w);
const char *afd_workload_kind_name(afd_workload_kind kind);

/* afd_hw.h */
typedef struct afd_hw_table {
    unsigned nb, ns; double b[96], s[96]; double t[4096];
} afd_hw_table;
typedef struct afd_hw {
    double alpha_a, beta_a; double alpha_f, beta_f; double alpha_c, beta_c;
    char unit[16];
    double prefill_a, prefill_b, prefill_c;
    double decode_beta, decode_gamma, decode_alpha;
    double fit_max_rel_err; char model[64]; char device[64];
    double afd_fit_max_rel_err; unsigned tp; unsigned decode_batch_max; unsigned afd_tp;
    afd_hw_table decode_table, prefill_table;
} afd_hw;
void afd_hw_init(afd_hw *hw);
afd_status afd_hw_preset(const char *name, afd_hw *out);
const char *afd_hw_preset_name(size_t i);
afd_status afd_hw_check(const afd_hw *hw, afd_error *err);
afd_status afd_hw_read(const char *path, afd_hw *out, afd_error *err);

/* afd_barrier.h */
afd_status afd_kappa_check_r(double r, afd_error *err);
afd_status afd_kappa_e(double r, afd_result *result);
double afd_barrier_overhead_clt(double theta, double nu, double B, double r);

/* afd_ratio.h */
typedef struct afd_system { afd_hw hw; unsigned B; double theta; double nu; } afd_system;
void afd_interval95(double x, double se, double *lo, double *hi);
afd_status afd_system_check(const afd_system *s, afd_error *err);
const char *afd_bind_name(unsigned bind);
typedef struct afd_cycle {
    double r; double x; double mu_a; double sigma_a; double t_comm; double t_ffn;
    double tau_mf; double thr_mf; double tau_g; double thr_g; double tau_g_err;
    double p_attention; double barrier; unsigned bind;
    double eta_a_mf, eta_f_mf, eta_a_g, eta_f_g;
} afd_cycle;
afd_status afd_cycle_eval(const afd_system *s, double r, afd_cycle *out);
afd_status afd_cycle_topology(const afd_system *s, unsigned x, unsigned y, afd_cycle *out);
typedef struct afd_mf_result {
    double r; double thr; double tau; int which; double candidate[4]; double thr_candidate[4];
} afd_mf_result;
afd_status afd_ratio_mf(const afd_system *s, afd_mf_result *out, afd_error *err);
afd_status afd_ratio_g(const afd_system *s, const double *rs, size_t n, afd_cycle *best);
afd_status afd_ratio_se(const afd_system *s, char rule, double r_g, double lo, double hi,
                        double theta_se, double nu_se, double cov, double *r_cont,
                        double *se);
typedef struct afd_topology { unsigned x, y; afd_cycle cycle; } afd_topology;
afd_status afd_topology_search(const afd_system *s, unsigned max_n, afd_topology *best,
                               size_t k, size_t *found);
afd_status afd_ratio_cost_g(const afd_system *s, double w, const double *rs, size_t n,
                            afd_cycle *best, double *value);
afd_status afd_ratio_cost_se(const afd_system *s, double w, char rule, double r_g,
                             double lo, double hi, double theta_se, double nu_se,
                             double cov, double *r_cont, double *se);

/* afd_cost.h, afd_parse.h */
double afd_bundle_per_cost(double r, double B, double tau, double unit_seconds,
                           double cost_a, double cost_f, int per_hour);
afd_status afd_unit_seconds(const char *unit, double *sec);

/* afd_queue.h */
typedef struct afd_mdc afd_mdc;
afd_status afd_mdc_alloc(double lambda, double service, unsigned c, afd_mdc **q);
void afd_mdc_free(afd_mdc *q);
afd_status afd_mdc_wq_e(const afd_mdc *q, afd_result *result);
afd_status afd_mdc_p_wait_e(const afd_mdc *q, afd_result *result);
afd_status afd_mdc_wait_quantile_e(const afd_mdc *q, double p, afd_result *result);
double afd_mdc_wq_cosmetatos(double lambda, double service, unsigned c);
double afd_mdc_wq_allen_cunneen(double lambda, double service, unsigned c);
double afd_mdc_wq_kingman(double lambda, double service, unsigned c);
typedef struct afd_mdc_approx {
    double wq_cosmetatos, wq_allen_cunneen, wq_kingman;
    double err_cosmetatos, err_allen_cunneen, err_kingman;
} afd_mdc_approx;
afd_status afd_mdc_approx_compare(double lambda, double service, unsigned c, double wq_exact,
                                  afd_mdc_approx *out);

/* afd_model.h, afd_device.h, afd_estimate.h */
typedef struct afd_model {
    char name[64]; double hidden; double intermediate; double heads; double kv_heads;
    double head_dim; double layers; double vocab; double dtype_bytes;
    double weight_bytes_per_param; int tied_embeddings; int qkv_bias;
    int moe; double n_routed_experts, experts_per_tok, moe_intermediate, n_shared_experts;
    double first_k_dense;
    int mla; double q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim;
    double mtp_layers;
    double max_position, sliding_window;
    double shared_intermediate; int shared_expert_gate; int qk_norm;
    double dense_layers;
} afd_model;
afd_status afd_model_load(const char *name_or_path, afd_model *out, afd_error *err);
double afd_model_params(const afd_model *m);
double afd_model_active_params(const afd_model *m);
double afd_model_weight_bytes(const afd_model *m);
double afd_model_kv_bytes_per_token(const afd_model *m);
typedef enum afd_phase { AFD_PREFILL = 0, AFD_DECODE = 1 } afd_phase;
typedef struct afd_device {
    char name[64]; double peak_tflops, hbm_tbps, hbm_gb, net_gbps;
    double mfu[2], mbu[2], comm_eff[2]; double dispatch_ms[3];
    double comm_latency_ms; double mem_util; double price_per_hour, power_w;
    double kernel_us; double roofline_p;
    int kernel_model; int engine; double sm_count, kernel_floor_us;
    double gemm_tflops, gemm_tbps, gemm_p, gemm_tile_n, gemm_occ_ctas, gemm_occ_exp;
    double attn_prefill_tflops, attn_tail, attn_cta_us;
    double attn_decode_tbps, attn_cta_gbps, attn_decode_p;
    double elementwise_tbps;
    double allreduce_us[3], allreduce_gbps[3];
    double eager_op_us, eager_gap_us;
} afd_device;
afd_status afd_device_load(const char *name_or_path, afd_device *out, afd_error *err);
typedef struct afd_estimate_options {
    double tp; afd_phase phase; double batch; double seq; int paper_forms; int no_dispatch;
    int eager;
} afd_estimate_options;
typedef struct afd_estimate_op {
    char module[12]; char name[16]; double work; double traffic; double time_s;
    int compute_bound;
} afd_estimate_op;
typedef struct afd_estimate_module {
    char name[12]; double dispatch_s; double compute_s; double comm_s; double end_s;
} afd_estimate_module;
double afd_estimate_algorithm1(afd_estimate_module mod[4]);
typedef struct afd_estimate {
    afd_estimate_module module[4]; double block_s; double forward_s;
    double forward_dispatch_s; double forward_compute_s; double forward_comm_s;
    double dispatch_bound; size_t n_ops; afd_estimate_op ops[48];
} afd_estimate;
afd_status afd_estimate_forward(const afd_model *m, const afd_device *d,
                                const afd_estimate_options *o, afd_estimate *out,
                                afd_error *err);
afd_status afd_estimate_laws(const afd_model *m, const afd_device *d, double tp,
                             afd_hw *hw, afd_error *err);

/* GSL, loaded with libanalytic: its default handler aborts the process. */
void *gsl_set_error_handler_off(void);
"""

CDEF_MC = r"""
/* montecarlo/afd/afd_mc.h */
unsigned afd_mc_threads(unsigned requested);
typedef struct afd_barrier_mc_params {
    const afd_workload *workload; unsigned B; const unsigned *r; size_t n_r;
    uint64_t trials; uint64_t seed; int per_slot; int by_row; unsigned threads;
    void (*progress)(void *ctx, uint64_t done, uint64_t total); void *progress_ctx;
} afd_barrier_mc_params;
typedef struct afd_barrier_mc_result {
    unsigned r; double mean_w, mean_w_se; double sd_w; double overhead, overhead_se;
} afd_barrier_mc_result;
afd_status afd_barrier_mc(const afd_barrier_mc_params *p, afd_barrier_mc_result *out);
typedef struct afd_slot_mc_params {
    const afd_workload *workload; uint64_t steps; uint64_t warmup; unsigned batches;
    uint64_t seed, stream;
    void (*progress)(void *ctx, uint64_t done, uint64_t total); void *progress_ctx;
} afd_slot_mc_params;
typedef struct afd_slot_mc_result {
    double mean, mean_se; double mean_sq, mean_sq_se; uint64_t requests; uint64_t steps;
    double batch_lifetimes; double batch_lag1;
} afd_slot_mc_result;
afd_status afd_slot_mc(const afd_slot_mc_params *p, afd_slot_mc_result *out);
typedef double (*afd_service_fn)(uint64_t prompt, void *ctx);
typedef struct afd_queue_sim_params {
    unsigned c; double lambda; double service; const afd_workload *trace;
    afd_service_fn service_fn; void *service_ctx; uint64_t customers; uint64_t warmup;
    unsigned batches; double quantile; uint64_t seed, stream; int replay; double time_scale;
    void (*progress)(void *ctx, uint64_t done, uint64_t total); void *progress_ctx;
} afd_queue_sim_params;
typedef struct afd_queue_sim_result {
    double wait_mean, wait_mean_se; double p_wait, p_wait_se; double wait_q, wait_q_se;
    double sojourn_mean, sojourn_mean_se; double sojourn_q, sojourn_q_se;
    double service_mean; double rho; uint64_t customers;
} afd_queue_sim_result;
afd_status afd_queue_sim(const afd_queue_sim_params *p, afd_queue_sim_result *out);
typedef struct afd_quad_service { double a, b, c; } afd_quad_service;
double afd_quad_service_time(uint64_t prompt, void *ctx);
afd_status afd_queue_sim_service_mean(const afd_queue_sim_params *p, double *es);

/* montecarlo/afd/afd_pipeline.h */
typedef enum afd_start { AFD_START_FRESH = 0, AFD_START_STATIONARY = 1 } afd_start;
typedef void (*afd_gantt_fn)(void *ctx, uint64_t step, unsigned microbatch, int stage,
                             int worker, double start, double end);
typedef struct afd_pipeline_params {
    const afd_workload *workload; afd_hw hw; unsigned x, y; unsigned B;
    unsigned microbatches; uint64_t requests; afd_start start; double warmup;
    unsigned batches; int async_attention; int no_barrier; int no_comm;
    uint64_t seed, stream_base; afd_gantt_fn gantt; void *gantt_ctx; uint64_t gantt_steps;
} afd_pipeline_params;
typedef struct afd_pipeline_result {
    double thr_sim; double tpot; double eta_a; double eta_f; double thr_steady;
    double thr_steady_se; double tau; double barrier; double t_end; uint64_t completed;
    uint64_t steps; double tpot_q[3]; double tpot_q_se[3];
} afd_pipeline_result;
afd_status afd_pipeline_check(const afd_pipeline_params *p);
afd_status afd_pipeline_run(const afd_pipeline_params *p, afd_pipeline_result *out);
uint64_t afd_pipeline_stream_base(unsigned x, unsigned y);
uint64_t afd_pipeline_stream(const afd_pipeline_params *p, unsigned worker, unsigned microbatch);
"""

# The structs whose layout the tests check against the C headers.
STRUCTS = [
    "afd_error", "afd_result", "afd_mdc_approx", "afd_renewal_stats", "afd_arrival_stats",
    "afd_trace_filter", "afd_trace_options", "afd_workload", "afd_workload_trace_options",
    "afd_hw", "afd_system", "afd_cycle", "afd_mf_result", "afd_topology", "afd_model",
    "afd_device", "afd_estimate_options", "afd_estimate_op", "afd_estimate_module",
    "afd_estimate", "afd_barrier_mc_params", "afd_barrier_mc_result", "afd_slot_mc_params",
    "afd_slot_mc_result", "afd_queue_sim_params", "afd_queue_sim_result", "afd_quad_service",
    "afd_pipeline_params", "afd_pipeline_result",
]

ffi = cffi.FFI()
ffi.cdef(CDEF)
ffi.cdef(CDEF_MC)

ANALYTIC = "libanalytic.so.0"
MONTECARLO = "libafdmontecarlo.so"


def _pkg_config_libdir():
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "afdkit"],
                             capture_output=True, text=True, check=False)
    except OSError:
        return None
    d = out.stdout.strip()
    return d if out.returncode == 0 and d else None


def _candidates():
    """(libanalytic path, montecarlo path) pairs to try, in order."""
    build = os.environ.get("AFDKIT_BUILD_DIR")
    if build:
        yield (os.path.join(build, "libanalytic", ".libs", ANALYTIC),
               os.path.join(build, "montecarlo", ".libs", MONTECARLO))
        return
    libdir = os.environ.get("AFDKIT_LIBDIR") or _pkg_config_libdir()
    if libdir:
        yield (os.path.join(libdir, ANALYTIC), os.path.join(libdir, "afdkit", MONTECARLO))
    yield (ANALYTIC, None)


def _load():
    tried = []
    for analytic, mc in _candidates():
        if os.sep in analytic and not os.path.exists(analytic):
            tried.append(analytic)
            continue
        try:
            # RTLD_GLOBAL: the Monte Carlo library's need for libanalytic.so.0
            # is then met by this very copy, wherever it came from.
            lib = ffi.dlopen(analytic, ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s (%s)" % (analytic, e))
            continue
        mclib = None
        if mc is not None and os.path.exists(mc):
            mclib = ffi.dlopen(mc, ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
        return lib, mclib, analytic, mc
    raise ImportError(
        "afdkit: cannot find libanalytic (tried %s); install afdkit (make install), or "
        "set AFDKIT_BUILD_DIR to a build tree or AFDKIT_LIBDIR to the directory "
        "holding libanalytic.so.0" % ", ".join(tried or [ANALYTIC]))


lib, mclib, analytic_path, montecarlo_path = _load()
lib.gsl_set_error_handler_off()

/* test_profile.c: the estimator's modules against hand-computed rooflines,
 * and the efficiency fits recovering known values from synthetic
 * measurements. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#include "afd_device.h"
#include "afd_estimate.h"
#include "afd_model.h"
#include "afd_profile.h"

static afd_model load_model(const char *name)
{
    afd_model m;
    afd_error e;
    assert_int_equal(afd_model_load(name, &m, &e), AFD_OK);
    return m;
}

/* A device with awkward round numbers and the given efficiencies. */
static afd_device device(double tflops, double tbps, double mfu, double mbu)
{
    afd_device d;
    afd_error e;
    int i;
    assert_int_equal(afd_device_load("h100-sxm", &d, &e), AFD_OK);
    d.kernel_model = 0; /* the roofline path, whose efficiencies are fitted */
    d.peak_tflops = tflops;
    d.hbm_tbps = tbps;
    d.net_gbps = 287.5;
    d.comm_latency_ms = 0;
    d.kernel_us = 0;
    d.roofline_p = INFINITY;
    for (i = 0; i < 2; i++) {
        d.mfu[i] = mfu;
        d.mbu[i] = mbu;
        d.comm_eff[i] = 1;
    }
    for (i = 0; i < 3; i++)
        d.dispatch_ms[i] = 0;
    return d;
}

static const char HEADER[] =
    "n_head,n_kv_head,n_embd,n_expanded_embd,num_tokens,num_tensor_parallel_workers,"
    "time_stats.attn_pre_proj.median,time_stats.attn_post_proj.median,"
    "time_stats.mlp_up_proj.median,time_stats.mlp_act.median,time_stats.mlp_down_proj.median\n";

static void write_file(char *path, const char *text)
{
    int fd = mkstemp(path);
    FILE *f;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Hand rooflines for llama-3.1-8b (h 4096, 32 heads of 128, 8 KV heads,
 * h_0 14336, bf16) on an ideal device of 100 TFLOP/s and 1 TB/s. */
static void estimate_by_hand(void **state)
{
    afd_model m = load_model("llama-3.1-8b");
    afd_device d = device(100, 1, 1, 1);
    afd_error e;
    double ms;
    int mb;
    (void)state;
    /* o_proj at 4096 tokens, TP 1: W = 2 x 4096^3 FLOP, compute-bound
     * (Q = 2 (3 x 4096^2) bytes is 0.1 ms at 1 TB/s). */
    assert_int_equal(afd_profile_estimate(&m, &d, 1, 4096, AFD_PROFILE_OPROJ, &ms, &mb, &e),
                     AFD_OK);
    assert_close(ms, 2.0 * 4096 * 4096 * 4096 / 1e14 * 1e3, 1e-12, 0);
    assert_int_equal(mb, -1);
    /* Fused QKV at 1 token, TP 1: three weight reads, memory-bound:
     * q 2 (4096 + 4096^2 + 4096), k and v 2 (4096 + 4096 x 1024 + 1024)
     * = 50,368,512 bytes at 1 TB/s. */
    assert_int_equal(afd_profile_estimate(&m, &d, 1, 1, AFD_PROFILE_QKV, &ms, &mb, &e), AFD_OK);
    assert_close(ms, 50368512 / 1e12 * 1e3, 1e-12, 0);
    assert_int_equal(mb, 1);
    /* MLP at 1 token, TP 4 (width 3584): gate, up, down read 4096 x 3584
     * weights each, plus activations: gate/up 2 (4096 + 3584 x 4096 +
     * 3584), down 2 (3584 + 3584 x 4096 + 4096), SiLU 2 x 2 x 3584, the
     * product 3 x 2 x 3584. */
    assert_int_equal(afd_profile_estimate(&m, &d, 4, 1, AFD_PROFILE_MLP, &ms, &mb, &e), AFD_OK);
    assert_close(ms,
                 (3 * 2 * (4096 + 3584.0 * 4096 + 3584) + 4 * 3584 + 6 * 3584) / 1e12 * 1e3,
                 1e-12, 0);
    assert_int_equal(mb, 1);
}

/* Token counts of the synthetic profiles: 1 to 4096, the ridge around 256. */
static const double ALL_TOKENS[] = {1, 3, 16, 64, 128, 256, 384, 512, 1024, 4096};
#define NALL_TOKENS (sizeof ALL_TOKENS / sizeof ALL_TOKENS[0])

/* Write synthetic measurements of llama-3.1-70b made by the estimator on
 * truth (TP 1, 2, 4, 8; toks[0..ntoks) tokens) into path and read them.  The
 * measured MLP is split as up + act + down: any split. */
static void synthetic_profile(const afd_device *truth, const double *toks, size_t ntoks,
                              char *path, afd_profile *p)
{
    static const double tps[] = {1, 2, 4, 8};
    afd_model m = load_model("llama-3.1-70b");
    char *text = malloc(64 * 1024);
    size_t len, i, j;
    afd_error e;
    assert_non_null(text);
    len = (size_t)snprintf(text, 64 * 1024, "%s", HEADER);
    for (i = 0; i < 4; i++)
        for (j = 0; j < ntoks; j++) {
            double t[3];
            int k;
            for (k = 0; k < 3; k++)
                assert_int_equal(afd_profile_estimate(&m, truth, tps[i], toks[j],
                                                      (afd_profile_module)k, &t[k], NULL, &e),
                                 AFD_OK);
            len += (size_t)snprintf(text + len, 64 * 1024 - len,
                                    "64,8,8192,28672,%g,%g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                                    toks[j], tps[i], t[0], t[1], 0.5 * t[2], 0.125 * t[2],
                                    0.375 * t[2]);
        }
    write_file(path, text);
    free(text);
    assert_int_equal(afd_profile_read(path, p, &e), AFD_OK);
}

/* Synthetic measurements made by the estimator at mfu 0.537, mbu 0.713:
 * the fit must give them back. */
static void fit_recovers_efficiencies(void **state)
{
    static const double toks[] = {1, 3, 16, 64, 256, 1024, 4096};
    afd_model m = load_model("llama-3.1-70b");
    afd_device truth = device(412.5, 2.875, 0.537, 0.713), start = device(412.5, 2.875, 0.9, 0.9);
    char path[] = "/tmp/afdkit-test-profile-XXXXXX";
    afd_profile p;
    afd_error e;
    double mfu, mbu, rms;
    (void)state;
    synthetic_profile(&truth, toks, sizeof toks / sizeof toks[0], path, &p);
    assert_int_equal(p.n, 28);
    assert_int_equal(p.row[27].line, 29);
    assert_int_equal(afd_profile_fit(&m, &start, &p, 0, &mfu, &mbu, &rms, &e), AFD_OK);
    assert_close(mfu, 0.537, 1e-6, 0);
    assert_close(mbu, 0.713, 1e-6, 0);
    assert_close(rms, 0, 0, 1e-6);
    /* one tensor-parallel size alone gives them back too */
    assert_int_equal(afd_profile_fit(&m, &start, &p, 4, &mfu, &mbu, &rms, &e), AFD_OK);
    assert_close(mfu, 0.537, 1e-6, 0);
    assert_close(mbu, 0.713, 1e-6, 0);
    /* no rows at TP 16 */
    assert_int_equal(afd_profile_fit(&m, &start, &p, 16, &mfu, &mbu, &rms, &e), AFD_EINVAL);
    assert_string_equal(e.text, "no measurements at tensor-parallel size 16");
    assert_true(isnan(mfu) && isnan(mbu));
    /* a device whose peak is below what the kernels reached */
    start.peak_tflops = 200;
    assert_int_equal(afd_profile_fit(&m, &start, &p, 0, &mfu, &mbu, &rms, &e), AFD_EINVAL);
    assert_non_null(strstr(e.text, "fitted mfu = 1.11 exceeds 1"));
    /* another model's dimensions */
    {
        afd_model other = load_model("codellama-34b");
        assert_int_equal(afd_profile_fit(&other, &truth, &p, 0, &mfu, &mbu, &rms, &e),
                         AFD_EINVAL);
        assert_string_equal(e.text, "n_expanded_embd (intermediate_size) is 28672 but model "
                                    "codellama-34b has 22016: measured on another model");
        assert_int_equal(e.line, 2);
    }
    afd_profile_free(&p);
    unlink(path);
}

/* Synthetic measurements made with every term (mfu 0.537, mbu 0.713,
 * kernel_us 3.7, roofline_p 2.3): fitting all four gives them back; fitting
 * one term keeps the other at the start device's value. */
static void fit_recovers_terms(void **state)
{
    afd_model m = load_model("llama-3.1-70b");
    afd_device truth = device(412.5, 2.875, 0.537, 0.713), start = device(412.5, 2.875, 0.9, 0.9);
    afd_device out;
    char path[] = "/tmp/afdkit-test-profile-XXXXXX";
    afd_profile p;
    afd_error e;
    double rms;
    (void)state;
    truth.kernel_us = 3.7;
    truth.roofline_p = 2.3;
    synthetic_profile(&truth, ALL_TOKENS, NALL_TOKENS, path, &p);
    assert_int_equal(afd_profile_fit_terms(&m, &start, &p, 0,
                                           AFD_PROFILE_FIT_KERNEL | AFD_PROFILE_FIT_ROOFLINE_P,
                                           &out, &rms, &e),
                     AFD_OK);
    assert_close(out.mfu[0], 0.537, 1e-6, 0);
    assert_close(out.mbu[1], 0.713, 1e-6, 0);
    assert_close(out.kernel_us, 3.7, 1e-6, 0);
    assert_close(out.roofline_p, 2.3, 1e-6, 0);
    assert_close(rms, 0, 0, 1e-6);
    /* roofline_p known (the start's), kernel_us fitted */
    start.roofline_p = 2.3;
    assert_int_equal(afd_profile_fit_terms(&m, &start, &p, 0, AFD_PROFILE_FIT_KERNEL, &out,
                                           &rms, &e),
                     AFD_OK);
    assert_close(out.kernel_us, 3.7, 1e-6, 0);
    assert_close(out.roofline_p, 2.3, 0, 0);
    assert_close(out.mfu[0], 0.537, 1e-6, 0);
    /* kernel_us known, roofline_p fitted */
    start.roofline_p = INFINITY;
    start.kernel_us = 3.7;
    assert_int_equal(afd_profile_fit_terms(&m, &start, &p, 0, AFD_PROFILE_FIT_ROOFLINE_P, &out,
                                           &rms, &e),
                     AFD_OK);
    assert_close(out.roofline_p, 2.3, 1e-6, 0);
    assert_close(out.kernel_us, 3.7, 0, 0);
    assert_close(out.mbu[0], 0.713, 1e-6, 0);
    /* afd_profile_fit keeps the device's terms: with both known it gives
     * the efficiencies back */
    start.roofline_p = 2.3;
    {
        double mfu, mbu;
        assert_int_equal(afd_profile_fit(&m, &start, &p, 0, &mfu, &mbu, &rms, &e), AFD_OK);
        assert_close(mfu, 0.537, 1e-6, 0);
        assert_close(mbu, 0.713, 1e-6, 0);
    }
    assert_int_equal(afd_profile_fit_terms(&m, &start, &p, 0, 4, &out, &rms, &e), AFD_EINVAL);
    assert_string_equal(e.text, "unknown terms to fit: 4");
    afd_profile_free(&p);
    unlink(path);
}

/* Kernels faster than the roofline at small sizes (made with a negative
 * fixed time, which no device file allows): the fitted kernel_us is
 * negative and refused. */
static void fit_refuses_negative_kernel_time(void **state)
{
    afd_model m = load_model("llama-3.1-70b");
    afd_device truth = device(412.5, 2.875, 0.537, 0.713), start = device(412.5, 2.875, 0.9, 0.9);
    afd_device out;
    char path[] = "/tmp/afdkit-test-profile-XXXXXX";
    afd_profile p;
    afd_error e;
    (void)state;
    truth.kernel_us = -2;
    synthetic_profile(&truth, ALL_TOKENS, NALL_TOKENS, path, &p);
    assert_int_equal(afd_profile_fit_terms(&m, &start, &p, 0, AFD_PROFILE_FIT_KERNEL, &out,
                                           NULL, &e),
                     AFD_EINVAL);
    assert_string_equal(e.text, "fitted kernel_us = -2 is negative: the kernels ran faster than "
                                "the roofline allows at small sizes");
    afd_profile_free(&p);
    unlink(path);
}

/* Only single-token rows: every operator is memory-bound, mfu is not
 * determined. */
static void fit_needs_both_bounds(void **state)
{
    afd_model m = load_model("llama-3.1-8b");
    afd_device d = device(412.5, 2.875, 0.6, 0.6);
    char path[] = "/tmp/afdkit-test-profile-XXXXXX";
    char text[1024];
    afd_profile p;
    afd_error e;
    double mfu, mbu;
    (void)state;
    snprintf(text, sizeof text, "%s32,8,4096,14336,1,1,0.03,0.02,0.1,0.01,0.05\n"
                                "32,8,4096,14336,2,1,0.031,0.021,0.1,0.01,0.05\n", HEADER);
    write_file(path, text);
    assert_int_equal(afd_profile_read(path, &p, &e), AFD_OK);
    assert_int_equal(afd_profile_fit(&m, &d, &p, 0, &mfu, &mbu, NULL, &e), AFD_EINVAL);
    assert_string_equal(e.text, "every measured module is memory-bound: the mfu cannot be "
                                "fitted (give token counts from 1 to 512 or more)");
    afd_profile_free(&p);
    unlink(path);
}

static void read_errors(void **state)
{
    char path[] = "/tmp/afdkit-test-profile-XXXXXX";
    char text[1024];
    afd_profile p;
    afd_allreduce_profile a;
    afd_error e;
    (void)state;
    snprintf(text, sizeof text, "%s32,8,4096,14336,1.5,1,0.03,0.02,0.1,0.01,0.05\n", HEADER);
    write_file(path, text);
    assert_int_equal(afd_profile_read(path, &p, &e), AFD_EINVAL);
    assert_string_equal(e.text, "column 'num_tokens' must be a positive integer: '1.5'");
    assert_int_equal(e.line, 2);
    assert_int_equal(p.n, 0);
    unlink(path);
    strcpy(path, "/tmp/afdkit-test-profile-XXXXXX");
    snprintf(text, sizeof text, "%s32,8,4096,14336,1,1,0.03,fast,0.1,0.01,0.05\n", HEADER);
    write_file(path, text);
    assert_int_equal(afd_profile_read(path, &p, &e), AFD_EPARSE);
    assert_string_equal(e.text, "column 'time_stats.attn_post_proj.median' is not a number: "
                                "'fast'");
    unlink(path);
    strcpy(path, "/tmp/afdkit-test-profile-XXXXXX");
    snprintf(text, sizeof text, "%s32,8,4096,14336,1,1,0.03,0,0.1,0.01,0.05\n", HEADER);
    write_file(path, text);
    assert_int_equal(afd_profile_read(path, &p, &e), AFD_EINVAL);
    assert_string_equal(e.text, "column 'time_stats.attn_post_proj.median' must be a time > 0: "
                                "'0'");
    unlink(path);
    strcpy(path, "/tmp/afdkit-test-profile-XXXXXX");
    write_file(path, HEADER);
    assert_int_equal(afd_profile_read(path, &p, &e), AFD_EEMPTY);
    assert_int_equal(afd_allreduce_read(path, &a, &e), AFD_EPARSE);
    assert_true(strncmp(e.text, "no column 'num_workers' (header has 'n_head', 'n_kv_head', ",
                        59) == 0);
    unlink(path);
}

/* All-reduce times t = L + 2 (w - 1) / w B / (e S_+) written from the ring
 * formula by hand, L = 0.0173 ms, e = 0.613, S_+ = 287.5 GB/s. */
static void allreduce_recovers(void **state)
{
    static const double sizes[] = {16384, 262144, 4194304, 67108864};
    static const double workers[] = {2, 4, 8};
    afd_device d = device(412.5, 2.875, 0.5, 0.5);
    char path[] = "/tmp/afdkit-test-allreduce-XXXXXX";
    char text[4096];
    size_t len, i, j;
    afd_allreduce_profile a;
    afd_error e;
    double eff, lat;
    (void)state;
    len = (size_t)snprintf(text, sizeof text, "num_workers,size,time_stats.all_reduce.median\n");
    for (i = 0; i < 3; i++)
        for (j = 0; j < 4; j++) {
            double w = workers[i], t = 0.0173 + 2 * (w - 1) / w * sizes[j] / (0.613 * 287.5e9) * 1e3;
            len += (size_t)snprintf(text + len, sizeof text - len, "%g,%.17g,%.17g\n", w, sizes[j], t);
        }
    write_file(path, text);
    assert_int_equal(afd_allreduce_read(path, &a, &e), AFD_OK);
    assert_int_equal(a.n, 12);
    /* measured all-reduce laws on the device (afd_device.h allreduce_P_*)
     * replace the ring in the estimator; the fit is of the ring's
     * parameters and ignores them */
    for (i = 0; i < 3; i++) {
        d.allreduce_us[i] = 40;
        d.allreduce_gbps[i] = 150;
    }
    assert_int_equal(afd_profile_fit_allreduce(&d, &a, 0, &eff, &lat, &e), AFD_OK);
    assert_close(eff, 0.613, 1e-9, 0);
    assert_close(lat, 0.0173, 1e-9, 0);
    assert_int_equal(afd_profile_fit_allreduce(&d, &a, 4, &eff, &lat, &e), AFD_OK);
    assert_close(eff, 0.613, 1e-9, 0);
    assert_close(lat, 0.0173, 1e-9, 0);
    /* the estimator's own all-reduce, without measured laws, agrees with
     * the hand formula */
    for (i = 0; i < 3; i++)
        d.allreduce_us[i] = d.allreduce_gbps[i] = NAN;
    d.comm_eff[0] = d.comm_eff[1] = 0.613;
    d.comm_latency_ms = 0.0173;
    assert_close(afd_estimate_allreduce_ms(&d, AFD_DECODE, 8, 4194304),
                 0.0173 + 1.75 * 4194304 / (0.613 * 287.5e9) * 1e3, 1e-14, 0);
    assert_close(afd_estimate_allreduce_ms(&d, AFD_DECODE, 1, 4194304), 0, 0, 0);
    /* a link slower than measured: comm_eff above 1 is refused */
    d.net_gbps = 100;
    assert_int_equal(afd_profile_fit_allreduce(&d, &a, 0, &eff, &lat, &e), AFD_EINVAL);
    assert_non_null(strstr(e.text, "fitted comm_eff = 1.76 is outside (0, 1]"));
    assert_int_equal(afd_profile_fit_allreduce(&d, &a, 16, &eff, &lat, &e), AFD_EINVAL);
    assert_string_equal(e.text, "need all-reduce times of at least two message sizes among 16 "
                                "workers");
    /* a worker count beyond any table in exponent notation, not 301 digits */
    assert_int_equal(afd_profile_fit_allreduce(&d, &a, 1e300, &eff, &lat, &e), AFD_EINVAL);
    assert_string_equal(e.text, "need all-reduce times of at least two message sizes among "
                                "1e+300 workers");
    assert_int_equal(afd_profile_fit_allreduce(&d, &a, 1, &eff, &lat, &e), AFD_EINVAL);
    afd_allreduce_free(&a);
    unlink(path);
}

static void error_stats(void **state)
{
    const double r[] = {0.1, -0.3, 0.2, -0.05}, r3[] = {-0.25, 0.125, 0.5};
    double med, worst;
    (void)state;
    afd_profile_error_stats(r, 4, &med, &worst);
    assert_close(med, 0.15, 1e-15, 0);
    assert_close(worst, 0.3, 0, 0);
    afd_profile_error_stats(r3, 3, &med, &worst);
    assert_close(med, 0.25, 0, 0);
    assert_close(worst, 0.5, 0, 0);
    afd_profile_error_stats(r, 0, &med, &worst);
    assert_true(isnan(med) && isnan(worst));
    assert_string_equal(afd_profile_module_name(AFD_PROFILE_MLP), "mlp");
    assert_null(afd_profile_module_name(AFD_PROFILE_NMOD));
}

/* A device file written by afd_device_format reads back to the device. */
static void device_format_round_trip(void **state)
{
    afd_device d = device(412.5, 2.875, 0.537, 0.713), back;
    afd_error e;
    char buf[2048], small[64];
    (void)state;
    d.mbu[1] = 0.25;
    d.comm_latency_ms = 0.0173;
    assert_int_equal(afd_device_format(&d, "fitted\nby hand", buf, sizeof buf), AFD_OK);
    assert_non_null(strstr(buf, "# fitted\n# by hand\npeak_tflops = 412.5\n"));
    assert_non_null(strstr(buf, "mfu = 0.537\nmbu_prefill = 0.713\nmbu_decode = 0.25\n"));
    assert_int_equal(afd_device_parse(buf, strlen(buf), "x", &back, &e), AFD_OK);
    assert_close(back.mbu[1], 0.25, 0, 0);
    assert_close(back.comm_latency_ms, 0.0173, 0, 0);
    assert_close(back.price_per_hour, d.price_per_hour, 0, 0);
    assert_int_equal(afd_device_format(&d, NULL, small, sizeof small), AFD_ELIMIT);
    assert_string_equal(small, "");
}

/* The numbers of a device, every field but the name, bit for bit. */
static void assert_same_device(const afd_device *a, const afd_device *b)
{
    const double x[] = {a->peak_tflops, a->hbm_tbps, a->hbm_gb, a->net_gbps, a->mfu[0],
                        a->mfu[1], a->mbu[0], a->mbu[1], a->comm_eff[0], a->comm_eff[1],
                        a->dispatch_ms[0], a->dispatch_ms[1], a->dispatch_ms[2],
                        a->comm_latency_ms, a->mem_util, a->price_per_hour, a->power_w,
                        a->kernel_us, a->roofline_p};
    const double y[] = {b->peak_tflops, b->hbm_tbps, b->hbm_gb, b->net_gbps, b->mfu[0],
                        b->mfu[1], b->mbu[0], b->mbu[1], b->comm_eff[0], b->comm_eff[1],
                        b->dispatch_ms[0], b->dispatch_ms[1], b->dispatch_ms[2],
                        b->comm_latency_ms, b->mem_util, b->price_per_hour, b->power_w,
                        b->kernel_us, b->roofline_p};
    assert_memory_equal(x, y, sizeof x);
}

/* Every number a device file states survives afd_device_format and
 * afd_device_parse bit for bit: each bundled preset (ascend-910b3's
 * hbm_tbps = 1.6 x 2^40 / 10^12 = 1.7592186044416 has 14 significant
 * digits) and values that need all 17 (0.1 + 0.2, 1/3). */
static void device_format_keeps_every_digit(void **state)
{
    afd_device d, back;
    afd_error e;
    char buf[4096];
    size_t i;
    (void)state;
    for (i = 0; afd_device_preset_name(i) != NULL; i++) {
        assert_int_equal(afd_device_preset_load(afd_device_preset_name(i), &d, &e), AFD_OK);
        assert_int_equal(afd_device_format(&d, NULL, buf, sizeof buf), AFD_OK);
        assert_int_equal(afd_device_parse(buf, strlen(buf), "x", &back, &e), AFD_OK);
        assert_same_device(&d, &back);
    }
    assert_int_equal(afd_device_preset_load("ascend-910b3", &d, &e), AFD_OK);
    assert_true(d.hbm_tbps == 1.6 * 1099511627776.0 / 1e12);
    d = device(412.5, 1.0 / 3, 0.1 + 0.2, 0.713);
    d.comm_latency_ms = 2.0 / 3;
    assert_int_equal(afd_device_format(&d, NULL, buf, sizeof buf), AFD_OK);
    assert_int_equal(afd_device_parse(buf, strlen(buf), "x", &back, &e), AFD_OK);
    assert_same_device(&d, &back);
    /* the shortest text that reads back: 412.5 and 0.713 as written */
    assert_non_null(strstr(buf, "peak_tflops = 412.5\n"));
    assert_non_null(strstr(buf, "mbu = 0.713\n"));
}

/* Whole forward passes made by the estimator on h100-sxm with its floor,
 * elementwise bandwidth and rates moved (floor 5 us, 1.4 TB/s, compute rates
 * x 0.9, memory rates x 1.1): fitted from the preset, the four come back.
 * The rows span decode and prefill of two models (one by a config.json
 * path relative to the file), so each parameter moves some row. */
static void forward_fit_recovers(void **state)
{
    static const struct {
        const char *model;
        double tp, b, s;
        afd_phase ph;
    } rows[] = {{"llama-3.1-8b", 1, 1, 1024, AFD_DECODE},
                {"llama-3.1-8b", 1, 64, 2048, AFD_DECODE},
                {"llama-3.1-8b", 1, 256, 1024, AFD_DECODE},
                {"llama-3.1-8b", 1, 1, 512, AFD_PREFILL},
                {"llama-3.1-8b", 1, 1, 4096, AFD_PREFILL},
                {"l70.json", 4, 1, 1024, AFD_DECODE},
                {"l70.json", 4, 128, 2048, AFD_DECODE},
                {"l70.json", 4, 1, 2048, AFD_PREFILL}};
    char dir[] = "/tmp/afd-fwd-XXXXXX", path[256], cfg[256], *text = malloc(8192);
    afd_device h, truth, fit;
    afd_forward f;
    afd_error e;
    afd_model m70;
    double loss;
    size_t i, len;
    FILE *out;
    (void)state;
    assert_non_null(text);
    assert_non_null(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/l70.json", dir);
    out = fopen(cfg, "w");
    assert_non_null(out);
    fputs(afd_model_preset_json(2), out); /* llama-3.1-70b */
    fclose(out);
    assert_string_equal(afd_model_preset_name(2), "llama-3.1-70b");
    assert_int_equal(afd_model_load(cfg, &m70, &e), AFD_OK);
    assert_int_equal(afd_device_load("h100-sxm", &h, &e), AFD_OK);
    truth = h;
    truth.kernel_floor_us = 5;
    truth.elementwise_tbps = 1.4;
    truth.gemm_tflops *= 0.9;
    truth.attn_prefill_tflops *= 0.9;
    truth.gemm_tbps *= 1.1;
    truth.attn_decode_tbps *= 1.1;
    truth.attn_cta_gbps *= 1.1;
    len = (size_t)snprintf(text, 8192, "model,tp,phase,batch,tokens,ms\n");
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        afd_model m;
        afd_estimate est;
        afd_estimate_options o = {.tp = rows[i].tp, .phase = rows[i].ph, .batch = rows[i].b,
                                  .seq = rows[i].s, .no_dispatch = 1};
        if (strcmp(rows[i].model, "l70.json") == 0)
            m = m70;
        else
            assert_int_equal(afd_model_load(rows[i].model, &m, &e), AFD_OK);
        assert_int_equal(afd_estimate_forward(&m, &truth, &o, &est, &e), AFD_OK);
        len += (size_t)snprintf(text + len, 8192 - len, "%s,%g,%s,%g,%g,%.17g\n", rows[i].model,
                                rows[i].tp, rows[i].ph == AFD_DECODE ? "decode" : "prefill",
                                rows[i].b, rows[i].s, est.forward_compute_s * 1e3);
    }
    snprintf(path, sizeof path, "%s/forward.csv", dir);
    out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    fclose(out);
    free(text);
    assert_int_equal(afd_forward_read(path, &f, &e), AFD_OK);
    assert_int_equal(f.n, 8);
    assert_int_equal(afd_forward_fit(&h, &f, &fit, &loss, &e), AFD_OK);
    assert_true(loss < 1e-8);
    assert_close(fit.kernel_floor_us, 5, 1e-3, 0);
    assert_close(fit.elementwise_tbps, 1.4, 1e-3, 0);
    assert_close(fit.gemm_tflops, h.gemm_tflops * 0.9, 1e-3, 0);
    assert_close(fit.gemm_tbps, h.gemm_tbps * 1.1, 1e-3, 0);
    assert_close(fit.attn_cta_gbps, h.attn_cta_gbps * 1.1, 1e-3, 0);
    /* the shape terms stay */
    assert_close(fit.gemm_p, h.gemm_p, 0, 0);
    assert_close(fit.attn_tail, h.attn_tail, 0, 0);
    afd_forward_free(&f);
    remove(path);
    remove(cfg);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(estimate_by_hand),
        cmocka_unit_test(device_format_keeps_every_digit),
        cmocka_unit_test(fit_recovers_efficiencies),
        cmocka_unit_test(fit_needs_both_bounds),
        cmocka_unit_test(fit_recovers_terms),
        cmocka_unit_test(fit_refuses_negative_kernel_time),
        cmocka_unit_test(read_errors),
        cmocka_unit_test(allreduce_recovers),
        cmocka_unit_test(error_stats),
        cmocka_unit_test(device_format_round_trip),
        cmocka_unit_test(forward_fit_recovers),
    };
    RUN_TESTS(tests);
}

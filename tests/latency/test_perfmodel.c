/* test_perfmodel.c: the batch performance model of Ascendra's Appendix A.
 *   - counts of a tiny layer against Tables 3-4 summed by hand, GEMM by
 *     GEMM, and the FlashAttention terms written out per head;
 *   - the hybrid form against eq. (6) and eq. (7) transcribed separately;
 *   - the regression recovers planted coefficients (within 10% on the
 *     identifiable ones) from noisy synthetic batches of llama-3.1-8b, and
 *     refuses batches that leave C2 unidentifiable;
 *   - the KV bytes per token behind the paper's Table 1. */
#include <config.h>

#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "test_util.h"

#include "afdkit.h"

static const afd_perf_dims tiny = {4, 2, 2, 8, 2}; /* h n s m b */

static void gemm_by_hand(void **state)
{
    /* one prefill of t = 3 tokens, unchunked.  Table 3, (reads + writes):
     *   QKV  th + 3h^2 + 3th,  Attn out th + h^2 + th,
     *   FFN in th + hm + tm,   FFN out tm + hm + th
     *   = 8th + 4h^2 + 2hm + 2tm = 96 + 64 + 64 + 48 = 272;
     * attention per head: 2 s p (K, V once) + 3 s p (p / b) (Q, O per block
     * pair) = 12 + 27 = 39, times n = 2 heads: 78.  M = 350.
     * FLOPs: 3th^2 + th^2 + 2thm = 192 + 192 = 384; attention 2 p^2 s per
     * head = 36, two heads 72.  F = 456. */
    double c = 3, l = 3, M, F;
    afd_perf_batch b = {1, &c, &l, 0, NULL};
    (void)state;
    assert_int_equal(afd_perf_count(&tiny, &b, &M, &F), AFD_OK);
    assert_close(M, 350, 0, 0);
    assert_close(F, 456, 0, 0);
}

static void decode_by_hand(void **state)
{
    /* two decodes with 5 and 7 tokens of context.  Table 4 with B_d = 2:
     *   4h^2 + 2hm + 8 B h + 2 B m = 64 + 64 + 64 + 32 = 224;
     * attention per request and head 2 l s + 2 s: (20 + 4) + (28 + 4) = 56,
     * two heads 112.  M = 336.
     * F = 4 B h^2 + 2 B h m + 2 n s sum l = 128 + 128 + 2*2*2*12 = 352. */
    double ctx[] = {5, 7}, M, F;
    afd_perf_batch b = {0, NULL, NULL, 2, ctx};
    (void)state;
    assert_int_equal(afd_perf_count(&tiny, &b, &M, &F), AFD_OK);
    assert_close(M, 336, 0, 0);
    assert_close(F, 352, 0, 0);
}

/* eq. (6) and (7) as printed, with the head count n on the attention terms */
static void eq6(const afd_perf_dims *d, const double *p, size_t bp, double *M, double *F)
{
    double h = d->h, m = d->m, s = d->s, n = d->n, b = d->b, t = 0, att = 0, attf = 0;
    size_t i;
    for (i = 0; i < bp; i++) {
        t += p[i];
        att += 2 * s * p[i] + 3 * s * p[i] * p[i] / b;
        attf += 2 * p[i] * p[i] * s;
    }
    *M = 4 * h * h + 8 * t * h + 2 * h * m + 2 * t * m + n * att;
    *F = 4 * t * h * h + 2 * t * h * m + n * attf;
}

static void eq7(const afd_perf_dims *d, const double *l, size_t bd, double *M, double *F)
{
    double h = d->h, m = d->m, s = d->s, n = d->n, B = (double)bd, sl = 0;
    size_t i;
    for (i = 0; i < bd; i++)
        sl += 2 * l[i] * s;
    *M = 4 * h * h + 8 * B * h + 2 * h * m + 2 * B * m + n * (sl + 2 * s * B);
    *F = 4 * B * h * h + 2 * B * h * m + n * sl;
}

static void hybrid_contains_eq6_eq7(void **state)
{
    afd_model md;
    afd_perf_dims d;
    afd_error err;
    double p[] = {517, 2049, 33}, l[] = {1201, 88, 4000, 17};
    double M, F, M6, F6, M7, F7, Mh, Fh;
    double chunk[] = {256}, done[] = {1024};
    afd_perf_batch pre = {3, p, p, 0, NULL}, dec = {0, NULL, NULL, 4, l};
    afd_perf_batch hyb = {1, chunk, done, 4, l};
    (void)state;
    assert_int_equal(afd_model_preset_load("llama-3.1-8b", &md, &err), AFD_OK);
    assert_int_equal(afd_perf_dims_from_model(&md, 2, 128, &d), AFD_OK);
    assert_close(d.h, 2048, 0, 0);
    assert_close(d.n, 16, 0, 0);
    assert_close(d.s, 128, 0, 0);
    assert_close(d.m, 7168, 0, 0);
    assert_int_equal(afd_perf_count(&d, &pre, &M, &F), AFD_OK);
    eq6(&d, p, 3, &M6, &F6);
    assert_close(M, M6, 1e-14, 0);
    assert_close(F, F6, 1e-14, 0);
    assert_int_equal(afd_perf_count(&d, &dec, &M, &F), AFD_OK);
    eq7(&d, l, 4, &M7, &F7);
    assert_close(M, M7, 1e-14, 0);
    assert_close(F, F7, 1e-14, 0);
    /* a hybrid batch: the decode part of eq. (7) plus the chunk's own part,
     * the weights counted once */
    assert_int_equal(afd_perf_count(&d, &hyb, &Mh, &Fh), AFD_OK);
    assert_close(Mh - M7,
                 8 * 256 * d.h + 2 * 256 * d.m + d.n * (2 * 1024 * d.s + 3 * 256 * d.s * 1024 / d.b),
                 1e-14, 0);
    assert_close(Fh - F7, 4 * 256 * d.h * d.h + 2 * 256 * d.h * d.m + 2 * d.n * d.s * 1024 * 256,
                 1e-14, 0);
    /* errors */
    done[0] = 100; /* l < c */
    assert_int_equal(afd_perf_count(&d, &hyb, &M, &F), AFD_EINVAL);
    assert_true(isnan(M));
    hyb.n_prefill = 0;
    hyb.n_decode = 0;
    assert_int_equal(afd_perf_count(&d, &hyb, &M, &F), AFD_EINVAL);
    assert_int_equal(afd_perf_dims_from_model(&md, 0.5, 128, &d), AFD_EINVAL);
}

/* Planted C1..C5, 300 noisy batches of llama-3.1-8b on an A100-like device
 * (2 TB/s, 312 TFLOP/s at 2 FLOPs per multiply-accumulate), prefill,
 * decode and hybrid, memory- and compute-bound. */
static void regression_recovers_planted(void **state)
{
    const double C1 = 0.35, C2 = 0.8, C3 = 0.4, C4 = 0.3, C5 = 4e-3;
    afd_model md;
    afd_perf_dims d;
    afd_error err;
    afd_perf_fit_result r;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    enum { N = 300 };
    double tm[N], tf[N], t[N];
    size_t i;
    (void)state;
    gsl_rng_set(rng, 4242);
    assert_int_equal(afd_model_preset_load("llama-3.1-8b", &md, &err), AFD_OK);
    assert_int_equal(afd_perf_dims_from_model(&md, 1, 128, &d), AFD_OK);
    for (i = 0; i < N; i++) {
        double chunk[8], done[8], ctx[64], M, F;
        size_t bp = i % 3 == 1 ? 0 : 1 + gsl_rng_uniform_int(rng, 4);
        size_t bd = i % 3 == 0 ? 0 : 1 + gsl_rng_uniform_int(rng, 64);
        size_t k;
        afd_perf_batch b;
        for (k = 0; k < bp; k++) {
            chunk[k] = 16 + (double)gsl_rng_uniform_int(rng, 1024);
            done[k] = chunk[k] + (double)gsl_rng_uniform_int(rng, 2048);
        }
        for (k = 0; k < bd; k++)
            ctx[k] = 64 + (double)gsl_rng_uniform_int(rng, 4096);
        b.n_prefill = bp;
        b.chunk = chunk;
        b.done = done;
        b.n_decode = bd;
        b.ctx = ctx;
        assert_int_equal(afd_perf_count(&d, &b, &M, &F), AFD_OK);
        tm[i] = 32 * M * 2 / 2e12;  /* 32 layers, FP16 */
        tf[i] = 32 * F * 2 / 312e12;
        t[i] = (C1 * (tm[i] + tf[i]) + C2 * fmax(tm[i], tf[i]) + C3 * tm[i] + C4 * tf[i] + C5) *
               (1 + 0.03 * gsl_ran_gaussian(rng, 1));
    }
    assert_int_equal(afd_perf_fit(tm, tf, t, N, &r, &err), AFD_OK);
    assert_close(r.c2, C2, 0.10, 0);
    assert_close(r.a_m, C1 + C3, 0.10, 0);
    assert_close(r.a_f, C1 + C4, 0.10, 0);
    assert_close(r.c5, C5, 0.10, 0);
    /* the standard errors describe the scatter: each estimate within 5 se */
    assert_within_se(r.c2, C2, r.c2_se, 5);
    assert_within_se(r.a_m, C1 + C3, r.a_m_se, 5);
    assert_within_se(r.a_f, C1 + C4, r.a_f_se, 5);
    assert_true(r.max_rel_err < 0.15);
    assert_true(r.r2 > 0.99);

    /* only memory-bound batches: C2 cannot be told from a_M */
    for (i = 0; i < N; i++)
        tf[i] = tm[i] / 3;
    assert_int_equal(afd_perf_fit(tm, tf, t, N, &r, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "not identifiable"));
    assert_true(isnan(r.c2));
    assert_int_equal(afd_perf_fit(tm, tf, t, 4, &r, &err), AFD_EINVAL);
    gsl_rng_free(rng);
}

/* Table 1: KV cache of a 2000-token request in FP16, GiB.  Grouped-query
 * attention, 2 layers h_kv d bytes per token (docs/reproduction.md). */
static void kv_table1(void **state)
{
    afd_model md;
    afd_error err;
    (void)state;
    assert_int_equal(afd_model_preset_load("llama-3.1-8b", &md, &err), AFD_OK);
    /* 2 * 32 layers * 8 kv heads * 128 * 2 bytes = 131072 */
    assert_close(afd_model_kv_bytes_per_token(&md), 2.0 * 32 * 8 * 128 * 2, 0, 0);
    assert_close(2000 * afd_model_kv_bytes_per_token(&md) / (1 << 30), 0.24, 0, 0.005);
    assert_int_equal(afd_model_preset_load("llama-3.1-70b", &md, &err), AFD_OK);
    assert_close(2000 * afd_model_kv_bytes_per_token(&md) / (1 << 30), 0.61, 0, 0.005);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_by_hand),
        cmocka_unit_test(decode_by_hand),
        cmocka_unit_test(hybrid_contains_eq6_eq7),
        cmocka_unit_test(regression_recovers_planted),
        cmocka_unit_test(kv_table1),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}

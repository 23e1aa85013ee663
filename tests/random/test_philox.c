/* test_philox.c: Philox4x32-10 against the Random123 known-answer vectors,
 * the (seed, stream, index) layout against a direct evaluation, and the
 * uniforms against their distribution. */
#include <config.h>

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "test_util.h"

#include "afd_philox.h"

/* The three vectors of the house style (Random123 kat_vectors). */
static void known_answers(void **state)
{
    static const uint32_t ctr[3][4] = {{0, 0, 0, 0},
                                       {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                       {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
    static const uint32_t key[3][2] = {{0, 0}, {0xffffffff, 0xffffffff}, {0xa4093822, 0x299f31d0}};
    static const uint32_t want[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    int i, j;
    (void)state;
    for (i = 0; i < 3; i++) {
        uint32_t out[4];
        afd_philox4x32_10(ctr[i], key[i], out);
        for (j = 0; j < 4; j++)
            assert_int_equal(out[j], want[i][j]);
        /* out may alias ctr */
        memcpy(out, ctr[i], sizeof out);
        afd_philox4x32_10(out, key[i], out);
        for (j = 0; j < 4; j++)
            assert_int_equal(out[j], want[i][j]);
    }
}

/* The documented layout, evaluated with the block function and long double
 * arithmetic instead of the library's bit construction. */
static double reference_u01(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t block = index / 2;
    uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)stream,
                       (uint32_t)(stream >> 32)};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t x[4];
    uint64_t w, v;
    afd_philox4x32_10(ctr, key, x);
    w = index % 2 == 0 ? ((uint64_t)x[1] << 32 | x[0]) : ((uint64_t)x[3] << 32 | x[2]);
    v = w >> 12;
    return (double)(((long double)v + 0.5L) / 4503599627370496.0L); /* / 2^52 */
}

static void layout_matches_reference(void **state)
{
    static const uint64_t seeds[] = {0, 1, 0x0123456789abcdefULL, UINT64_MAX};
    static const uint64_t streams[] = {0, 7, 0xfedcba9876543210ULL, UINT64_MAX};
    static const uint64_t starts[] = {0, 1, 2, 12345, UINT64_MAX - 4};
    size_t a, b, c, i;
    (void)state;
    for (a = 0; a < 4; a++)
        for (b = 0; b < 4; b++)
            for (c = 0; c < 5; c++)
                for (i = 0; i < 5; i++) {
                    uint64_t idx = starts[c] + i;
                    double u = afd_philox_u01(seeds[a], streams[b], idx);
                    assert_true(u == reference_u01(seeds[a], streams[b], idx));
                }
}

/* The batch API equals the scalar one bit for bit, for every alignment of
 * the first index and every small length, and across the 2^64 wrap. */
static void fill_equals_scalar(void **state)
{
    static const uint64_t starts[] = {0, 1, 2, 3, 1000001, UINT64_MAX - 6};
    double buf[1030];
    size_t c, n, i;
    (void)state;
    for (c = 0; c < sizeof starts / sizeof starts[0]; c++)
        for (n = 0; n <= 1029; n += (n < 9 ? 1 : 255)) {
            buf[n] = -1; /* sentinel: nothing written past n */
            afd_philox_fill_u01(UINT64_C(2385000000), 17, starts[c], n, buf);
            for (i = 0; i < n; i++)
                assert_true(buf[i] == afd_philox_u01(UINT64_C(2385000000), 17, starts[c] + i));
            assert_true(buf[n] == -1);
        }
}

static void cursor_equals_fill(void **state)
{
    afd_philox_cursor cur;
    double want[1000];
    size_t i;
    (void)state;
    afd_philox_fill_u01(99, 3, 31, 1000, want);
    afd_philox_cursor_init(&cur, 99, 3, 31);
    for (i = 0; i < 1000; i++)
        assert_true(afd_philox_next(&cur) == want[i]);
}

/* Open interval, mean 1/2, variance 1/12, and a 100-bin chi-square.
 * 2^22 uniforms; the chi-square must have a p-value above 1e-4. */
static void uniform_distribution(void **state)
{
    enum { N = 1 << 22, BINS = 100 };
    double *u = malloc(N * sizeof *u);
    long count[BINS] = {0};
    double s = 0, s2 = 0, lo = 1, hi = 0, chi2 = 0, mean, var;
    size_t i;
    (void)state;
    assert_non_null(u);
    afd_philox_fill_u01(20240611, 0, 0, N, u);
    for (i = 0; i < N; i++) {
        s += u[i];
        s2 += (u[i] - 0.5) * (u[i] - 0.5);
        lo = u[i] < lo ? u[i] : lo;
        hi = u[i] > hi ? u[i] : hi;
        count[(int)(u[i] * BINS)]++;
    }
    assert_true(lo > 0 && hi < 1);
    assert_true(lo >= 0x1p-53 && hi <= 1 - 0x1p-53);
    mean = s / N;
    var = s2 / N;
    /* sd of U is 1/sqrt(12); sd of (U-1/2)^2 is sqrt(1/80 - 1/144) */
    assert_within_se(mean, 0.5, sqrt(1.0 / 12 / N), 5);
    assert_within_se(var, 1.0 / 12, sqrt((1.0 / 80 - 1.0 / 144) / N), 5);
    for (i = 0; i < BINS; i++) {
        double e = (double)N / BINS;
        chi2 += (count[i] - e) * (count[i] - e) / e;
    }
    assert_true(gsl_cdf_chisq_Q(chi2, BINS - 1) > 1e-4);
    free(u);
}

/* Neighbouring streams, seeds and indices are uncorrelated: the sample
 * correlation of 2^20 pairs is within 5 standard errors (1/sqrt(n)) of 0. */
static double correlation(const double *x, const double *y, size_t n)
{
    double sxy = 0;
    size_t i;
    for (i = 0; i < n; i++)
        sxy += (x[i] - 0.5) * (y[i] - 0.5);
    return sxy / n * 12.0;
}

static void streams_uncorrelated(void **state)
{
    enum { N = 1 << 20 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    afd_philox_fill_u01(5, 0, 0, N, a);
    afd_philox_fill_u01(5, 1, 0, N, b);
    assert_within_se(correlation(a, b, N), 0, 1 / sqrt((double)N), 5);
    afd_philox_fill_u01(6, 0, 0, N, b);
    assert_within_se(correlation(a, b, N), 0, 1 / sqrt((double)N), 5);
    afd_philox_fill_u01(5, 0, 1, N, b); /* lag 1 */
    assert_within_se(correlation(a, b, N), 0, 1 / sqrt((double)N), 5);
    free(a);
    free(b);
}

/* A parallel fill in chunks (chunk boundaries at odd indices) equals the
 * serial fill, whatever the number of threads. */
static void threads_do_not_matter(void **state)
{
    enum { N = 100003, CHUNK = 777 };
    double *ser = malloc(N * sizeof *ser), *par = malloc(N * sizeof *par);
    int nt;
    (void)state;
    assert_non_null(ser);
    assert_non_null(par);
    afd_philox_fill_u01(1, 2, 3, N, ser);
    for (nt = 1; nt <= 3; nt++) {
        long c;
        memset(par, 0, N * sizeof *par);
#ifdef _OPENMP
        omp_set_num_threads(nt);
#pragma omp parallel for schedule(dynamic, 1)
#endif
        for (c = 0; c < (N + CHUNK - 1) / CHUNK; c++) {
            size_t first = (size_t)c * CHUNK, n = N - first < CHUNK ? N - first : CHUNK;
            afd_philox_fill_u01(1, 2, 3 + first, n, par + first);
        }
        assert_memory_equal(ser, par, N * sizeof *ser);
    }
    free(ser);
    free(par);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_answers),         cmocka_unit_test(layout_matches_reference),
        cmocka_unit_test(fill_equals_scalar),    cmocka_unit_test(cursor_equals_fill),
        cmocka_unit_test(uniform_distribution),  cmocka_unit_test(streams_uncorrelated),
        cmocka_unit_test(threads_do_not_matter),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}

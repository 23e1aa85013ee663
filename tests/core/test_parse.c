/* test_parse.c: strict number parsing and the list syntax. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "afd_parse.h"
#include "cli.h"

static void u64_accepts(void **state)
{
    uint64_t v;
    (void)state;
    assert_int_equal(afd_parse_u64("0", 1, &v), AFD_OK);
    assert_true(v == 0);
    assert_int_equal(afd_parse_u64(" 4808 ", 6, &v), AFD_OK);
    assert_true(v == 4808);
    assert_int_equal(afd_parse_u64("+17", 3, &v), AFD_OK);
    assert_true(v == 17);
    /* UINT64_MAX = 18446744073709551615 exactly */
    assert_int_equal(afd_parse_u64("18446744073709551615", 20, &v), AFD_OK);
    assert_true(v == UINT64_MAX);
    /* length bounds the parse: "123" of "1234" */
    assert_int_equal(afd_parse_u64("1234", 3, &v), AFD_OK);
    assert_true(v == 123);
}

static void u64_refuses(void **state)
{
    uint64_t v = 99;
    (void)state;
    assert_int_equal(afd_parse_u64("", 0, &v), AFD_EPARSE);
    assert_true(v == 0);
    assert_int_equal(afd_parse_u64("  ", 2, &v), AFD_EPARSE);
    assert_int_equal(afd_parse_u64("-1", 2, &v), AFD_EPARSE);
    assert_int_equal(afd_parse_u64("12x", 3, &v), AFD_EPARSE);
    assert_int_equal(afd_parse_u64("1.0", 3, &v), AFD_EPARSE);
    assert_int_equal(afd_parse_u64("1e3", 3, &v), AFD_EPARSE);
    assert_int_equal(afd_parse_u64("+", 1, &v), AFD_EPARSE);
    assert_int_equal(afd_parse_u64("1 2", 3, &v), AFD_EPARSE);
    /* UINT64_MAX + 1 */
    assert_int_equal(afd_parse_u64("18446744073709551616", 20, &v), AFD_ERANGE);
    assert_int_equal(afd_parse_u64("99999999999999999999999", 23, &v), AFD_ERANGE);
    /* overflow followed by junk is a parse error, not a range error */
    assert_int_equal(afd_parse_u64("99999999999999999999999x", 24, &v), AFD_EPARSE);
}

static void double_accepts(void **state)
{
    double v;
    (void)state;
    assert_int_equal(afd_parse_double("2.385", &v), AFD_OK);
    assert_close(v, 2.385, 0, 0);
    assert_int_equal(afd_parse_double("-1e-3", &v), AFD_OK);
    assert_close(v, -0.001, 0, 0);
    assert_int_equal(afd_parse_double(".5", &v), AFD_OK);
    assert_close(v, 0.5, 0, 0);
    assert_int_equal(afd_parse_double("7.", &v), AFD_OK);
    assert_close(v, 7, 0, 0);
    assert_int_equal(afd_parse_double(" 0.00165 ", &v), AFD_OK);
    assert_close(v, 0.00165, 0, 0);
    /* a nonzero value below DBL_MIN (subnormal, or 0 after rounding) is out
     * of range rather than silently 0 */
    assert_int_equal(afd_parse_double("1e-400", &v), AFD_ERANGE);
    assert_int_equal(afd_parse_double("1e-310", &v), AFD_ERANGE);
    assert_int_equal(afd_parse_double("-1e-310", &v), AFD_ERANGE);
    assert_int_equal(afd_parse_double("2.2250738585072014e-308", &v), AFD_OK); /* DBL_MIN */
    assert_close(v, 2.2250738585072014e-308, 0, 0);
    assert_int_equal(afd_parse_double("0e-400", &v), AFD_OK);
    assert_close(v, 0, 0, 0);
}

static void double_refuses(void **state)
{
    static const char *const bad[] = {"", " ", "nan", "NaN", "inf", "-inf", "infinity",
                                      "0x1p3", "1e", "e5", ".", "-", "1.2.3", "1,5",
                                      "12abc", "--1", "1e+", "\t"};
    double v;
    size_t k;
    (void)state;
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        afd_status st = afd_parse_double(bad[k], &v);
        if (st != AFD_EPARSE)
            fail_msg("'%s' gave status %d", bad[k], (int)st);
        assert_true(isnan(v));
    }
    assert_int_equal(afd_parse_double("1e400", &v), AFD_ERANGE);
    assert_int_equal(afd_parse_double("-1e309", &v), AFD_ERANGE);
}

static void i64_forms(void **state)
{
    int64_t v;
    (void)state;
    assert_int_equal(afd_parse_i64("-12", &v), AFD_OK);
    assert_true(v == -12);
    assert_int_equal(afd_parse_i64("1e6", &v), AFD_OK);
    assert_true(v == 1000000);
    assert_int_equal(afd_parse_i64("2.5e3", &v), AFD_OK);
    assert_true(v == 2500);
    assert_int_equal(afd_parse_i64("9223372036854775807", &v), AFD_OK);
    assert_true(v == INT64_MAX);
    assert_int_equal(afd_parse_i64("-9223372036854775808", &v), AFD_OK);
    assert_true(v == INT64_MIN);
    assert_int_equal(afd_parse_i64("9223372036854775808", &v), AFD_ERANGE);
    assert_int_equal(afd_parse_i64("2.5", &v), AFD_EPARSE);
    assert_int_equal(afd_parse_i64("1e300", &v), AFD_ERANGE);
    assert_int_equal(afd_parse_i64("-+5", &v), AFD_EPARSE);
    assert_int_equal(afd_parse_i64("nan", &v), AFD_EPARSE);
    assert_int_equal(afd_parse_i64("", &v), AFD_EPARSE);
}

static void expect_list(const char *s, int integers, const double *want, size_t n)
{
    cli_list l;
    char msg[256];
    size_t k;
    int rc = cli_list_parse_quiet(s, integers, -1e300, 1e300, &l, msg, sizeof msg);
    if (rc != 0)
        fail_msg("'%s': %s", s, msg);
    if (l.n != n)
        fail_msg("'%s': %zu values, expected %zu", s, l.n, n);
    for (k = 0; k < n; k++)
        assert_close(l.v[k], want[k], 1e-15, 1e-15);
    cli_list_free(&l);
}

static void expect_list_error(const char *s, int integers, double lo, double hi,
                              const char *needle)
{
    cli_list l;
    char msg[256];
    int rc = cli_list_parse_quiet(s, integers, lo, hi, &l, msg, sizeof msg);
    if (rc == 0)
        fail_msg("'%s' was accepted (%zu values)", s, l.n);
    if (strstr(msg, needle) == NULL)
        fail_msg("'%s': message '%s' lacks '%s'", s, msg, needle);
    assert_null(l.v);
    assert_int_equal(l.n, 0);
}

static void lists(void **state)
{
    static const double a[] = {1, 2, 4, 5, 6, 7, 8, 16, 24, 32, 40, 48, 56, 64};
    static const double b[] = {0.5, 0.8, 0.95};
    static const double c[] = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
    static const double d[] = {3, 5, 7};
    static const double e[] = {1000000};
    (void)state;
    expect_list("1,2,4:8,16:64:8", 1, a, sizeof a / sizeof a[0]);
    expect_list("0.5,0.8,0.95", 0, b, 3);
    /* 0:1:0.1 must end on 1, not 0.9 (0.1 is inexact in binary) */
    expect_list("0:1:0.1", 0, c, 11);
    /* a step that does not land on the end stops before it */
    expect_list("3:8:2", 1, d, 3);
    expect_list("1e6", 1, e, 1);
}

static void list_errors(void **state)
{
    (void)state;
    expect_list_error("", 1, 1, 1e9, "empty list");
    expect_list_error("1,,2", 1, 1, 1e9, "empty item");
    expect_list_error("1,2,", 1, 1, 1e9, "empty item");
    expect_list_error(",1", 1, 1, 1e9, "empty item");
    expect_list_error("8:4", 1, 1, 1e9, "reversed");
    expect_list_error("1:8:0", 1, 1, 1e9, "step must be > 0");
    expect_list_error("1:8:-1", 1, 1, 1e9, "step must be > 0");
    expect_list_error("1:1e12", 1, 1, 1e15, "more than");
    expect_list_error("2.5", 1, 1, 1e9, "not an integer");
    expect_list_error("1:4:0.5", 1, 1, 1e9, "not an integer");
    expect_list_error("x", 0, 0, 1, "not a number");
    expect_list_error("nan", 0, 0, 1, "not a number");
    expect_list_error("inf", 0, 0, 1, "not a number");
    expect_list_error("0", 1, 1, 1e9, "outside");
    expect_list_error("1:3:1:4", 1, 1, 1e9, "not an integer");
    /* found by fuzz_parse: a long item with newlines must not break the
     * one-line message */
    expect_list_error("+ 1\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
                      "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n:+",
                      0, 0, 1, "value too long: '+ 1\\x0a");
}

/* Error messages of the list parser are always one line. */
static void list_messages_one_line(void **state)
{
    static const char *const bad[] = {"1\n:0", "1:\n", "1:5:0\n", "\n", "1:2e9\r"};
    size_t k;
    (void)state;
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cli_list l;
        char msg[256];
        assert_int_not_equal(cli_list_parse_quiet(bad[k], 1, 0, 1e9, &l, msg, sizeof msg), 0);
        assert_null(strchr(msg, '\n'));
        assert_null(strchr(msg, '\r'));
    }
}

static void times_and_rates(void **state)
{
    double x;
    (void)state;
    /* Suffixed durations convert into the model's unit; bare numbers do not. */
    assert_int_equal(afd_parse_time("2s", "ms", &x), AFD_OK);
    assert_close(x, 2000, 1e-15, 0);
    assert_int_equal(afd_parse_time(" 150ms", "s", &x), AFD_OK);
    assert_close(x, 0.15, 1e-15, 0);
    assert_int_equal(afd_parse_time("800us", "ms", &x), AFD_OK);
    assert_close(x, 0.8, 1e-15, 0);
    assert_int_equal(afd_parse_time("2.5e3ns", "us", &x), AFD_OK);
    assert_close(x, 2.5, 1e-15, 0);
    assert_int_equal(afd_parse_time("150", "ms", &x), AFD_OK);
    assert_close(x, 150, 0, 0);
    assert_int_equal(afd_parse_time("150", "cycles", &x), AFD_OK);
    assert_close(x, 150, 0, 0);
    /* A unit against a model in cycles (or of no unit) has no meaning. */
    assert_int_equal(afd_parse_time("2s", "cycles", &x), AFD_EINVAL);
    assert_true(isnan(x));
    assert_int_equal(afd_parse_time("2s", "", &x), AFD_EINVAL);
    /* Malformed values and unknown suffixes. */
    assert_int_equal(afd_parse_time("2 h", "s", &x), AFD_EPARSE);
    assert_int_equal(afd_parse_time("2min", "s", &x), AFD_EPARSE);
    assert_int_equal(afd_parse_time("ms", "s", &x), AFD_EPARSE);
    assert_int_equal(afd_parse_time("inf", "s", &x), AFD_EPARSE);
    assert_int_equal(afd_parse_time("1e308s", "ns", &x), AFD_ERANGE);
    /* Rates: per second and per minute, into events per model unit. */
    assert_int_equal(afd_parse_rate("5/s", "ms", &x), AFD_OK);
    assert_close(x, 5e-3, 1e-15, 0);
    assert_int_equal(afd_parse_rate("300/min", "s", &x), AFD_OK);
    assert_close(x, 5, 1e-15, 0);
    assert_int_equal(afd_parse_rate("3.5", "s", &x), AFD_OK);
    assert_close(x, 3.5, 0, 0);
    assert_int_equal(afd_parse_rate("5/s", "cycles", &x), AFD_EINVAL);
    assert_int_equal(afd_parse_rate("5s", "s", &x), AFD_EPARSE);
    assert_int_equal(afd_parse_rate("5/h", "s", &x), AFD_EPARSE);
    assert_int_equal(afd_unit_seconds("us", &x), AFD_OK);
    assert_close(x, 1e-6, 0, 0);
    assert_int_equal(afd_unit_seconds("cycles", &x), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(u64_accepts),  cmocka_unit_test(u64_refuses),
        cmocka_unit_test(double_accepts), cmocka_unit_test(double_refuses),
        cmocka_unit_test(i64_forms),    cmocka_unit_test(lists),
        cmocka_unit_test(list_errors), cmocka_unit_test(list_messages_one_line),
        cmocka_unit_test(times_and_rates),
    };
    RUN_TESTS(tests);
}

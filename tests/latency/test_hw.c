/* test_hw.c: latency coefficients: presets, files, Appendix B. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

#include "afd_device.h"
#include "afd_hw.h"
#include "afd_model.h"

static void preset_is_table3(void **state)
{
    afd_hw h;
    (void)state;
    assert_int_equal(afd_hw_preset("paper-910c", &h), AFD_OK);
    /* Table 3 of the paper */
    assert_close(h.alpha_a, 1.65e-3, 0, 0);
    assert_close(h.beta_a, 50, 0, 0);
    assert_close(h.alpha_f, 0.083, 0, 0);
    assert_close(h.beta_f, 100, 0, 0);
    assert_close(h.alpha_c, 0.022, 0, 0);
    assert_close(h.beta_c, 20, 0, 0);
    assert_string_equal(h.unit, "cycles");
    assert_string_equal(afd_hw_preset_name(0), "paper-910c");
    assert_null(afd_hw_preset_name(1));
    assert_int_equal(afd_hw_preset("nope", &h), AFD_EINVAL);
    assert_true(isnan(h.alpha_a));
}

static void format_parse_round_trip(void **state)
{
    afd_hw h, back;
    char buf[1024];
    afd_error err;
    (void)state;
    afd_hw_init(&h);
    h.alpha_a = 2.385e-10;
    h.beta_a = 1.0 / 3.0;
    h.alpha_f = 8.8080384e-8;
    h.beta_f = 0;
    h.alpha_c = 5.376e-9;
    h.beta_c = 17.25;
    snprintf(h.unit, sizeof h.unit, "%s", "s");
    assert_int_equal(afd_hw_format(&h, "a comment", buf, sizeof buf), AFD_OK);
    assert_true(strncmp(buf, "# a comment\n", 12) == 0);
    assert_int_equal(afd_hw_parse(buf, strlen(buf), &back, &err), AFD_OK);
    /* %.17g round-trips doubles exactly */
    assert_true(memcmp(&h.alpha_a, &back.alpha_a, 6 * sizeof(double)) == 0);
    assert_string_equal(back.unit, "s");
    assert_int_equal(afd_hw_format(&h, NULL, buf, 20), AFD_ERANGE);
}

static void serving_laws(void **state)
{
    static const char base[] = "alpha_a = 1e-3\nbeta_a = 0.5\nalpha_f = 2e-3\nbeta_f = 1\n"
                               "alpha_c = 0\nbeta_c = 0.25\nunit = ms\n";
    char text[1024], buf[2048];
    afd_hw h, back;
    afd_error err;
    (void)state;
    /* Without the laws: the six coefficients alone, laws absent. */
    assert_int_equal(afd_hw_parse(base, strlen(base), &h, &err), AFD_OK);
    assert_false(afd_hw_has_prefill(&h));
    assert_false(afd_hw_has_decode(&h));
    assert_true(isnan(h.fit_max_rel_err));
    /* With both laws, provenance and the fit error; written and read back exactly. */
    snprintf(text, sizeof text,
             "%sprefill_a = 12.5\nprefill_b = 0.0625\nprefill_c = 3.0517578125e-06\n"
             "decode_beta = 20.75\ndecode_gamma = 0.125\ndecode_alpha = 1.9073486328125e-06\n"
             "fit_max_rel_err = 0.03\nafd_fit_max_rel_err = 0.375\nmodel = llama-3.1-8b\n"
             "device = h100-sxm\n",
             base);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_true(afd_hw_has_prefill(&h));
    assert_true(afd_hw_has_decode(&h));
    assert_close(h.prefill_b, 0.0625, 0, 0);
    assert_close(h.decode_alpha, 1.9073486328125e-06, 0, 0);
    assert_string_equal(h.model, "llama-3.1-8b");
    assert_string_equal(h.device, "h100-sxm");
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    assert_int_equal(afd_hw_parse(buf, strlen(buf), &back, &err), AFD_OK);
    assert_true(memcmp(&h.alpha_a, &back.alpha_a, 6 * sizeof(double)) == 0);
    assert_true(memcmp(&h.prefill_a, &back.prefill_a, 7 * sizeof(double)) == 0);
    assert_string_equal(back.device, "h100-sxm");
    assert_true(h.afd_fit_max_rel_err == 0.375 && back.afd_fit_max_rel_err == 0.375);
    /* A fit error is a ratio >= 0. */
    snprintf(text, sizeof text, "%safd_fit_max_rel_err = -0.5\n", base);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_EINVAL);
    assert_string_equal(err.text,
                        "afd_fit_max_rel_err = -0.5 is outside the plausible range [0, inf)");
    /* A law given in part, or negative, is refused by name. */
    snprintf(text, sizeof text, "%sprefill_a = 1\nprefill_b = 2\n", base);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "prefill_c"));
    snprintf(text, sizeof text, "%sdecode_beta = 1\ndecode_gamma = -2\ndecode_alpha = 0\n",
             base);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "decode_gamma"));
    /* A NUL byte inside a value is an error, not a truncated number ("5\0" + "0"). */
    {
        static const char nul[] = "alpha_a = 1e-3\nbeta_a = 5\0" "0\nalpha_f = 2e-3\n"
                                  "beta_f = 1\nalpha_c = 0\nbeta_c = 0\n";
        assert_int_equal(afd_hw_parse(nul, sizeof nul - 1, &h, &err), AFD_EPARSE);
        assert_int_equal(err.line, 2);
    }
    /* A struct built by hand starts with no laws. */
    afd_hw_init(&h);
    assert_false(afd_hw_has_prefill(&h));
    assert_true(isnan(h.alpha_a));
}

static void parse_dialect(void **state)
{
    static const char text[] = "# coefficients\r\n"
                               "\r\n"
                               "  alpha_a=0.00165\r\n"
                               "beta_a = 50\n"
                               "alpha_f\t=\t0.083\n"
                               "beta_f = 100\n"
                               "alpha_c = 2.2e-2\n"
                               "beta_c = 20\n"
                               "unit = cycles";
    afd_hw h, p;
    afd_error err;
    (void)state;
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    afd_hw_preset("paper-910c", &p);
    assert_true(memcmp(&h.alpha_a, &p.alpha_a, 6 * sizeof(double)) == 0);
    assert_string_equal(h.unit, "cycles");
}

static void expect_error(const char *text, afd_status st, long line, const char *msg)
{
    afd_hw h;
    afd_error err;
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), st);
    assert_int_equal(err.line, line);
    if (strcmp(err.text, msg) != 0)
        fail_msg("'%s', expected '%s'", err.text, msg);
    assert_true(isnan(h.alpha_a));
}

static void parse_errors(void **state)
{
    static const char six[] = "alpha_a=1\nbeta_a=1\nalpha_f=1\nbeta_f=1\nalpha_c=1\nbeta_c=1\n";
    char text[512];
    (void)state;
    snprintf(text, sizeof text, "%sgamma = 3\n", six);
    expect_error(text, AFD_EPARSE, 7,
                 "unknown key 'gamma' (expected alpha_a, beta_a, alpha_f, beta_f, alpha_c, "
                 "beta_c, prefill_a/b/c, decode_beta/gamma/alpha, decode_batch_max, "
                 "fit_max_rel_err, afd_fit_max_rel_err, unit, model, device, tp, afd_tp, "
                 "decode/prefill_table)");
    snprintf(text, sizeof text, "%sbeta_a = 3\n", six);
    expect_error(text, AFD_EPARSE, 7, "key 'beta_a' given twice (line 2)");
    expect_error("alpha_a=1\nbeta_a=1\n", AFD_EPARSE, 0, "missing alpha_f");
    expect_error("alpha_a = fast\n", AFD_EPARSE, 1, "alpha_a: not a number: 'fast'");
    expect_error("alpha_a = nan\n", AFD_EPARSE, 1, "alpha_a: not a number: 'nan'");
    expect_error("alpha_a = 1e999\n", AFD_ERANGE, 1, "alpha_a: out of range: '1e999'");
    expect_error("alpha_a\n", AFD_EPARSE, 1, "expected key = value: 'alpha_a'");
    expect_error("unit = microseconds-per-token\n", AFD_EPARSE, 1,
                 "unit: longer than 15 characters: 'microseconds-per-token'");
    /* a unit nothing converts to would make every suffix fail with "no conversion" */
    expect_error("unit = hours\n", AFD_EPARSE, 1, "unit must be s, ms, us, ns or cycles: 'hours'");
    expect_error("unit = min\n", AFD_EPARSE, 1, "unit must be s, ms, us, ns or cycles: 'min'");
    expect_error("alpha_a=\n", AFD_EPARSE, 1, "alpha_a: not a number: ''");
    expect_error("alpha_a=0\nbeta_a=1\nalpha_f=1\nbeta_f=1\nalpha_c=1\nbeta_c=1\n", AFD_EINVAL,
                 0, "alpha_a must be > 0: Attention time must grow with the token load");
    expect_error("alpha_a=1\nbeta_a=1\nalpha_f=1\nbeta_f=-2\nalpha_c=1\nbeta_c=1\n", AFD_EINVAL,
                 4, "beta_f = -2 is outside the plausible range [0, 3.6e+13] (an hour in "
                    "cycles at 10 GHz: no unit given)");
}

/* Every time of a latency file is at most an hour (one step per unit of
 * load), in the file's unit: 3600 s = 3.6e6 ms = 3.6e9 us = 3.6e12 ns, and
 * 3.6e13 cycles (an hour at 10 GHz), also for a file without a unit.  At
 * the bound a file is read; just above it, refused naming line and key. */
static void plausible_ranges(void **state)
{
    static const struct {
        const char *unit;
        double hour;
    } units[] = {{"s", 3600}, {"ms", 3.6e6}, {"us", 3.6e9}, {"ns", 3.6e12},
                 {"cycles", 3.6e13}, {NULL, 3.6e13}};
    static const char *const keys[] = {"beta_a", "alpha_c", "prefill_c", "decode_alpha"};
    size_t i, j;
    (void)state;
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
        for (j = 0; j < sizeof keys / sizeof keys[0]; j++) {
            char text[512], unit[32] = "";
            afd_hw h;
            afd_error err;
            int over;
            if (units[i].unit != NULL)
                snprintf(unit, sizeof unit, "unit = %s\n", units[i].unit);
            for (over = 0; over < 2; over++) {
                double v = units[i].hour * (over ? 1 + 1e-9 : 1);
                /* the laws come whole: the key's two partners are 1 */
                snprintf(text, sizeof text,
                         "alpha_a = 1\nbeta_a = %.17g\nalpha_f = 1\nbeta_f = 1\n"
                         "alpha_c = %.17g\nbeta_c = 1\nprefill_a = 1\nprefill_b = 1\n"
                         "prefill_c = %.17g\ndecode_beta = 1\ndecode_gamma = 1\n"
                         "decode_alpha = %.17g\n%s",
                         j == 0 ? v : 1, j == 1 ? v : 1, j == 2 ? v : 1, j == 3 ? v : 1, unit);
                assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err),
                                 over ? AFD_EINVAL : AFD_OK);
                if (over) {
                    /* beta_a is on line 2, alpha_c on 5, prefill_c on 9, decode_alpha on 12 */
                    const long line[4] = {2, 5, 9, 12};
                    assert_int_equal(err.line, line[j]);
                    assert_true(strncmp(err.text, keys[j], strlen(keys[j])) == 0);
                    assert_non_null(strstr(err.text, "is outside the plausible range [0, "));
                } else {
                    /* the same coefficients set by hand: afd_hw_check holds them alike */
                    h.beta_a *= 1 + 1e-9 * (j == 0);
                    h.alpha_c *= 1 + 1e-9 * (j == 1);
                    h.prefill_c *= 1 + 1e-9 * (j == 2);
                    h.decode_alpha *= 1 + 1e-9 * (j == 3);
                    assert_int_equal(afd_hw_check(&h, &err), AFD_EINVAL);
                    assert_int_equal(err.line, 0);
                    assert_true(strncmp(err.text, keys[j], strlen(keys[j])) == 0);
                }
            }
        }
}

/* tp: the tensor-parallel size the laws time, a positive integer when given,
 * unknown (NAN) when absent, as in every file written before the key. */
static void tensor_parallel(void **state)
{
    static const char six[] = "alpha_a=1\nbeta_a=1\nalpha_f=1\nbeta_f=1\nalpha_c=1\nbeta_c=1\n";
    char text[512], buf[1024], want[1024];
    afd_hw h, back;
    afd_error err;
    (void)state;
    /* absent: unknown, accepted, and nothing written for it */
    assert_int_equal(afd_hw_parse(six, strlen(six), &h, &err), AFD_OK);
    assert_int_equal(h.tp, 0);
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    assert_null(strstr(buf, "tp"));
    /* given: the integer, written after the provenance names and before the
     * coefficients, and read back */
    snprintf(text, sizeof text, "%smodel = llama-3.1-70b\ntp = 4\n", six);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.tp, 4);
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    snprintf(want, sizeof want, "model = llama-3.1-70b\ntp = 4\n%s",
             "alpha_a = 1\nbeta_a = 1\nalpha_f = 1\nbeta_f = 1\nalpha_c = 1\nbeta_c = 1\n");
    assert_string_equal(buf, want);
    assert_int_equal(afd_hw_parse(buf, strlen(buf), &back, &err), AFD_OK);
    assert_int_equal(back.tp, 4);
    /* the ends of the range; an integer written with an exponent is that integer */
    snprintf(text, sizeof text, "tp = 1\n%s", six);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.tp, 1);
    snprintf(text, sizeof text, "tp = 1.024e3\n%s", six);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.tp, AFD_HW_TP_MAX);
    assert_int_equal(AFD_HW_TP_MAX, 1024);
    /* refused, naming the line and the value */
    {
        static const char *const bad[] = {"0", "-4", "2.5", "1025", "inf", "nan", "four", "",
                                          "1e999"};
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char msg[200];
            snprintf(text, sizeof text, "%s# size\ntp = %s\n", six, bad[i]);
            snprintf(msg, sizeof msg,
                     "tp must be an integer in [1, 1024] (the tensor-parallel size the laws "
                     "time): '%s'",
                     bad[i]);
            expect_error(text, AFD_EPARSE, 8, msg);
        }
    }
    snprintf(text, sizeof text, "%stp = 2\ntp = 2\n", six);
    expect_error(text, AFD_EPARSE, 8, "key 'tp' given twice (line 7)");
    /* a struct built by hand is checked the same way; zeroed, it states no size */
    assert_int_equal(afd_hw_parse(six, strlen(six), &h, &err), AFD_OK);
    h.tp = 1025;
    assert_int_equal(afd_hw_check(&h, &err), AFD_EINVAL);
    assert_string_equal(err.text, "tp must be at most 1024 (a tensor-parallel size): 1025");
    h.tp = 0;
    assert_int_equal(afd_hw_check(&h, &err), AFD_OK);
    h.tp = 8;
    assert_int_equal(afd_hw_check(&h, &err), AFD_OK);
    /* a preset states none */
    assert_int_equal(afd_hw_preset("paper-910c", &h), AFD_OK);
    assert_int_equal(h.tp, 0);
}

/* afd_tp: the devices per instance the six AFD coefficients time, apart
 * from tp (Appendix B's per-card coefficients beside laws at TP 4); parsed,
 * written and checked as tp is, unknown (0) when absent. */
static void afd_tensor_parallel(void **state)
{
    static const char six[] = "alpha_a=1\nbeta_a=1\nalpha_f=1\nbeta_f=1\nalpha_c=1\nbeta_c=1\n";
    char text[512], buf[1024];
    afd_hw h, back;
    afd_error err;
    (void)state;
    /* absent: unknown, whatever tp says, and nothing written for it */
    snprintf(text, sizeof text, "tp = 4\n%s", six);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.tp, 4);
    assert_int_equal(h.afd_tp, 0);
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    assert_null(strstr(buf, "afd_tp"));
    /* given alone, and beside another tp: each key its own field, written
     * after tp and before the coefficients, read back */
    snprintf(text, sizeof text, "%safd_tp = 2\n", six);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.afd_tp, 2);
    assert_int_equal(h.tp, 0);
    snprintf(text, sizeof text, "afd_tp = 1\n%stp = 4\n", six);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.tp, 4);
    assert_int_equal(h.afd_tp, 1);
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    assert_string_equal(buf, "tp = 4\nafd_tp = 1\nalpha_a = 1\nbeta_a = 1\nalpha_f = 1\n"
                             "beta_f = 1\nalpha_c = 1\nbeta_c = 1\n");
    assert_int_equal(afd_hw_parse(buf, strlen(buf), &back, &err), AFD_OK);
    assert_int_equal(back.tp, 4);
    assert_int_equal(back.afd_tp, 1);
    /* the top of the range, spelt with an exponent */
    snprintf(text, sizeof text, "afd_tp = 1.024e3\n%s", six);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.afd_tp, 1024);
    /* refused, naming the line and the value */
    {
        static const char *const bad[] = {"0", "-1", "0.5", "1025", "inf", "nan", "one", "",
                                          "1e999", "4 devices"};
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char msg[200];
            snprintf(text, sizeof text, "%s\n# size\nafd_tp = %s\n", six, bad[i]);
            snprintf(msg, sizeof msg,
                     "afd_tp must be an integer in [1, 1024] (the devices per instance the "
                     "six AFD coefficients time): '%s'",
                     bad[i]);
            expect_error(text, AFD_EPARSE, 9, msg);
        }
    }
    snprintf(text, sizeof text, "%safd_tp = 4\nafd_tp = 4\n", six);
    expect_error(text, AFD_EPARSE, 8, "key 'afd_tp' given twice (line 7)");
    /* a struct built by hand: checked the same way */
    assert_int_equal(afd_hw_parse(six, strlen(six), &h, &err), AFD_OK);
    h.afd_tp = 1025;
    assert_int_equal(afd_hw_check(&h, &err), AFD_EINVAL);
    assert_string_equal(err.text, "afd_tp must be at most 1024 (devices per instance): 1025");
    h.afd_tp = 1024;
    assert_int_equal(afd_hw_check(&h, &err), AFD_OK);
    /* neither a preset nor afd_hw_init states one */
    assert_int_equal(afd_hw_preset("paper-910c", &h), AFD_OK);
    assert_int_equal(h.afd_tp, 0);
    h.afd_tp = 3;
    afd_hw_init(&h);
    assert_int_equal(h.afd_tp, 0);
}

/* decode_batch_max: the largest batch the decode law was fitted on, a
 * positive integer when given, written after the decode law; unknown (0)
 * when absent, as in every file written before the key. */
static void decode_batch_max(void **state)
{
    static const char six[] = "alpha_a=1\nbeta_a=1\nalpha_f=1\nbeta_f=1\nalpha_c=1\nbeta_c=1\n";
    static const char law[] = "decode_beta=15\ndecode_gamma=0.5\ndecode_alpha=0.25\n";
    char text[512], buf[1024], want[1024];
    afd_hw h, back;
    afd_error err;
    (void)state;
    snprintf(text, sizeof text, "%s%s", six, law);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.decode_batch_max, 0);
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    assert_null(strstr(buf, "decode_batch_max"));
    /* given: read, written right after the decode law, read back */
    snprintf(text, sizeof text, "decode_batch_max = 3334\n%s%s", six, law);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.decode_batch_max, 3334);
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    snprintf(want, sizeof want, "%s",
             "alpha_a = 1\nbeta_a = 1\nalpha_f = 1\nbeta_f = 1\nalpha_c = 1\nbeta_c = 1\n"
             "decode_beta = 15\ndecode_gamma = 0.5\ndecode_alpha = 0.25\n"
             "decode_batch_max = 3334\n");
    assert_string_equal(buf, want);
    assert_int_equal(afd_hw_parse(buf, strlen(buf), &back, &err), AFD_OK);
    assert_int_equal(back.decode_batch_max, 3334);
    /* the ends of the range */
    snprintf(text, sizeof text, "%s%sdecode_batch_max = 1e9\n", six, law);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.decode_batch_max, 1000000000u);
    assert_int_equal(AFD_HW_BATCH_MAX, 1000000000u);
    snprintf(text, sizeof text, "%s%sdecode_batch_max = 1\n", six, law);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_int_equal(h.decode_batch_max, 1);
    {
        static const char *const bad[] = {"0", "-4", "2.5", "1000000001", "inf", "nan", "many",
                                          "", "1e999"};
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char msg[200];
            snprintf(text, sizeof text, "%s%sdecode_batch_max = %s\n", six, law, bad[i]);
            snprintf(msg, sizeof msg,
                     "decode_batch_max must be an integer in [1, 1000000000] (the largest "
                     "batch the decode law was fitted on): '%s'",
                     bad[i]);
            expect_error(text, AFD_EPARSE, 10, msg);
        }
    }
    snprintf(text, sizeof text, "%s%sdecode_batch_max = 8\ndecode_batch_max = 8\n", six, law);
    expect_error(text, AFD_EPARSE, 11, "key 'decode_batch_max' given twice (line 10)");
    /* the range of a law the file does not have, named at its line (7,
     * after the six) */
    snprintf(text, sizeof text, "%sdecode_batch_max = 8\n", six);
    expect_error(text, AFD_EINVAL, 7,
                 "decode_batch_max is the range of the decode law: it needs decode_beta, "
                 "decode_gamma and decode_alpha");
    /* a struct built by hand is checked the same way */
    snprintf(text, sizeof text, "%s%s", six, law);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    h.decode_batch_max = 1000000001u;
    assert_int_equal(afd_hw_check(&h, &err), AFD_EINVAL);
    assert_string_equal(err.text, "decode_batch_max must be at most 1000000000 (a batch): "
                                  "1000000001");
    /* it goes with the laws it bounds */
    {
        afd_hw dst;
        afd_hw_init(&dst);
        dst.alpha_a = dst.alpha_f = 1;
        dst.beta_a = dst.beta_f = dst.alpha_c = dst.beta_c = 0;
        snprintf(dst.unit, sizeof dst.unit, "s");
        snprintf(h.unit, sizeof h.unit, "ms");
        h.decode_batch_max = 512;
        assert_int_equal(afd_hw_copy_laws(&dst, &h), AFD_OK);
        assert_int_equal(dst.decode_batch_max, 512);
        assert_int_equal(afd_hw_check(&dst, &err), AFD_OK);
    }
    assert_int_equal(afd_hw_preset("paper-910c", &h), AFD_OK);
    assert_int_equal(h.decode_batch_max, 0);
}

static void read_file_errors(void **state)
{
    afd_hw h;
    afd_error err;
    (void)state;
    assert_int_equal(afd_hw_read("/nonexistent/x.hw", &h, &err), AFD_EIO);
    assert_string_equal(err.text, "cannot open: No such file or directory");
    assert_int_equal(afd_hw_read("/", &h, &err), AFD_EIO);
}

/* Appendix B by hand for DeepSeek-V3 on made-up hardware: HBM 3.2 TB/s at
 * 80%, 1000 TFLOPS at 50%, 40 GB/s network, 8 experts per card. */
static void derive_deepseek(void **state)
{
    afd_model_dims m;
    afd_hw_specs sp = {3.2e12, 0.8, 1e15, 0.5, 40e9, 8, 1e-5, 2e-5, 3e-6};
    afd_hw h;
    double be_per_request, flops_expert, t_card;
    (void)state;
    assert_int_equal(afd_model_preset("deepseek-v3", &m), AFD_OK);
    assert_int_equal(afd_hw_derive(&m, &sp, &h), AFD_OK);
    /* eq. (17)-(19): 1152 bytes per token over 2.56 TB/s */
    assert_close(h.alpha_a, 1152 / 2.56e12, 1e-15, 0);
    /* eq. (20)-(24): per request of the global batch B_e = B_F/16 tokens reach
     * each expert; 6 H d_expert = 8.81e7 FLOPs per token per expert, 8
     * experts per card at 5e14 FLOP/s */
    be_per_request = 8.0 * 2 / 256;
    flops_expert = 6.0 * 7168 * 2048;
    t_card = 8 * flops_expert / 5e14;
    assert_close(h.alpha_f, t_card * be_per_request, 1e-15, 0);
    /* eq. (27)-(31): 3 H bytes per token per expert, 8 experts per card */
    assert_close(h.alpha_c, 8 * 3.0 * 7168 / 40e9 * be_per_request, 1e-15, 0);
    assert_close(h.beta_a, 1e-5, 0, 0);
    assert_string_equal(h.unit, "s");
    /* eq. (19) reads the KV through one card's HBM and eq. (23) times one
     * card's 8 experts, the 256 / 8 = 32 cards of the FFN side in parallel:
     * instances of 1 card (Attention) and 32 (FFN), no one size */
    assert_int_equal(h.afd_tp, 0);
    assert_int_equal(h.tp, 0);
    /* every expert on one card: one card per instance on either side */
    sp.experts_per_card = 256;
    assert_int_equal(afd_hw_derive(&m, &sp, &h), AFD_OK);
    assert_int_equal(h.afd_tp, 1);
    assert_int_equal(h.tp, 0);
    sp.experts_per_card = 8;
    sp.mem_eff = 1.5;
    assert_int_equal(afd_hw_derive(&m, &sp, &h), AFD_EINVAL);
    assert_int_equal(afd_model_preset("gpt-5", &m), AFD_EINVAL);
}

/* Table 3 back from specifications chosen to produce it (time unit "cycle"
 * taken as the unit of the derivation). */
static void derive_table3(void **state)
{
    afd_model_dims m;
    afd_hw_specs sp;
    afd_hw h, p;
    (void)state;
    afd_model_preset("deepseek-v3", &m);
    afd_hw_preset("paper-910c", &p);
    sp.hbm_bw = 1152 / 0.00165;
    sp.mem_eff = 1;
    sp.peak_flops = 8 * 6.0 * 7168 * 2048 * (16.0 / 256) / 0.083;
    sp.compute_eff = 1;
    sp.net_bw = 8 * 3.0 * 7168 * (16.0 / 256) / 0.022;
    sp.experts_per_card = 8;
    sp.beta_a = 50;
    sp.beta_f = 100;
    sp.beta_c = 20;
    assert_int_equal(afd_hw_derive(&m, &sp, &h), AFD_OK);
    assert_close(h.alpha_a, p.alpha_a, 1e-15, 0);
    assert_close(h.alpha_f, p.alpha_f, 1e-15, 0);
    assert_close(h.alpha_c, p.alpha_c, 1e-15, 0);
}

/* The whole model from its description: DeepSeek-V3's config.json has 61
 * layers of which the first 3 keep a dense MLP (first_k_dense_replace), so
 * 58 MoE layers; MLA caches kv_lora_rank 512 + qk_rope_head_dim 64 elements
 * per layer in bfloat16; MTP depth num_nextn_predict_layers = 1.
 * Llama-3.1-8B: 32 layers, 8 KV heads of 128 (K and V: 2048 elements),
 * dense MLP of 14336 taken as one expert every token reaches. */
static void dims_from_model(void **state)
{
    afd_model d;
    afd_model_dims m, one;
    afd_error err;
    afd_hw_specs sp = {3.2e12, 0.8, 1e15, 0.5, 40e9, 8, 0, 0, 0};
    afd_hw whole, layer;
    (void)state;
    assert_int_equal(afd_model_preset_load("deepseek-v3", &d, &err), AFD_OK);
    assert_int_equal(afd_model_dims_from_model(&d, &m), AFD_OK);
    assert_close(m.hidden, 7168, 0, 0);
    assert_close(m.kv_dim, 576, 0, 0);
    assert_close(m.kv_bytes, 2, 0, 0);
    assert_close(m.d_expert, 2048, 0, 0);
    assert_close(m.n_experts, 256, 0, 0);
    assert_close(m.top_k, 8, 0, 0);
    assert_close(m.mtp_depth, 1, 0, 0);
    assert_close(m.attn_layers, 61, 0, 0);
    assert_close(m.ffn_layers, 58, 0, 0);
    /* the same per layer as Appendix B.1, so the whole model is 61 (58) of
     * its per-layer values */
    assert_int_equal(afd_model_preset("deepseek-v3", &one), AFD_OK);
    assert_int_equal(afd_hw_derive(&m, &sp, &whole), AFD_OK);
    assert_int_equal(afd_hw_derive(&one, &sp, &layer), AFD_OK);
    assert_close(whole.alpha_a, 61 * 1152 / 2.56e12, 1e-15, 0);
    assert_close(whole.alpha_a, 61 * layer.alpha_a, 1e-15, 0);
    assert_close(whole.alpha_f, 58 * layer.alpha_f, 1e-15, 0);
    assert_close(whole.alpha_c, 58 * layer.alpha_c, 1e-15, 0);

    assert_int_equal(afd_model_preset_load("llama-3.1-8b", &d, &err), AFD_OK);
    assert_int_equal(afd_model_dims_from_model(&d, &m), AFD_OK);
    assert_close(m.kv_dim, 2 * 8 * 128, 0, 0);
    assert_close(m.d_expert, 14336, 0, 0);
    assert_close(m.n_experts, 1, 0, 0);
    assert_close(m.top_k, 1, 0, 0);
    assert_close(m.mtp_depth, 0, 0, 0);
    assert_close(m.attn_layers, 32, 0, 0);
    assert_close(m.ffn_layers, 32, 0, 0);
    /* 8 experts per card cannot exceed one dense MLP */
    assert_int_equal(afd_hw_derive(&m, &sp, &whole), AFD_EINVAL);
    sp.experts_per_card = 1;
    assert_int_equal(afd_hw_derive(&m, &sp, &whole), AFD_OK);
    /* 32 layers x 6 H d_ff FLOPs per token at 5e14 FLOP/s */
    assert_close(whole.alpha_f, 32 * 6.0 * 4096 * 14336 / 5e14, 1e-15, 0);
    /* 2048 elements of 2 bytes per layer over 2.56 TB/s */
    assert_close(whole.alpha_a, 32 * 2048.0 * 2 / 2.56e12, 1e-15, 0);
    /* one card's bandwidth and peak: a dense model's instances are a card */
    assert_int_equal(whole.afd_tp, 1);
}

/* A device's numbers fill the specs not given apart: the decode phase's
 * efficiencies (the prefill ones are set apart to show which is read), the
 * link times comm_eff as the effective network, 100 x 0.5 = 50 GB/s. */
static void specs_from_device(void **state)
{
    afd_device d;
    double v[AFD_HW_N_SPECS];
    int k;
    (void)state;
    memset(&d, 0, sizeof d);
    d.hbm_tbps = 3;
    d.peak_tflops = 500;
    d.net_gbps = 100;
    d.mfu[AFD_PREFILL] = 0.9;
    d.mfu[AFD_DECODE] = 0.4;
    d.mbu[AFD_PREFILL] = 0.8;
    d.mbu[AFD_DECODE] = 0.3;
    d.comm_eff[AFD_PREFILL] = 0.7;
    d.comm_eff[AFD_DECODE] = 0.5;
    for (k = 0; k < AFD_HW_N_SPECS; k++)
        v[k] = NAN;
    v[AFD_HW_HBM_TBPS] = 2; /* given apart: kept */
    assert_int_equal(afd_hw_specs_from_device(&d, v), AFD_OK);
    assert_true(v[AFD_HW_HBM_TBPS] == 2);
    assert_true(v[AFD_HW_MEM_EFF] == 0.3);
    assert_true(v[AFD_HW_PEAK_TFLOPS] == 500);
    assert_true(v[AFD_HW_COMPUTE_EFF] == 0.4);
    assert_true(v[AFD_HW_NET_GBPS] == 50);
    assert_true(isnan(v[AFD_HW_EXPERTS_PER_CARD]));
    assert_int_equal(afd_hw_specs_from_device(NULL, v), AFD_EINVAL);
}

/* Table 2's units to SI, and the plausibility ranges. */
static void specs_ranges(void **state)
{
    double v[AFD_HW_N_SPECS] = {3.35, 0.8, 989.4, 0.5, 40, 8};
    afd_hw_specs sp;
    afd_error err;
    double lo, hi;
    int open;
    const char *name, *unit;
    (void)state;
    assert_int_equal(afd_hw_specs_from_table2(v, 1e-5, 0, 2e-6, &sp, &err), AFD_OK);
    assert_close(sp.hbm_bw, 3.35e12, 1e-16, 0);
    assert_close(sp.peak_flops, 989.4e12, 1e-16, 0);
    assert_close(sp.net_bw, 40e9, 0, 0);
    assert_close(sp.mem_eff, 0.8, 0, 0);
    assert_close(sp.experts_per_card, 8, 0, 0);
    assert_close(sp.beta_c, 2e-6, 0, 0);
    /* 3350 meant as GB/s */
    v[AFD_HW_HBM_TBPS] = 3350;
    assert_int_equal(afd_hw_specs_from_table2(v, 0, 0, 0, &sp, &err), AFD_EINVAL);
    assert_string_equal(err.text, "hbm_tbps 3350 TB/s outside [0.05, 50] TB/s");
    v[AFD_HW_HBM_TBPS] = 50; /* the bound itself is plausible */
    assert_int_equal(afd_hw_specs_from_table2(v, 0, 0, 0, &sp, &err), AFD_OK);
    v[AFD_HW_COMPUTE_EFF] = 0;
    assert_int_equal(afd_hw_specs_from_table2(v, 0, 0, 0, &sp, &err), AFD_EINVAL);
    assert_string_equal(err.text, "compute_eff 0 outside (0, 1]");
    v[AFD_HW_COMPUTE_EFF] = 1;
    v[AFD_HW_NET_GBPS] = 4e4; /* 40 TB/s meant as ... anything */
    assert_int_equal(afd_hw_specs_from_table2(v, 0, 0, 0, &sp, &err), AFD_EINVAL);
    v[AFD_HW_NET_GBPS] = 40;
    v[AFD_HW_EXPERTS_PER_CARD] = 0.5;
    assert_int_equal(afd_hw_specs_from_table2(v, 0, 0, 0, &sp, &err), AFD_EINVAL);
    v[AFD_HW_EXPERTS_PER_CARD] = 8;
    v[AFD_HW_PEAK_TFLOPS] = NAN;
    assert_int_equal(afd_hw_specs_from_table2(v, 0, 0, 0, &sp, &err), AFD_EINVAL);
    v[AFD_HW_PEAK_TFLOPS] = 989.4;
    assert_int_equal(afd_hw_specs_from_table2(v, -1e-6, 0, 0, &sp, &err), AFD_EINVAL);
    assert_int_equal(afd_hw_spec_range(AFD_HW_PEAK_TFLOPS, &lo, &hi, &open, &name, &unit), 0);
    assert_close(lo, 1, 0, 0);
    assert_close(hi, 20000, 0, 0);
    assert_int_equal(open, 0);
    assert_string_equal(name, "peak_tflops");
    assert_string_equal(unit, "TFLOP/s");
    assert_int_equal(afd_hw_spec_range(AFD_HW_N_SPECS, &lo, &hi, &open, &name, &unit), -1);
}

/* Seconds to the output unit: exact powers of ten on every time-valued
 * coefficient (the serving laws too), the unit recorded. */
static void seconds_to_unit(void **state)
{
    afd_hw h;
    (void)state;
    afd_hw_init(&h);
    h.alpha_a = 2e-8;
    h.beta_a = 5e-5;
    h.alpha_f = 3e-6;
    h.beta_f = 1e-4;
    h.alpha_c = 2e-6;
    h.beta_c = 0;
    h.decode_beta = 0.01;
    h.decode_gamma = 1e-5;
    h.decode_alpha = 1e-9;
    h.fit_max_rel_err = 0.05;
    h.afd_fit_max_rel_err = 0.2;
    snprintf(h.unit, sizeof h.unit, "s");
    assert_int_equal(afd_hw_seconds_to_unit(&h, "us"), AFD_OK);
    assert_string_equal(h.unit, "us");
    assert_true(h.alpha_a == 2e-8 * 1e6);
    assert_true(h.beta_a == 5e-5 * 1e6);
    assert_true(h.alpha_f == 3e-6 * 1e6);
    assert_true(h.decode_beta == 0.01 * 1e6);
    assert_true(h.decode_alpha == 1e-9 * 1e6);
    assert_true(isnan(h.prefill_a));
    assert_close(h.fit_max_rel_err, 0.05, 0, 0); /* a ratio, not a time */
    assert_close(h.afd_fit_max_rel_err, 0.2, 0, 0);
    /* already in us: refused, unchanged */
    assert_int_equal(afd_hw_seconds_to_unit(&h, "ms"), AFD_EINVAL);
    assert_true(h.alpha_a == 2e-8 * 1e6);
    snprintf(h.unit, sizeof h.unit, "s");
    h.alpha_a = 2e-8;
    assert_int_equal(afd_hw_seconds_to_unit(&h, "cycles"), AFD_EINVAL);
    assert_string_equal(h.unit, "s");
    assert_int_equal(afd_hw_seconds_to_unit(&h, "ns"), AFD_OK);
    assert_true(h.alpha_a == 2e-8 * 1e9);
    snprintf(h.unit, sizeof h.unit, "s");
    assert_int_equal(afd_hw_seconds_to_unit(&h, "s"), AFD_OK);
    assert_true(h.alpha_a == 2e-8 * 1e9);
}

/* afd_hw_copy_laws: the laws and the fit error cross units by the power of
 * ten between them (a per-token or per-squared-token coefficient is a time
 * per count, so it scales like a time); the six coefficients stay. */
static void copy_laws(void **state)
{
    afd_hw src, dst;
    (void)state;
    afd_hw_init(&src);
    afd_hw_init(&dst);
    src.prefill_a = 8.5;
    src.prefill_b = 0.07;
    src.prefill_c = 6.5e-7;
    src.decode_beta = 15;
    src.decode_gamma = 0.04;
    src.decode_alpha = 2.5e-5;
    src.fit_max_rel_err = 0.1;
    src.afd_fit_max_rel_err = 0.3; /* of src's six coefficients: not copied */
    snprintf(src.unit, sizeof src.unit, "ms");
    dst.alpha_a = 1e-7;
    snprintf(dst.unit, sizeof dst.unit, "s");
    assert_int_equal(afd_hw_copy_laws(&dst, &src), AFD_OK);
    /* ms to s: divided by 1000 (correctly rounded, so equal to the quotient) */
    assert_true(dst.prefill_a == 8.5 / 1000);
    assert_true(dst.prefill_b == 0.07 / 1000);
    assert_true(dst.prefill_c == 6.5e-7 / 1000);
    assert_true(dst.decode_beta == 15.0 / 1000);
    assert_true(dst.decode_gamma == 0.04 / 1000);
    assert_true(dst.decode_alpha == 2.5e-5 / 1000);
    assert_true(dst.fit_max_rel_err == 0.1);
    assert_true(isnan(dst.afd_fit_max_rel_err));
    assert_int_equal(dst.tp, 0); /* src states no size */
    assert_true(dst.alpha_a == 1e-7);
    assert_string_equal(dst.unit, "s");
    /* the size the laws time goes with them; the devices per instance of
     * the six coefficients stay with those (dst's) */
    src.tp = 8;
    src.afd_tp = 8;
    dst.afd_tp = 1;
    assert_int_equal(afd_hw_copy_laws(&dst, &src), AFD_OK);
    assert_int_equal(dst.tp, 8);
    assert_int_equal(dst.afd_tp, 1);
    /* ms to ns: times 10^6 */
    snprintf(dst.unit, sizeof dst.unit, "ns");
    assert_int_equal(afd_hw_copy_laws(&dst, &src), AFD_OK);
    assert_true(dst.prefill_a == 8.5e6);
    assert_true(dst.decode_alpha == 2.5e-5 * 1e6);
    /* same unit, even one without a scale: an exact copy */
    snprintf(src.unit, sizeof src.unit, "cycles");
    snprintf(dst.unit, sizeof dst.unit, "cycles");
    assert_int_equal(afd_hw_copy_laws(&dst, &src), AFD_OK);
    assert_true(dst.prefill_c == 6.5e-7);
    /* cycles to ms: no scale between them, refused and dst unchanged */
    snprintf(dst.unit, sizeof dst.unit, "ms");
    dst.prefill_c = 1;
    assert_int_equal(afd_hw_copy_laws(&dst, &src), AFD_EINVAL);
    assert_true(dst.prefill_c == 1);
    /* absent laws stay absent */
    afd_hw_init(&src);
    snprintf(src.unit, sizeof src.unit, "ms");
    assert_int_equal(afd_hw_copy_laws(&dst, &src), AFD_OK);
    assert_false(afd_hw_has_prefill(&dst));
    assert_false(afd_hw_has_decode(&dst));
}

/* pat with every "KEY" replaced by key, into out */
static void subst(const char *pat, const char *key, char *out, size_t cap)
{
    size_t o = 0;
    while (*pat && o + strlen(key) + 1 < cap) {
        if (strncmp(pat, "KEY", 3) == 0) {
            memcpy(out + o, key, strlen(key));
            o += strlen(key);
            pat += 3;
        } else {
            out[o++] = *pat++;
        }
    }
    out[o] = '\0';
}

/* Latency files and device files are read by one key = value reader: the
 * same malformed line gives the same status, line and message in both. */
static void one_reader(void **state)
{
    /* each bad text with the status, line and message expected of it;
     * KEY stands for the file kind's first key */
    static const struct {
        const char *text;
        afd_status st;
        long line;
        const char *msg;
    } cases[] = {
        {"# c\n\nKEY = 1\n  KEY\t= 2 \r\n", AFD_EPARSE, 4, "key 'KEY' given twice (line 3)"},
        {"KEY = 1e999\n", AFD_ERANGE, 1, "KEY: out of range: '1e999'"},
        {"KEY = fast\n", AFD_EPARSE, 1, "KEY: not a number: 'fast'"},
        {"\nKEY\n", AFD_EPARSE, 2, "expected key = value: 'KEY'"},
        {"KEY_x = 1\n", AFD_EPARSE, 1, "unknown key 'KEY_x' (expected "},
    };
    static const char *const first[2] = {"alpha_a", "peak_tflops"};
    size_t i;
    int kind;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (kind = 0; kind < 2; kind++) {
            char text[256], msg[256];
            afd_hw h;
            afd_device d;
            afd_error err;
            afd_status st;
            subst(cases[i].text, first[kind], text, sizeof text);
            subst(cases[i].msg, first[kind], msg, sizeof msg);
            st = kind == 0 ? afd_hw_parse(text, strlen(text), &h, &err)
                           : afd_device_parse(text, strlen(text), "x", &d, &err);
            assert_int_equal(st, cases[i].st);
            assert_int_equal(err.line, cases[i].line);
            if (strncmp(err.text, msg, strlen(msg)) != 0)
                fail_msg("%s file, case %zu: '%s', expected '%s'", kind ? "device" : "latency",
                         i, err.text, msg);
        }
}

/* A table of the power law 3 b^0.5 s^1.5 (any grid): interpolation in log
 * space is exact for it everywhere, extrapolation included; at the grid
 * points any table gives its own values back; a + c s on a grid of ratio
 * sqrt 2 is followed within 0.5% (0.38% at worst, at s = 1 / sqrt 2 x the
 * grid's a / c, by hand). */
static double power_law(double b, double s)
{
    return 3 * sqrt(b) * pow(s, 1.5);
}

static void table_interpolation(void **state)
{
    static afd_hw_table t;
    static const double B[] = {1, 2, 3, 7.5}, S[] = {1, 10, 11, 400, 1e4};
    unsigned i, j;
    (void)state;
    t.nb = 4;
    t.ns = 5;
    for (i = 0; i < t.nb; i++)
        t.b[i] = B[i];
    for (j = 0; j < t.ns; j++)
        t.s[j] = S[j];
    for (i = 0; i < t.nb; i++)
        for (j = 0; j < t.ns; j++)
            t.t[i * t.ns + j] = power_law(B[i], S[j]);
    assert_close(afd_hw_table_eval(&t, 1.5, 5), power_law(1.5, 5), 1e-13, 0);
    assert_close(afd_hw_table_eval(&t, 5.25, 2385), power_law(5.25, 2385), 1e-13, 0);
    assert_close(afd_hw_table_eval(&t, 7.5, 10.5), power_law(7.5, 10.5), 1e-13, 0);
    assert_close(afd_hw_table_eval(&t, 30, 1e5), power_law(30, 1e5), 1e-12, 0);
    /* exact at the grid points, whatever the values */
    for (i = 0; i < t.nb; i++)
        for (j = 0; j < t.ns; j++)
            t.t[i * t.ns + j] = 1 + i + 10 * j + 0.125 * (i * j % 3);
    for (i = 0; i < t.nb; i++)
        for (j = 0; j < t.ns; j++)
            assert_true(afd_hw_table_eval(&t, B[i], S[j]) == t.t[i * t.ns + j]);
    assert_true(isnan(afd_hw_table_eval(&t, 0.5, 10)));
    assert_true(isnan(afd_hw_table_eval(&t, 2, NAN)));
    /* 2 + 5 s over s = 1, sqrt 2, 2, ...: within 0.5% at every midpoint */
    t.nb = 1;
    t.ns = 20;
    for (j = 0; j < t.ns; j++) {
        t.s[j] = pow(2, j / 2.0);
        t.t[j] = 2 + 5 * t.s[j];
    }
    for (j = 0; j + 1 < t.ns; j++) {
        double m = sqrt(t.s[j] * t.s[j + 1]), a = (t.s[j] + t.s[j + 1]) / 2;
        assert_close(afd_hw_table_eval(&t, 1, m), 2 + 5 * m, 5e-3, 0);
        assert_close(afd_hw_table_eval(&t, 1, a), 2 + 5 * a, 5e-3, 0);
    }
    t.nb = t.ns = 0;
    assert_true(isnan(afd_hw_table_eval(&t, 1, 1)));
}

/* 1 when a and b hold the same grid and times, bit for bit */
static int same_table(const afd_hw_table *a, const afd_hw_table *b)
{
    unsigned i;
    if (a->nb != b->nb || a->ns != b->ns)
        return 0;
    for (i = 0; i < a->nb; i++)
        if (memcmp(&a->b[i], &b->b[i], sizeof a->b[i]) != 0)
            return 0;
    for (i = 0; i < a->ns; i++)
        if (memcmp(&a->s[i], &b->s[i], sizeof a->s[i]) != 0)
            return 0;
    for (i = 0; i < a->nb * a->ns; i++)
        if (memcmp(&a->t[i], &b->t[i], sizeof a->t[i]) != 0)
            return 0;
    return 1;
}

/* The tables in a latency file: written and read back exactly, used by the
 * step-time functions in place of the laws, converted with the laws'
 * unit; a file without them gives the laws exactly as before. */
static void table_file(void **state)
{
    static const char laws[] = "alpha_a = 1e-3\nbeta_a = 0.5\nalpha_f = 2e-3\nbeta_f = 1\n"
                               "alpha_c = 0\nbeta_c = 0.25\nunit = ms\n"
                               "prefill_a = 20\nprefill_b = 0.1\nprefill_c = 1e-5\n"
                               "decode_beta = 30\ndecode_gamma = 0.1\ndecode_alpha = 1e-4\n";
    static afd_hw h, back, s;
    static char buf[AFD_HW_TEXT_MAX];
    char text[2048];
    afd_error err;
    (void)state;
    assert_int_equal(afd_hw_parse(laws, strlen(laws), &h, &err), AFD_OK);
    assert_false(afd_hw_has_decode_table(&h));
    /* no table: the laws, by hand */
    assert_true(afd_hw_decode_step(&h, 8, 24000) == 30 + 0.1 * 8 + 1e-4 * 24000);
    assert_true(afd_hw_prefill_time(&h, 3000, 5e6) == 20 + 0.1 * 3000 + 1e-5 * 5e6);
    /* decode: b = 1, 4; s = 100, 1000.  prefill: b = 1; s = 10, 1000 */
    snprintf(text, sizeof text,
             "%sdecode_table = 2 2 1 4 100 1000 31 32 35 40.5\n"
             "prefill_table = 1 2 1 10 1000 21.5 150.125\n",
             laws);
    assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_OK);
    assert_true(afd_hw_has_decode_table(&h) && afd_hw_has_prefill_table(&h));
    /* decode 4 sequences holding 4000 KV tokens: the point (4, 1000) */
    assert_true(afd_hw_decode_step(&h, 4, 4000) == 40.5);
    /* 2 sequences, 632.46 tokens each (sqrt(100 x 4000)): the geometric
     * centre, exp of the mean of the four logs */
    assert_close(afd_hw_decode_step(&h, 2, 2 * sqrt(1e5)), pow(31 * 32 * 35 * 40.5, 0.25), 1e-13,
                 0);
    /* one prompt of 1000 tokens: b = 1, s = 1000 */
    assert_true(afd_hw_prefill_time(&h, 1000, 1e6) == 150.125);
    assert_int_equal(afd_hw_format(&h, NULL, buf, sizeof buf), AFD_OK);
    assert_non_null(strstr(buf, "\ndecode_table = 2 2 1 4 100 1000 31 32 35 40.5\n"));
    assert_int_equal(afd_hw_parse(buf, strlen(buf), &back, &err), AFD_OK);
    assert_true(same_table(&back.decode_table, &h.decode_table));
    assert_true(same_table(&back.prefill_table, &h.prefill_table));
    /* copied into a file in s: every time / 1000 */
    afd_hw_init(&s);
    snprintf(s.unit, sizeof s.unit, "s");
    assert_int_equal(afd_hw_copy_laws(&s, &h), AFD_OK);
    assert_close(s.decode_table.t[3], 0.0405, 1e-15, 0);
    assert_close(s.prefill_table.t[0], 0.0215, 1e-15, 0);
    assert_true(s.decode_table.s[1] == 1000);
    /* too small a buffer */
    assert_int_equal(afd_hw_format(&h, NULL, buf, strlen(buf) - 3), AFD_ERANGE);
}

/* A wrong table is an error at its line, naming what is wrong. */
static void table_errors(void **state)
{
    static const char laws[] = "alpha_a = 1e-3\nbeta_a = 0.5\nalpha_f = 2e-3\nbeta_f = 1\n"
                               "alpha_c = 0\nbeta_c = 0.25\nunit = ms\n";
    static const struct {
        const char *line, *msg;
    } cases[] = {
        {"decode_table = 2 2 1 4 100 1000 31 32 35\n", "decode_table: fewer numbers"},
        {"decode_table = 1 1 1 1 5 6\n", "decode_table: more numbers"},
        {"prefill_table = 0 1 1 5\n", "prefill_table: nb and ns must be integers in [1, 96]"},
        {"prefill_table = 97 1\n", "prefill_table: nb and ns must be integers in [1, 96]"},
        {"prefill_table = 2.5 1\n", "prefill_table: nb and ns must be integers in [1, 96]"},
        {"decode_table = 96 96\n", "decode_table: nb ns must be at most 4096"},
        {"decode_table = 2 1 4 1 10 5 6\n", "decode_table: the batches must be finite, >= 1"},
        {"decode_table = 1 2 1 10 10 5 6\n", "decode_table: the contexts must be finite, >= 1"},
        {"decode_table = 1 2 1 0.5 10 5 6\n", "decode_table: the contexts must be finite, >= 1"},
        {"decode_table = 1 1 1 1 -5\n", "decode_table: the times must be finite and > 0"},
        {"decode_table = 1 1 1 1 0\n", "decode_table: the times must be finite and > 0"},
        {"decode_table = 1 1 1 1 fast\n", "decode_table: not a number"},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        afd_hw h;
        afd_error err;
        snprintf(text, sizeof text, "%s%s", laws, cases[i].line);
        assert_int_equal(afd_hw_parse(text, strlen(text), &h, &err), AFD_EPARSE);
        assert_int_equal(err.line, 8);
        if (strstr(err.text, cases[i].msg) != err.text) {
            print_error("case %zu: '%s' does not start with '%s'\n", i, err.text, cases[i].msg);
            fail();
        }
        assert_false(afd_hw_has_decode_table(&h));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(preset_is_table3),  cmocka_unit_test(format_parse_round_trip),
        cmocka_unit_test(parse_dialect),     cmocka_unit_test(parse_errors),
        cmocka_unit_test(read_file_errors),  cmocka_unit_test(derive_deepseek),
        cmocka_unit_test(derive_table3),     cmocka_unit_test(serving_laws),
        cmocka_unit_test(dims_from_model),   cmocka_unit_test(specs_ranges),
        cmocka_unit_test(seconds_to_unit),   cmocka_unit_test(specs_from_device),
        cmocka_unit_test(copy_laws),         cmocka_unit_test(tensor_parallel),
        cmocka_unit_test(decode_batch_max),  cmocka_unit_test(afd_tensor_parallel),
        cmocka_unit_test(one_reader),        cmocka_unit_test(plausible_ranges),
        cmocka_unit_test(table_interpolation), cmocka_unit_test(table_file),
        cmocka_unit_test(table_errors),
    };
    RUN_TESTS(tests);
}

/* test_stages.c: the stage-list parser, the decomposition of a serving
 * pipeline and its simulator, against exact queues written out here
 * (Pollaczek-Khinchine, Erlang C, Jackson's product form for tandem M/M/1)
 * and the project's exact M/D/c. */
#include <config.h>

#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "test_util.h"

#include "afd_queue.h"
#include "afd_stages.h"
#include "afd_stages_sim.h"

static afd_stages parse_ok(const char *text)
{
    afd_stages s;
    afd_error err;
    afd_status st = afd_stages_parse(text, strlen(text), &s, &err);
    if (st != AFD_OK)
        fail_msg("parse: %s (line %ld, column %ld)", err.text, err.line, err.column);
    return s;
}

static void parse_err(const char *text, afd_status want, long line, long col, const char *needle)
{
    afd_stages s;
    afd_error err;
    afd_status st = afd_stages_parse(text, strlen(text), &s, &err);
    if (st != want || err.line != line || err.column != col || strstr(err.text, needle) == NULL)
        fail_msg("'%s': status %d, line %ld, column %ld, '%s'; expected %d at %ld:%ld with '%s'",
                 text, st, err.line, err.column, err.text, want, line, col, needle);
    assert_null(s.stage);
    assert_int_equal(s.n, 0);
}

static void parser(void **state)
{
    afd_stages s;
    (void)state;
    s = parse_ok(
        "{\"stages\": [{\"name\": \"rag\", \"servers\": 2, \"service\": {\"const\": 0.4}},\n"
        " {\"service\": {\"exp\": \"150ms\"}, \"repeat\": 3, \"routing\": \"jsq\"},\n"
        " {\"name\": \"p\", \"servers\": 4, \"service\": {\"affine\": {\"a\": \"20ms\","
        " \"b\": 1e-4, \"tokens\": \"output\"}},\n"
        "  \"routing\": {\"heavy-light\": {\"split\": 2048, \"light\": 1}}},\n"
        " {\"servers\": 1, \"service\": {\"latency\": \"decode\"}, \"routing\": \"rr\"}]}");
    assert_int_equal(s.n, 4);
    assert_string_equal(s.stage[0].name, "rag");
    assert_int_equal(s.stage[0].servers, 2);
    assert_int_equal(s.stage[0].kind, AFD_SERVICE_CONST);
    assert_close(s.stage[0].time, 0.4, 0, 0);
    assert_string_equal(s.stage[1].name, "stage2");
    assert_close(s.stage[1].time, 0.15, 1e-15, 0);
    assert_int_equal(s.stage[1].repeat, 3);
    assert_int_equal(s.stage[1].routing, AFD_ROUTE_JSQ);
    assert_int_equal(s.stage[1].line, 2);
    assert_int_equal(s.stage[1].column, 2);
    assert_int_equal(s.stage[2].kind, AFD_SERVICE_AFFINE);
    assert_close(s.stage[2].a, 0.02, 1e-15, 0);
    assert_int_equal(s.stage[2].output_tokens, 1);
    assert_int_equal(s.stage[2].routing, AFD_ROUTE_HEAVY_LIGHT);
    assert_close(s.stage[2].split, 2048, 0, 0);
    assert_int_equal(s.stage[2].light_servers, 1);
    assert_int_equal(s.stage[3].kind, AFD_SERVICE_LATENCY);
    assert_int_equal(s.stage[3].decode_phase, 1);
    assert_int_equal(s.stage[3].routing, AFD_ROUTE_RR);
    assert_true(afd_stage_needs_tokens(&s.stage[2]));
    assert_false(afd_stage_needs_tokens(&s.stage[1]));
    afd_stages_free(&s);

    /* syntax: jansson's position */
    parse_err("{\"stages\": [\n  {\"servers\": 2,,}]}", AFD_EPARSE, 2, 17, "expected");
    /* values: the position of the offending value */
    parse_err("{\"stages\": [\n  {\"servers\": 0, \"service\": {\"const\": 1}}]}", AFD_EINVAL, 2,
              15, "servers must be an integer in [1, 100000]");
    parse_err("{\"stages\": [{\"service\": {\"const\": 1, \"exp\": 2}}]}", AFD_EINVAL, 1, 25,
              "exactly one of");
    parse_err("{\"stages\": [{\"service\": {\"const\": \"2parsecs\"}}]}", AFD_EPARSE, 1, 35,
              "not a time");
    parse_err("{\"stages\": [{\"service\": {\"const\": 1}, \"servrs\": 2}]}", AFD_EINVAL, 1, 49,
              "unknown key 'servrs'");
    parse_err("{\"stages\": [{\"service\": {\"const\": 1}, \"routing\": \"random\"}]}", AFD_EINVAL,
              1, 50, "unknown routing 'random'");
    parse_err("{\"stages\": [{\"servers\": 3, \"service\": {\"const\": 1},\n"
              "  \"routing\": {\"heavy-light\": {\"split\": 10, \"light\": 3}}}]}",
              AFD_EINVAL, 2, 53, "light must be an integer in [1, 2]");
    parse_err("{\"stages\": [{\"service\": {\"exp\": 0}}]}", AFD_EINVAL, 1, 33, "mean must be > 0");
    parse_err("{\"stages\": [{\"name\": \"a\", \"service\": {\"exp\": 1}},\n"
              " {\"name\": \"a\", \"service\": {\"exp\": 1}}]}",
              AFD_EINVAL, 2, 11, "two stages are named 'a'");
    parse_err("{\"stages\": []}", AFD_EINVAL, 1, 12, "1 to 64 stages");
    parse_err("[1]", AFD_EPARSE, 1, 1, "must be an object");
    /* jansson's messages in the project's words, the input's bytes escaped
     * (the near-text of a string cut by a raw line break holds "\xc3\xa9";
     * jansson's column is that of the last character before the offending
     * one). */
    parse_err("{\"stages\": [{\"name\": \"\xc3\xa9\n\"}]}", AFD_EPARSE, 1, 23,
              "a line break inside a string near '\"\\xc3\\xa9'");
    parse_err("{\"stages\": [{\"name\": \"a\x01\"}]}", AFD_EPARSE, 1, 23,
              "a control character inside a string: 0x1 near '\"a'");
    parse_err("{\"stages\": [{\"name\": \"\\u0000\"}]}", AFD_EPARSE, 1, 29,
              "\\u0000 (a NUL character) in a string near '\"\\x5cu0000\"'");
    parse_err("{\"stages\": [{\"name\": \"x\"}]}", AFD_EINVAL, 1, 13, "has no service");
    parse_err("{\"stages\": [{\"service\": {\"affine\": {\"a\": 1}}}]}", AFD_EINVAL, 1, 36,
              "needs b");
}

/* Erlang C by its definition (sums of a^k/k!), independently of the library. */
static double erlang_c(double a, int c)
{
    double term = 1, sum = 0, last;
    int k;
    for (k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    last = term * c / (c - a);
    return last / (sum + last);
}

/* ---- one stage: M/D/c exact, M/M/c exact, M/G/1 Pollaczek-Khinchine */

static void one_stage_exact(void **state)
{
    static const int cs[] = {1, 2, 5};
    afd_stage_result r[2];
    size_t k;
    (void)state;
    for (k = 0; k < 3; k++) {
        char doc[160];
        afd_stages s;
        afd_pipeline_problem pb = {0};
        afd_mdc *q;
        double D = 0.4, lambda = 0.8 * cs[k] / D;
        snprintf(doc, sizeof doc,
                 "{\"stages\": [{\"servers\": %d, \"service\": {\"const\": 0.4}}]}", cs[k]);
        s = parse_ok(doc);
        pb.stages = &s;
        pb.lambda = lambda;
        pb.p = 0.9;
        assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
        assert_int_equal(afd_mdc_alloc(lambda, D, cs[k], &q), AFD_OK);
        assert_close(r[0].wait_mean, afd_mdc_wq(q), 0, 0);
        assert_close(r[0].wait_p, afd_mdc_wait_quantile(q, 0.9), 0, 0);
        assert_close(r[0].sojourn_p, afd_mdc_wait_quantile(q, 0.9) + D, 1e-15, 0);
        assert_close(r[1].sojourn_mean, afd_mdc_wq(q) + D, 1e-15, 0);
        assert_int_equal(r[0].exact, 1);
        if (cs[k] == 1) /* Pollaczek-Khinchine: rho D / (2 (1 - rho)) */
            assert_close(r[0].wait_mean, 0.8 * D / (2 * 0.2), 1e-12, 0);
        afd_mdc_free(q);
        afd_stages_free(&s);

        /* M/M/c: Wq = C m / (c - a); P(W > t) = C e^{-(c/m - lambda) t} */
        snprintf(doc, sizeof doc, "{\"stages\": [{\"servers\": %d, \"service\": {\"exp\": 0.4}}]}",
                 cs[k]);
        s = parse_ok(doc);
        assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
        {
            double a = lambda * D, C = erlang_c(a, cs[k]);
            assert_close(r[0].wait_mean, C * D / (cs[k] - a), 1e-12, 0);
            assert_close(r[0].wait_p, log(C / 0.1) / (cs[k] / D - lambda), 1e-9, 0);
            assert_close(r[0].cd2, 1, 0, 0); /* Burke */
        }
        afd_stages_free(&s);
    }
}

static void mg1_pollaczek_khinchine(void **state)
{
    /* affine service over four requests: S = 0.01 + 0.001 P */
    static const uint64_t P[] = {10, 50, 200, 700}, Dd[] = {1, 1, 1, 1};
    afd_stages s =
        parse_ok("{\"stages\": [{\"service\": {\"affine\": {\"a\": 0.01, \"b\": 0.001}}}]}");
    afd_pipeline_problem pb = {0};
    afd_stage_result r[2];
    double m = 0, m2 = 0, lambda = 2.5;
    size_t k;
    (void)state;
    for (k = 0; k < 4; k++) {
        double x = 0.01 + 0.001 * (double)P[k];
        m += x / 4;
        m2 += x * x / 4;
    }
    pb.stages = &s;
    pb.lambda = lambda;
    pb.p = 0.9;
    pb.requests = (afd_stage_requests){P, Dd, 4};
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
    assert_close(r[0].service_mean, m, 1e-14, 0);
    assert_close(r[0].rho, lambda * m, 1e-14, 0);
    assert_close(r[0].wait_mean, lambda * m2 / (2 * (1 - lambda * m)), 1e-12, 0);
    /* without requests: an input error naming the stage */
    pb.requests.n = 0;
    {
        afd_error err;
        assert_int_equal(afd_pipeline_solve(&pb, r, &err), AFD_EINVAL);
        assert_non_null(strstr(err.text, "give a trace"));
        assert_true(isnan(r[0].wait_mean));
    }
    afd_stages_free(&s);
}

/* ---- two exponential stages in tandem: Jackson's product form */

struct hypo {
    double a, b, p;
};

static double hypo_cdf(double t, void *arg) /* Exp(a) + Exp(b), a != b */
{
    const struct hypo *h = arg;
    return 1 - (h->b * exp(-h->a * t) - h->a * exp(-h->b * t)) / (h->b - h->a) - h->p;
}

static void jackson_tandem(void **state)
{
    afd_stages s = parse_ok("{\"stages\": [{\"name\": \"a\", \"service\": {\"exp\": 0.1}},"
                            " {\"name\": \"b\", \"service\": {\"exp\": 0.15}}]}");
    afd_pipeline_problem pb = {0};
    afd_stage_result r[3];
    afd_stages_sim_stat sim[3];
    afd_stages_sim_options o = {20000, 2000, 16, 7, 0};
    double lambda = 5, mean;
    struct hypo h = {10 - 5, 1 / 0.15 - 5, 0.9};
    (void)state;
    pb.stages = &s;
    pb.lambda = lambda;
    pb.p = 0.9;
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
    /* product form: each stage M/M/1 with sojourn Exp(mu - lambda), independent */
    mean = 1 / (10 - 5.0) + 1 / (1 / 0.15 - 5);
    assert_close(r[2].sojourn_mean, mean, 1e-14, 0);
    assert_close(r[1].ca2, 1, 0, 0);
    {
        gsl_root_fsolver *sv = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
        gsl_function f = {hypo_cdf, &h};
        double lo = 0, hi = 10, root = 0;
        int it;
        gsl_root_fsolver_set(sv, &f, lo, hi);
        for (it = 0; it < 100; it++) {
            gsl_root_fsolver_iterate(sv);
            root = gsl_root_fsolver_root(sv);
            lo = gsl_root_fsolver_x_lower(sv);
            hi = gsl_root_fsolver_x_upper(sv);
            if (gsl_root_test_interval(lo, hi, 0, 1e-13) == GSL_SUCCESS)
                break;
        }
        gsl_root_fsolver_free(sv);
        /* the grid of 4096 cells adds at most one cell per stage */
        assert_close(r[2].sojourn_p, root, 2e-3, 0);
    }
    /* the simulator within 5 standard errors of the product form */
    assert_int_equal(afd_stages_simulate(&pb, &o, sim, NULL), AFD_OK);
    assert_within_se(sim[2].sojourn_mean, mean, sim[2].sojourn_mean_se, 5);
    assert_within_se(sim[0].wait_mean, 0.5 * 0.1 / 0.5, sim[0].wait_mean_se, 5);
    assert_within_se(sim[1].wait_mean, 0.75 * 0.15 / 0.25, sim[1].wait_mean_se, 5);
    assert_within_se(sim[1].rho, 0.75, sim[1].rho_se, 5);
    afd_stages_free(&s);
}

/* ---- the simulator: M/D/c exact, routing rules, thread counts */

static void simulator_md_c(void **state)
{
    afd_stages s = parse_ok("{\"stages\": [{\"servers\": 3, \"service\": {\"const\": 0.4}}]}");
    afd_pipeline_problem pb = {0};
    afd_stages_sim_stat sim[2];
    afd_stages_sim_options o = {20000, 2000, 16, 3, 0};
    afd_mdc *q;
    (void)state;
    pb.stages = &s;
    pb.lambda = 0.85 * 3 / 0.4;
    pb.p = 0.9;
    assert_int_equal(afd_mdc_alloc(pb.lambda, 0.4, 3, &q), AFD_OK);
    assert_int_equal(afd_stages_simulate(&pb, &o, sim, NULL), AFD_OK);
    assert_within_se(sim[0].wait_mean, afd_mdc_wq(q), sim[0].wait_mean_se, 5);
    assert_within_se(sim[0].wait_p, afd_mdc_wait_quantile(q, 0.9), sim[0].wait_p_se, 5);
    afd_mdc_free(q);
    afd_stages_free(&s);
}

static void routing_rules(void **state)
{
    /* least-work gives the fcfs waits exactly (same seed, same draws) */
    afd_stages f = parse_ok("{\"stages\": [{\"servers\": 3, \"service\": {\"exp\": 0.5}}]}");
    afd_stages lw = parse_ok("{\"stages\": [{\"servers\": 3, \"service\": {\"exp\": 0.5},"
                             " \"routing\": \"least-work\"}]}");
    afd_stages rr = parse_ok("{\"stages\": [{\"servers\": 3, \"service\": {\"exp\": 0.5},"
                             " \"routing\": \"rr\"}]}");
    afd_stages jsq = parse_ok("{\"stages\": [{\"servers\": 3, \"service\": {\"exp\": 0.5},"
                              " \"routing\": \"jsq\"}]}");
    afd_pipeline_problem pb = {0};
    afd_stages_sim_stat a[2], b[2], c[2], d[2];
    afd_stages_sim_options o = {5000, 500, 8, 5, 0};
    (void)state;
    pb.lambda = 4.8; /* rho = 0.8 */
    pb.p = 0.9;
    pb.stages = &f;
    assert_int_equal(afd_stages_simulate(&pb, &o, a, NULL), AFD_OK);
    pb.stages = &lw;
    assert_int_equal(afd_stages_simulate(&pb, &o, b, NULL), AFD_OK);
    assert_close(b[0].wait_mean, a[0].wait_mean, 0, 0);
    /* a central queue never does worse than dispatching at arrival:
     * fcfs < jsq < rr in the mean wait (rr: three M-thinned queues) */
    pb.stages = &jsq;
    assert_int_equal(afd_stages_simulate(&pb, &o, c, NULL), AFD_OK);
    pb.stages = &rr;
    assert_int_equal(afd_stages_simulate(&pb, &o, d, NULL), AFD_OK);
    assert_true(a[0].wait_mean < c[0].wait_mean);
    assert_true(c[0].wait_mean < d[0].wait_mean);
    /* rr: each server an E3/M/1 queue at rho 0.8; the closed form's GI/G/1
     * with c_a^2 = 1/3 is Whitt's approximation: within 15% */
    {
        afd_stage_result r[2];
        pb.stages = &rr;
        assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
        assert_close(r[0].wait_mean, d[0].wait_mean, 0.15, 0);
    }
    afd_stages_free(&f);
    afd_stages_free(&lw);
    afd_stages_free(&rr);
    afd_stages_free(&jsq);
}

static void heavy_light_exact(void **state)
{
    /* const service, Poisson thinning: two exact M/D/k pools */
    static const uint64_t P[] = {10, 20, 30, 5000}, Dd[] = {1, 1, 1, 1};
    afd_stages s = parse_ok("{\"stages\": [{\"servers\": 5, \"service\": {\"const\": 0.5},"
                            " \"routing\": {\"heavy-light\": {\"split\": 100, \"light\": 3}}}]}");
    afd_pipeline_problem pb = {0};
    afd_stage_result r[2];
    afd_stages_sim_stat sim[2];
    afd_stages_sim_options o = {20000, 2000, 8, 11, 0};
    afd_mdc *ql, *qh;
    double lambda = 6, wl, wh;
    (void)state;
    pb.stages = &s;
    pb.lambda = lambda;
    pb.p = 0.9;
    pb.requests = (afd_stage_requests){P, Dd, 4};
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
    assert_int_equal(afd_mdc_alloc(0.75 * lambda, 0.5, 3, &ql), AFD_OK);
    assert_int_equal(afd_mdc_alloc(0.25 * lambda, 0.5, 2, &qh), AFD_OK);
    wl = afd_mdc_wq(ql);
    wh = afd_mdc_wq(qh);
    assert_close(r[0].wait_mean, 0.75 * wl + 0.25 * wh, 1e-12, 0);
    assert_int_equal(afd_stages_simulate(&pb, &o, sim, NULL), AFD_OK);
    assert_within_se(sim[0].wait_mean, 0.75 * wl + 0.25 * wh, sim[0].wait_mean_se, 5);
    afd_mdc_free(ql);
    afd_mdc_free(qh);
    /* one pool overloaded: unstable, named */
    pb.lambda = 9;
    {
        afd_error err;
        assert_int_equal(afd_pipeline_solve(&pb, r, &err), AFD_EUNSTABLE);
        assert_non_null(strstr(err.text, "light pool"));
    }
    afd_stages_free(&s);
}

static void thread_count_invariance(void **state)
{
    afd_stages s = parse_ok("{\"stages\": [{\"servers\": 2, \"service\": {\"exp\": 0.3},"
                            " \"repeat\": 2, \"routing\": \"jsq\"},"
                            " {\"servers\": 1, \"service\": {\"const\": 0.1}}]}");
    afd_pipeline_problem pb = {0};
    afd_stages_sim_stat a[3], b[3];
    afd_stages_sim_options o = {2000, 100, 6, 9, 0};
    (void)state;
    pb.stages = &s;
    pb.lambda = 2;
    pb.p = 0.9;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    assert_int_equal(afd_stages_simulate(&pb, &o, a, NULL), AFD_OK);
#ifdef _OPENMP
    omp_set_num_threads(3);
#endif
    assert_int_equal(afd_stages_simulate(&pb, &o, b, NULL), AFD_OK);
    assert_memory_equal(a, b, sizeof a);
    /* an explicit team size, whatever OpenMP's default */
    o.threads = 2;
    assert_int_equal(afd_stages_simulate(&pb, &o, b, NULL), AFD_OK);
    assert_memory_equal(a, b, sizeof a);
    o.threads = 256;
    assert_int_equal(afd_stages_simulate(&pb, &o, b, NULL), AFD_OK);
    assert_memory_equal(a, b, sizeof a);
    afd_stages_free(&s);
}

static void repeat_is_a_sum(void **state)
{
    /* repeat 3 of exp(0.1) on one server: M/E3/1, c_s^2 = 1/3:
     * Pollaczek-Khinchine Wq = rho m (1 + 1/3) / (2 (1 - rho)) */
    afd_stages s = parse_ok("{\"stages\": [{\"service\": {\"exp\": 0.1}, \"repeat\": 3}]}");
    afd_pipeline_problem pb = {0};
    afd_stage_result r[2];
    double m = 0.3, lambda = 2.5, rho = lambda * m;
    (void)state;
    pb.stages = &s;
    pb.lambda = lambda;
    pb.p = 0.9;
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
    assert_close(r[0].service_mean, m, 1e-15, 0);
    assert_close(r[0].service_scv, 1.0 / 3, 1e-12, 0);
    assert_close(r[0].wait_mean, rho * m * (4.0 / 3) / (2 * (1 - rho)), 1e-12, 0);
    /* overloaded: unstable */
    pb.lambda = 4;
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_EUNSTABLE);
    afd_stages_free(&s);
}

/* ---- deterministic tandems: the spacing rule */

struct md1_arg {
    double lambda, D, p;
};

/* M/D/1 waiting-time distribution, Erlang's formula (Tijms, A First Course
 * in Stochastic Models, 2003, eq. (5.3.9) for c = 1):
 *   P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/D)} e^{lambda (t - kD)}
 *               (-lambda (t - kD))^k / k!  */
static double md1_wait_cdf(double t, void *arg)
{
    const struct md1_arg *a = arg;
    double sum = 0, rho = a->lambda * a->D;
    int k;
    for (k = 0; k <= (int)floor(t / a->D); k++) {
        double u = a->lambda * (t - k * a->D), term = exp(u);
        int j;
        for (j = 1; j <= k; j++)
            term *= -u / j;
        sum += term;
    }
    return (1 - rho) * sum - a->p;
}

static void deterministic_tandem(void **state)
{
    /* a: 1 x 0.1 s, b: 2 x 0.18 s, c: 1 x 0.08 s at lambda = 6.  a is M/D/1;
     * its departures are at least 0.1 s apart, so the request before any
     * arrival at b came >= 0.1 s earlier and the second before >= 0.2 s >=
     * 0.18 s earlier: one of b's two servers is always free; c (0.08 <= 0.1)
     * likewise.  The sojourn is the M/D/1 sojourn at a plus 0.18 + 0.08:
     * mean 0.1 + rho D / (2 (1 - rho)) + 0.26 = 0.175 + 0.26 = 0.435 s. */
    afd_stages s = parse_ok("{\"stages\":[{\"name\":\"a\",\"servers\":1,\"service\":{\"const\":0.1}},"
                            "{\"name\":\"b\",\"servers\":2,\"service\":{\"const\":0.18}},"
                            "{\"name\":\"c\",\"servers\":1,\"service\":{\"const\":0.08}}]}");
    afd_pipeline_problem pb = {0};
    afd_stage_result r[4];
    afd_stages_sim_stat sim[4];
    afd_stages_sim_options o = {20000, 2000, 16, 11, 0};
    struct md1_arg a = {6, 0.1, 0.9};
    double wp90, lo = 0, hi = 1;
    int it;
    (void)state;
    /* the M/D/1 wait's 90th percentile by bisection on Erlang's formula
     * (continuous above the atom 1 - rho = 0.4 at 0) */
    for (it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (md1_wait_cdf(mid, &a) >= 0)
            hi = mid;
        else
            lo = mid;
    }
    wp90 = hi;
    pb.stages = &s;
    pb.lambda = 6;
    pb.p = 0.9;
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
    assert_close(r[3].sojourn_mean, 0.435, 1e-12, 0);
    assert_close(r[3].sojourn_p, wp90 + 0.1 + 0.18 + 0.08, 1e-9, 0);
    assert_close(r[1].wait_mean, 0, 0, 0);
    assert_close(r[2].wait_mean, 0, 0, 0);
    assert_close(r[2].ca2, 0.64, 1e-12, 0); /* a's departures, QNA: 1 - rho^2 */
    assert_int_equal(r[3].exact, 1);
    assert_int_equal(afd_stages_simulate(&pb, &o, sim, NULL), AFD_OK);
    assert_within_se(sim[3].sojourn_mean, 0.435, sim[3].sojourn_mean_se, 5);
    assert_within_se(sim[3].sojourn_p, wp90 + 0.36, sim[3].sojourn_p_se, 5);
    assert_close(sim[1].wait_mean, 0, 0, 0);
    assert_close(sim[2].wait_mean, 0, 0, 0);
    afd_stages_free(&s);

    /* a waiting stage passes its own spacing on: b (1 x 0.15 s behind a
     * 1 x 0.1 s at lambda = 5) waits, but releases requests >= 0.15 s apart,
     * so c (1 x 0.14 s) never waits; b's servers taking 0.22 s (2 of them,
     * > 2 x 0.1) do wait */
    s = parse_ok("{\"stages\":[{\"servers\":1,\"service\":{\"const\":0.1}},"
                 "{\"servers\":1,\"service\":{\"const\":0.15}},"
                 "{\"servers\":1,\"service\":{\"const\":0.14}}]}");
    pb.lambda = 5;
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
    assert_true(r[1].wait_mean > 0.01);
    assert_close(r[2].wait_mean, 0, 0, 0);
    assert_int_equal(afd_stages_simulate(&pb, &o, sim, NULL), AFD_OK);
    assert_true(sim[1].wait_mean > 0.01);
    assert_close(sim[2].wait_mean, 0, 0, 0);
    afd_stages_free(&s);
    s = parse_ok("{\"stages\":[{\"servers\":1,\"service\":{\"const\":0.1}},"
                 "{\"servers\":2,\"service\":{\"const\":0.22}}]}");
    pb.lambda = 6;
    assert_int_equal(afd_pipeline_solve(&pb, r, NULL), AFD_OK);
    assert_true(r[1].wait_mean > 0);
    assert_int_equal(r[2].exact, 0);
    assert_int_equal(afd_stages_simulate(&pb, &o, sim, NULL), AFD_OK);
    assert_true(sim[1].wait_mean > 5 * sim[1].wait_mean_se);
    afd_stages_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parser),
        cmocka_unit_test(one_stage_exact),
        cmocka_unit_test(mg1_pollaczek_khinchine),
        cmocka_unit_test(jackson_tandem),
        cmocka_unit_test(simulator_md_c),
        cmocka_unit_test(routing_rules),
        cmocka_unit_test(heavy_light_exact),
        cmocka_unit_test(thread_count_invariance),
        cmocka_unit_test(repeat_is_a_sum),
        cmocka_unit_test(deterministic_tandem),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}

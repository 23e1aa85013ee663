/* fuzz_stages.c: libFuzzer target for the stage-list reader of afdkit
 * pipeline (afd_stages_parse), the file path to it (afd_stages_read), and
 * the service times of an accepted list (afd_stage_service).
 * Invariants: the file gives what the text gives; a refused text leaves no
 * stages and a one-line message; an accepted one holds 1 to 64 stages with
 * distinct names and the values afd_stages.h allows (servers >= 1, repeat
 * >= 1, times finite and >= 0, an exponential mean > 0, a light pool of 1 to
 * servers - 1, a position in the document), says which stages need the
 * requests' tokens as afd_stages.h defines it, and gives service times >= 0.
 * (The decomposition itself takes seconds per input under the sanitizers:
 * too slow to fuzz.) */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int finite_nonneg(double x)
{
    return x >= 0 && isfinite(x);
}

static void check_stage(const afd_stage *st)
{
    if (memchr(st->name, '\0', sizeof st->name) == NULL)
        abort();
    if (st->servers < 1 || st->repeat < 1 || st->line < 1 || st->column < 1)
        abort();
    switch (st->kind) {
    case AFD_SERVICE_CONST:
        if (!finite_nonneg(st->time))
            abort();
        break;
    case AFD_SERVICE_EXP:
        if (!(st->time > 0) || !isfinite(st->time))
            abort();
        break;
    case AFD_SERVICE_AFFINE:
        if (!finite_nonneg(st->a) || !finite_nonneg(st->b))
            abort();
        break;
    case AFD_SERVICE_LATENCY:
        break;
    default:
        abort();
    }
    if (st->routing == AFD_ROUTE_HEAVY_LIGHT &&
        (st->light_servers < 1 || st->light_servers >= st->servers || !(st->split >= 0)))
        abort();
    if (st->routing > AFD_ROUTE_HEAVY_LIGHT)
        abort();
}

static int same_stage(const afd_stage *a, const afd_stage *b)
{
    return strcmp(a->name, b->name) == 0 && a->servers == b->servers && a->kind == b->kind &&
           memcmp(&a->time, &b->time, sizeof a->time) == 0 &&
           memcmp(&a->a, &b->a, sizeof a->a) == 0 && memcmp(&a->b, &b->b, sizeof a->b) == 0 &&
           a->output_tokens == b->output_tokens && a->decode_phase == b->decode_phase &&
           a->routing == b->routing && memcmp(&a->split, &b->split, sizeof a->split) == 0 &&
           a->light_servers == b->light_servers && a->split_output == b->split_output &&
           a->repeat == b->repeat && a->line == b->line && a->column == b->column;
}

/* Each stage's service time for a few requests, with a latency file that
 * has both laws: defined (not NaN) and >= 0 (it may overflow to infinity:
 * the solvers refuse such a stage as unstable). */
static void services(const afd_stages *s)
{
    static const double prompt[3] = {0, 100, 1e9}, decode[3] = {1, 20, 1e6};
    afd_hw hw;
    size_t i, k;

    if (afd_hw_preset("paper-910c", &hw) != AFD_OK)
        abort();
    hw.prefill_a = 5, hw.prefill_b = 0.01, hw.prefill_c = 1e-6;
    hw.decode_beta = 10, hw.decode_gamma = 0.5, hw.decode_alpha = 1e-4;
    for (i = 0; i < s->n; i++) {
        int tokens = afd_stage_needs_tokens(&s->stage[i]);
        if (tokens != (s->stage[i].kind == AFD_SERVICE_AFFINE ||
                       s->stage[i].kind == AFD_SERVICE_LATENCY ||
                       s->stage[i].routing == AFD_ROUTE_HEAVY_LIGHT))
            abort();
        for (k = 0; k < 3; k++) {
            double t;
            if (afd_stage_service(&s->stage[i], &hw, 1e-6, prompt[k], decode[k], &t) != AFD_OK ||
                !(t >= 0))
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    afd_stages s, f;
    afd_error err, ferr;
    afd_status st, fst;
    size_t i, k;

    st = afd_stages_parse((const char *)data, size, &s, &err);
    fst = afd_stages_read(fuzz_temp_file(data, size), &f, &ferr);
    if (st != AFD_OK) {
        if (s.n != 0 || s.stage != NULL)
            abort();
        fuzz_check_error(&err);
        fuzz_same_error(st, &err, fst, &ferr);
        return 0;
    }
    if (fst != AFD_OK || f.n != s.n)
        abort();
    if (s.n < 1 || s.n > 64)
        abort();
    for (i = 0; i < s.n; i++) {
        check_stage(&s.stage[i]);
        if (!same_stage(&s.stage[i], &f.stage[i]))
            abort();
        for (k = 0; k < i; k++)
            if (strcmp(s.stage[k].name, s.stage[i].name) == 0)
                abort();
    }
    services(&s);
    afd_stages_free(&s);
    afd_stages_free(&f);
    return 0;
}

/* policy_taichi.c: P-heavy and D-heavy chunked-prefill instances with
 * length-aware prefill routing and flowing decode (TaiChi, Sections
 * 3.1-3.4, Algorithms 1 and 2).  The configuration and the behaviour are
 * described in afd_serve_taichi.h.
 *
 * An instance's iteration is the chunked policy's (policy_chunked.c), in
 * the same order of operations, so that with uniform instances and one of
 * them the two policies produce the same run: the running decodes take one
 * token each, the prompts being prefilled take the rest of the chunk in
 * order, and new prompts are admitted from the instance's own queue while the
 * sequences number fewer than decode_bmax and the prompts already admitted
 * leave budget unused.  Decodes handed over or flowed in wait for a slot
 * and are admitted before new prompts.  Each running decode is kept in an
 * array (moved out by swap-remove when it flows), so an iteration costs
 * O(b); the KV tokens are counted exactly as serve_decoder counts them.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "afd_serve_taichi.h"
#include "serve_internal.h"

enum { EV_ITER_DONE = 1, EV_MOVED };

typedef struct tc_req {
    uint32_t gen;   /* tokens produced so far, the first by the prefill */
    uint32_t ref_n; /* gen at the first token or the last backflow */
    double ref_t;   /* time of the first token or the last backflow */
    unsigned to;    /* instance a moving decode goes to */
} tc_req;

typedef struct tc_inst {
    int heavy;                  /* P-heavy */
    unsigned chunk;             /* 0: no prefill here */
    serve_fifo q;               /* routed here, prefill not started */
    double q_tokens, q_sq;      /* their prompt tokens and squared prompts */
    serve_fifo pre;             /* being prefilled (request word = tokens done) */
    double pre_pending, pre_sq; /* prompt tokens of pre left, and P^2 - done^2 */
    double iter_tokens;         /* prompt tokens of the iteration under way */
    uint32_t *run;              /* running decodes */
    unsigned nrun;
    double kv;              /* KV tokens of the running decodes (as serve_decoder) */
    serve_fifo wait;        /* decodes waiting for a slot (or on their way here) */
    double wait_kv, pre_kv; /* KV of those, of the prompt tokens prefilled */
    uint32_t *done;         /* prefills ending with this iteration */
    unsigned n_done;
    int busy;
    double iter_end;
    double link_free;
} tc_inst;

typedef struct taichi {
    afd_serve_config c;
    afd_serve_taichi_config t;
    afd_serve_taichi_counts cnt;
    unsigned n;  /* instances, P-heavy first */
    int uniform; /* nothing moves */
    tc_inst *in;
    tc_req *rq;
    size_t rq_cap;
} taichi;

static double mem(const tc_inst *in)
{
    return in->kv + in->wait_kv + in->pre_kv;
}

static void fini(void *state)
{
    taichi *s = state;
    unsigned i;
    if (s == NULL)
        return;
    if (s->t.counts != NULL)
        *s->t.counts = s->cnt;
    if (s->in != NULL)
        for (i = 0; i < s->n; i++) {
            serve_fifo_free(&s->in[i].q);
            serve_fifo_free(&s->in[i].pre);
            serve_fifo_free(&s->in[i].wait);
            free(s->in[i].run);
            free(s->in[i].done);
        }
    free(s->in);
    free(s->rq);
    free(s);
}

static afd_status init(afd_serve_engine *e, const afd_serve_config *cfg, void **state,
                       afd_error *err)
{
    const afd_serve_taichi_config *t = cfg->extra;
    taichi *s;
    unsigned i, n, bmax = cfg->decode_bmax;
    (void)e;
    *state = NULL;
    if (t == NULL) {
        snprintf(err->text, sizeof err->text,
                 "taichi needs its configuration (P-heavy and "
                 "D-heavy instances, their chunks)");
        return AFD_EINVAL;
    }
    n = t->p_heavy + t->d_heavy;
    if (n < 1 || t->p_heavy > AFD_SERVE_MAX_INSTANCES || t->d_heavy > AFD_SERVE_MAX_INSTANCES ||
        n > AFD_SERVE_MAX_INSTANCES) {
        snprintf(err->text, sizeof err->text,
                 "taichi needs 1 to %u instances (P-heavy plus D-heavy)", AFD_SERVE_MAX_INSTANCES);
        return AFD_EINVAL;
    }
    if (bmax < 1 || bmax > 65536) {
        snprintf(err->text, sizeof err->text, "the decode batch limit must be in 1..65536");
        return AFD_EINVAL;
    }
    if (t->p_heavy > 0 && t->chunk_p <= bmax) {
        snprintf(err->text, sizeof err->text,
                 "the P-heavy chunk (%u tokens) must exceed the decode batch limit (%u)",
                 t->chunk_p, bmax);
        return AFD_EINVAL;
    }
    if (t->d_heavy > 0 && t->chunk_d != 0 && t->chunk_d <= bmax) {
        snprintf(err->text, sizeof err->text,
                 "the D-heavy chunk (%u tokens) must be 0 (no prefill) or exceed the decode "
                 "batch limit (%u)",
                 t->chunk_d, bmax);
        return AFD_EINVAL;
    }
    if (t->p_heavy == 0 && t->chunk_d == 0) {
        snprintf(err->text, sizeof err->text,
                 "no instance prefills: D-heavy chunk 0 needs P-heavy instances");
        return AFD_EINVAL;
    }
    if (!(t->watermark > 0 && t->watermark <= 1) || !(t->backflow > 0 && t->backflow <= 1)) {
        snprintf(err->text, sizeof err->text,
                 "the watermark and the backflow factor must be in "
                 "(0, 1]");
        return AFD_EINVAL;
    }
    if (!(t->kv_capacity > 0) || !(t->ttft_slo > 0) || !(t->tpot_slo > 0)) {
        snprintf(err->text, sizeof err->text,
                 "the KV capacity and the SLOs must be > 0 (+inf for none)");
        return AFD_EINVAL;
    }
    if (!(cfg->kv_time_per_token >= 0 && isfinite(cfg->kv_time_per_token)) ||
        !(cfg->kv_time_fixed >= 0 && isfinite(cfg->kv_time_fixed))) {
        snprintf(err->text, sizeof err->text, "the KV transfer times must be finite and >= 0");
        return AFD_EINVAL;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    s->c = *cfg;
    s->t = *t;
    s->n = n;
    s->uniform = t->p_heavy == 0 || t->d_heavy == 0 || t->chunk_p == t->chunk_d;
    s->in = calloc(n, sizeof *s->in);
    if (s->in == NULL) {
        fini(s);
        return AFD_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        tc_inst *in = &s->in[i];
        in->heavy = i < t->p_heavy && !s->uniform;
        in->chunk = i < t->p_heavy ? t->chunk_p : t->chunk_d;
        in->run = malloc(bmax * sizeof *in->run);
        in->done = malloc(bmax * sizeof *in->done);
        if (in->run == NULL || in->done == NULL) {
            fini(s);
            return AFD_ENOMEM;
        }
    }
    *state = s;
    return AFD_OK;
}

static tc_req *req_state(taichi *s, afd_serve_engine *e, uint32_t r)
{
    if (r >= s->rq_cap) {
        size_t cap = s->rq_cap ? s->rq_cap : 256;
        tc_req *v;
        while (cap <= r)
            cap *= 2;
        v = realloc(s->rq, cap * sizeof *v);
        if (v == NULL) {
            afd_serve_fail(e, AFD_ENOMEM);
            return NULL;
        }
        s->rq = v;
        s->rq_cap = cap;
    }
    return &s->rq[r];
}

/* The least-used instance of a kind (heavy = 1: P-heavy), or n if none. */
static unsigned least_used(const taichi *s, int heavy)
{
    unsigned i, best = s->n;
    for (i = 0; i < s->n; i++)
        if (s->in[i].heavy == heavy && (best == s->n || mem(&s->in[i]) < mem(&s->in[best])))
            best = i;
    return best;
}

/* Move request r (kv tokens held, already out of its source's accounts)
 * from instance src to instance dst over src's link. */
static void move(taichi *s, afd_serve_engine *e, unsigned src, unsigned dst, uint32_t r, double kv)
{
    tc_inst *a = &s->in[src];
    double now = afd_serve_now(e), start = a->link_free > now ? a->link_free : now;
    double dur = s->c.kv_time_fixed + s->c.kv_time_per_token * kv;
    s->rq[r].to = dst;
    s->in[dst].wait_kv += kv; /* reserved at once, so that moves spread out */
    if (dur > 0)
        a->link_free = start + dur;
    afd_serve_at(e, start + dur, EV_MOVED, r);
}

/* Take the k-th running decode out of instance i; returns its KV tokens. */
static double take(taichi *s, afd_serve_engine *e, unsigned i, unsigned k)
{
    tc_inst *in = &s->in[i];
    uint32_t r = in->run[k];
    double kv = (double)afd_serve_req(e, r)->prompt + s->rq[r].gen;
    in->run[k] = in->run[--in->nrun];
    in->kv -= kv;
    if (in->nrun == 0)
        in->kv = 0;
    return kv;
}

/* Algorithm 1 at the start of an iteration of instance i. */
static void flows(taichi *s, afd_serve_engine *e, unsigned i)
{
    tc_inst *in = &s->in[i];
    double now = afd_serve_now(e);
    unsigned k;
    if (in->heavy) { /* lines 1-3: back to a D-heavy instance near the TPOT SLO */
        double lim = s->t.backflow * s->t.tpot_slo;
        if (!isfinite(lim))
            return;
        for (k = 0; k < in->nrun;) {
            uint32_t r = in->run[k];
            tc_req *x = &s->rq[r];
            if (x->gen > x->ref_n && (now - x->ref_t) / (x->gen - x->ref_n) > lim) {
                unsigned dst = least_used(s, 0);
                double kv = take(s, e, i, k);
                x->ref_t = now;
                x->ref_n = x->gen;
                s->cnt.backflows++;
                move(s, e, i, dst, r, kv);
            } else {
                k++;
            }
        }
    } else { /* lines 4-12: longest first to P-heavy above the watermark */
        double mark = s->t.watermark * s->t.kv_capacity;
        while (mem(in) > mark && in->nrun > 0) {
            unsigned best = 0, dst;
            uint32_t r;
            double kv;
            for (k = 1; k < in->nrun; k++) {
                const tc_req *a = &s->rq[in->run[k]], *b = &s->rq[in->run[best]];
                if (a->gen - a->ref_n > b->gen - b->ref_n)
                    best = k;
            }
            r = in->run[best];
            dst = least_used(s, 1);
            kv = take(s, e, i, best);
            s->cnt.flows++;
            move(s, e, i, dst, r, kv);
        }
    }
}

/* Plan and start the next iteration of instance i, or leave it idle. */
static void next(taichi *s, afd_serve_engine *e, unsigned i)
{
    tc_inst *in = &s->in[i];
    const afd_hw *hw = afd_serve_hw(e);
    unsigned b, budget, k, npre, bmax = s->c.decode_bmax;
    double t = 0;
    int any = 0;
    in->n_done = 0;
    in->busy = 0;
    in->iter_tokens = 0;
    if (!s->uniform)
        flows(s, e, i);
    while (in->wait.n > 0 && in->nrun + in->pre.n < bmax) {
        uint32_t r = serve_fifo_pop(&in->wait);
        double kv = (double)afd_serve_req(e, r)->prompt + s->rq[r].gen;
        in->wait_kv -= kv;
        if (in->wait.n == 0)
            in->wait_kv = 0;
        in->run[in->nrun++] = r;
        in->kv += kv;
    }
    b = in->nrun;
    budget = in->chunk > b ? in->chunk - b : 0;
    while (in->q.n > 0 && b + in->pre.n < bmax && in->pre_pending < budget) {
        uint32_t r = serve_fifo_pop(&in->q);
        afd_serve_request *q = afd_serve_req(e, r);
        double p = q->prompt;
        q->word = 0;
        if (serve_fifo_push(&in->pre, r) != 0) {
            afd_serve_fail(e, AFD_ENOMEM);
            return;
        }
        in->q_tokens -= p;
        in->q_sq -= p * p;
        in->pre_pending += p;
        in->pre_sq += p * p;
    }
    if (in->q.n == 0)
        in->q_tokens = in->q_sq = 0;
    npre = (unsigned)in->pre.n;
    for (k = 0; k < npre && budget > 0; k++) {
        uint32_t r = serve_fifo_peek(&in->pre);
        afd_serve_request *q = afd_serve_req(e, r);
        double p0 = (double)q->word, c = q->prompt - q->word, sq;
        if (c > budget)
            c = budget;
        sq = (p0 + c) * (p0 + c) - p0 * p0;
        t += hw->prefill_b * c + hw->prefill_c * sq;
        q->word += (uint64_t)c;
        budget -= (unsigned)c;
        in->pre_pending -= c;
        in->pre_sq -= sq;
        in->pre_kv += c;
        in->iter_tokens += c;
        any = 1;
        if (q->word == q->prompt) {
            serve_fifo_pop(&in->pre);
            in->done[in->n_done++] = r;
        } else {
            break; /* budget spent on this one */
        }
    }
    if (in->pre.n == 0)
        in->pre_pending = in->pre_sq = 0;
    if (b > 0)
        t += afd_serve_decode_step(e, b, in->kv);
    else if (any)
        t += hw->prefill_a;
    else
        return; /* idle */
    in->busy = 1;
    in->iter_end = afd_serve_now(e) + t;
    afd_serve_at(e, in->iter_end, EV_ITER_DONE, i);
}

/* Algorithm 2: the estimated time to prefill `tokens` more prompt tokens
 * (squares summing to sq) on instance i at its current iteration shape. */
static double estimate(const taichi *s, const afd_serve_engine *e, unsigned i, double tokens,
                       double sq)
{
    const tc_inst *in = &s->in[i];
    const afd_hw *hw = afd_serve_hw(e);
    unsigned b = in->nrun;
    double per = in->chunk > b ? in->chunk - b : 1;
    double fixed = b > 0 ? afd_serve_decode_step(e, b, in->kv) : hw->prefill_a;
    double busy = in->busy ? in->iter_end - afd_serve_now(e) : 0;
    return busy + ceil(tokens / per) * fixed + hw->prefill_b * tokens + hw->prefill_c * sq;
}

static void arrive(void *state, afd_serve_engine *e, uint32_t r)
{
    taichi *s = state;
    const afd_serve_request *q = afd_serve_req(e, r);
    double p = q->prompt, best_tok = INFINITY, best_ttft = INFINITY;
    unsigned i, k, best = s->n, ncap = 0;
    tc_inst *in;
    if (req_state(s, e, r) == NULL)
        return;
    for (k = 0; k < s->n; k++) {
        double tok, ttft;
        i = s->t.p_heavy + k < s->n ? s->t.p_heavy + k : s->t.p_heavy + k - s->n;
        in = &s->in[i];
        if (in->chunk == 0)
            continue;
        ncap++;
        tok = in->q_tokens + in->pre_pending + in->iter_tokens;
        if (tok > best_tok)
            continue;
        ttft = estimate(s, e, i, in->q_tokens + in->pre_pending + p, in->q_sq + in->pre_sq + p * p);
        if (in->heavy)
            ttft += s->c.kv_time_fixed + s->c.kv_time_per_token * p;
        if (ttft < s->t.ttft_slo && (tok < best_tok || ttft < best_ttft)) {
            best = i;
            best_tok = tok;
            best_ttft = ttft;
        }
    }
    if (best == s->n) { /* no feasible instance: one at random */
        unsigned pick = (unsigned)(afd_serve_u01(e) * ncap);
        s->cnt.infeasible++;
        if (pick >= ncap)
            pick = ncap - 1;
        for (i = 0; i < s->n; i++)
            if (s->in[i].chunk != 0 && pick-- == 0)
                break;
        best = i;
    }
    in = &s->in[best];
    if (in->heavy)
        s->cnt.prefill_p++;
    else
        s->cnt.prefill_d++;
    if (serve_fifo_push(&in->q, r) != 0) {
        afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    in->q_tokens += p;
    in->q_sq += p * p;
    if (!in->busy)
        next(s, e, best);
}

static void iteration_done(taichi *s, afd_serve_engine *e, unsigned a)
{
    tc_inst *in = &s->in[a];
    double now = afd_serve_now(e);
    unsigned j, k;
    if (in->nrun > 0) {
        in->kv += in->nrun; /* each sequence attends to one more token next step */
        for (k = 0; k < in->nrun; k++)
            s->rq[in->run[k]].gen++;
        for (k = 0; k < in->nrun;) {
            uint32_t r = in->run[k];
            const afd_serve_request *q = afd_serve_req(e, r);
            if (s->rq[r].gen >= q->output) {
                in->kv -= (double)q->prompt + q->output;
                in->run[k] = in->run[--in->nrun];
                afd_serve_finish(e, r);
            } else {
                k++;
            }
        }
        if (in->nrun == 0)
            in->kv = 0;
    }
    for (j = 0; j < in->n_done; j++) {
        uint32_t r = in->done[j];
        const afd_serve_request *q = afd_serve_req(e, r);
        tc_req *x = &s->rq[r];
        in->pre_kv -= q->prompt;
        if (in->pre.n == 0 && j + 1 == in->n_done)
            in->pre_kv = 0;
        afd_serve_first_token(e, r);
        x->gen = x->ref_n = 1;
        x->ref_t = now;
        if (q->output <= 1) {
            afd_serve_finish(e, r);
        } else if (in->heavy) {
            s->cnt.handovers++;
            move(s, e, a, least_used(s, 0), r, (double)q->prompt);
        } else {
            in->run[in->nrun++] = r;
            in->kv += (double)q->prompt + 1;
        }
    }
    next(s, e, a);
}

static void event(void *state, afd_serve_engine *e, unsigned kind, uint64_t id)
{
    taichi *s = state;
    if (kind == EV_ITER_DONE) {
        iteration_done(s, e, (unsigned)id);
    } else { /* EV_MOVED */
        uint32_t r = (uint32_t)id;
        unsigned dst = s->rq[r].to;
        if (serve_fifo_push(&s->in[dst].wait, r) != 0) {
            afd_serve_fail(e, AFD_ENOMEM);
            return;
        }
        if (!s->in[dst].busy)
            next(s, e, dst);
    }
}

const afd_serve_policy afd_priv_serve_taichi = {
    .name = "taichi",
    .summary = "P-heavy and D-heavy chunked instances, length-aware routing, flowing decode "
               "(TaiChi)",
    .init = init,
    .arrive = arrive,
    .event = event,
    .fini = fini,
};

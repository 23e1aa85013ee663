/* policy_disagg.c: disaggregated serving, NP prefill and ND decode instances
 * (DistServe; BestServe Section 3.4.3, Algorithms 2-3).
 *
 * Prefill: one FIFO queue; an idle prefill instance takes up to prefill_bmax
 * waiting requests as one static batch (BestServe's BATCH) and runs it for
 * a + b sum P + c sum P^2; the batch's first tokens come out at its end.
 * KV transfer: each request's KV cache then crosses the prefill instance's
 * link, kv_time_fixed + kv_time_per_token P, one transfer at a time per
 * link (FIFO); transfers do not delay the prefill instance's next batch.
 * Decode (per step, the default): one FIFO queue of transferred requests;
 * a decode instance runs steps back to back while it holds sequences, each
 * step taking beta + gamma b + alpha K for its b <= decode_bmax sequences
 * holding K KV tokens, and admits waiting sequences at every step boundary
 * (continuous batching).  An idle decode instance starts at once.
 * Decode (pseudo_tau > 0, BestServe's Algorithm 3): a decode instance has
 * decode_bmax boxes; a request takes the instance with the most free boxes
 * and holds one box for (G - 1) steps priced at the pseudo batch size
 * b' = max(floor((b + 1) / tau), 1), b the boxes busy at insertion:
 *   T = (G - 1) (beta + gamma b') + alpha b' ((G - 1) P + G (G - 1) / 2),
 * the sum of the step law over steps j = 1 .. G - 1 holding P + j tokens
 * each.  It is BestServe's heuristic, kept for comparison; the per-step
 * mode is the reference.
 * Routing: the idle instance most recently freed (prefill, per-step
 * decode); requests with one output token leave after their prefill.
 * With a router other than global (serve_router.c), each prefill instance
 * has its own FIFO queue, filled at arrival by the router, and batches
 * from it alone.
 * With a decode router other than global (per-step decode only), each
 * decode instance admits from its own FIFO queue, chosen when the request's
 * prefill ends (its KV transfer needs a destination) from what a gateway
 * sees of each decode instance: its sequences queued and running, and the
 * KV tokens they hold or bring (prompts of the queued).  The draws of
 * random and power-of-two come from their own stream (4).
 * Prefix cache: each prefill instance keeps its own (prefix_cache.c),
 * looked up when a batch forms and filled with the batch's blocks when it
 * is done (serve_batches_form, serve_batches_done).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "serve_internal.h"

enum { EV_PREFILL_DONE = 1, EV_KV_DONE, EV_STEP_DONE, EV_BOX_DONE };

typedef struct disagg {
    afd_serve_config c;
    serve_fifo pq, dq;       /* waiting for prefill, for a decode slot */
    serve_batches batch;     /* of the prefill instances */
    double *link_free;
    unsigned *p_idle, n_p_idle; /* stack of idle prefill instances */
    serve_decoder *dec;
    unsigned char *stepping;
    unsigned *d_idle, n_d_idle; /* idle decode instances (per-step mode) */
    unsigned *boxes;            /* busy boxes (pseudo mode) */
    /* routed prefill (router != global): the pool, whose requests and
     * queued tokens count a request until its prefill ends; per instance a
     * busy flag */
    serve_pool pp;
    unsigned char *p_busy;
    /* routed decode (decode_router != global): the pool, whose queued
     * tokens count the prompts queued there */
    serve_pool dp;
} disagg;

static void fini(void *state)
{
    disagg *s = state;
    unsigned i;
    if (s == NULL)
        return;
    serve_fifo_free(&s->pq);
    serve_fifo_free(&s->dq);
    serve_pool_free(&s->pp);
    free(s->p_busy);
    serve_pool_free(&s->dp);
    if (s->dec != NULL)
        for (i = 0; i < s->c.decode; i++)
            serve_decoder_free(&s->dec[i]);
    free(s->dec);
    serve_batches_free(&s->batch);
    free(s->link_free);
    free(s->p_idle);
    free(s->stepping);
    free(s->d_idle);
    free(s->boxes);
    free(s);
}

static afd_status init(afd_serve_engine *e, const afd_serve_config *cfg, void **state,
                       afd_error *err)
{
    disagg *s;
    unsigned i;
    (void)e;
    *state = NULL;
    if (cfg->prefill < 1 || cfg->decode < 1 || cfg->prefill > AFD_SERVE_MAX_INSTANCES ||
        cfg->decode > AFD_SERVE_MAX_INSTANCES) {
        snprintf(err->text, sizeof err->text, "disagg needs 1 to %u prefill and decode instances",
                 AFD_SERVE_MAX_INSTANCES);
        return AFD_EINVAL;
    }
    if (serve_batch_limits(cfg, err) != AFD_OK || serve_router_check(cfg, err) != AFD_OK)
        return AFD_EINVAL;
    if (!(cfg->pseudo_tau >= 0 && isfinite(cfg->pseudo_tau)) ||
        !(cfg->kv_time_per_token >= 0 && isfinite(cfg->kv_time_per_token)) ||
        !(cfg->kv_time_fixed >= 0 && isfinite(cfg->kv_time_fixed))) {
        snprintf(err->text, sizeof err->text,
                 "the pseudo batch factor and the KV transfer times must be finite and >= 0");
        return AFD_EINVAL;
    }
    if (cfg->pseudo_tau > 0 && cfg->decode_router != AFD_SERVE_ROUTE_GLOBAL) {
        snprintf(err->text, sizeof err->text,
                 "a decode router needs the per-step decode (the pseudo-batch decode takes the "
                 "instance with the most free boxes)");
        return AFD_EINVAL;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    s->c = *cfg;
    s->link_free = calloc(cfg->prefill, sizeof *s->link_free);
    s->p_idle = malloc(cfg->prefill * sizeof *s->p_idle);
    s->dec = calloc(cfg->decode, sizeof *s->dec);
    s->stepping = calloc(cfg->decode, 1);
    s->d_idle = malloc(cfg->decode * sizeof *s->d_idle);
    s->boxes = calloc(cfg->decode, sizeof *s->boxes);
    s->p_busy = calloc(cfg->prefill, 1);
    if (s->p_busy == NULL || serve_batches_init(&s->batch, cfg->prefill, cfg) != 0 ||
        serve_pool_init(&s->pp, cfg->router, cfg->prefill, SERVE_POOL_ARRIVAL, s->batch.pc) != 0 ||
        serve_pool_init(&s->dp, cfg->decode_router, cfg->decode, SERVE_POOL_DECODE, NULL) != 0 ||
        s->link_free == NULL || s->p_idle == NULL || s->dec == NULL || s->stepping == NULL ||
        s->d_idle == NULL || s->boxes == NULL) {
        fini(s);
        return AFD_ENOMEM;
    }
    for (i = 0; i < cfg->prefill; i++) /* instance 0 on top */
        s->p_idle[s->n_p_idle++] = cfg->prefill - 1 - i;
    for (i = 0; i < cfg->decode; i++)
        s->d_idle[s->n_d_idle++] = cfg->decode - 1 - i;
    *state = s;
    return AFD_OK;
}

static void start_prefill(disagg *s, afd_serve_engine *e, unsigned i)
{
    serve_fifo *q = s->c.router == AFD_SERVE_ROUTE_GLOBAL ? &s->pq : &s->pp.queue[i];
    serve_pcache *pc = serve_batches_pc(&s->batch, i);
    double time;
    /* the prefill instance holds the KV of its batch while it prefills (its
     * transfer to the decode pool taken as freeing it at once) */
    serve_pcache_room(pc, 0);
    time = serve_batches_form(&s->batch, i, q, e);
    if (pc != NULL)
        serve_pcache_room(pc, serve_batch_prompts(&s->batch, i, e));
    s->p_busy[i] = 1;
    afd_serve_at(e, afd_serve_now(e) + time, EV_PREFILL_DONE, i);
}

/* Per-step decode: admit waiting sequences, then step or go idle. */
static void decode_next(disagg *s, afd_serve_engine *e, unsigned i)
{
    serve_decoder *d = &s->dec[i];
    int routed = s->c.decode_router != AFD_SERVE_ROUTE_GLOBAL;
    serve_fifo *q = routed ? &s->dp.queue[i] : &s->dq;
    while (d->running < s->c.decode_bmax && q->n > 0) {
        uint32_t r = serve_fifo_pop(q);
        if (routed)
            s->dp.queued[i] -= afd_serve_req(e, r)->prompt;
        if (serve_decoder_add(d, afd_serve_req(e, r), r) != 0) {
            afd_serve_fail(e, AFD_ENOMEM);
            return;
        }
    }
    if (d->running > 0) {
        s->stepping[i] = 1;
        afd_serve_at(e, afd_serve_now(e) + afd_serve_decode_step(e, d->running, d->kv),
                     EV_STEP_DONE, i);
    } else {
        s->stepping[i] = 0;
        if (!routed)
            s->d_idle[s->n_d_idle++] = i;
    }
}

/* Pseudo-batch decode: put request r in a box of instance i. */
static void box_start(disagg *s, afd_serve_engine *e, unsigned i, uint32_t r)
{
    const afd_serve_request *q = afd_serve_req(e, r);
    double bp = floor((s->boxes[i] + 1) / s->c.pseudo_tau), g = q->output, t;
    const afd_hw *hw = afd_serve_hw(e);
    if (bp < 1)
        bp = 1;
    t = (g - 1) * (hw->decode_beta + hw->decode_gamma * bp) +
        hw->decode_alpha * bp * ((g - 1) * q->prompt + g * (g - 1) / 2);
    s->boxes[i]++;
    afd_serve_at(e, afd_serve_now(e) + t, EV_BOX_DONE, (uint64_t)i << 32 | r);
}

static void decode_arrive(disagg *s, afd_serve_engine *e, uint32_t r)
{
    if (s->c.pseudo_tau > 0) {
        unsigned i, best = 0;
        for (i = 1; i < s->c.decode; i++)
            if (s->boxes[i] < s->boxes[best])
                best = i;
        if (s->boxes[best] < s->c.decode_bmax)
            box_start(s, e, best, r);
        else if (serve_fifo_push(&s->dq, r) != 0)
            afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    if (s->c.decode_router != AFD_SERVE_ROUTE_GLOBAL) {
        serve_pool *pl = &s->dp;
        unsigned i, n = s->c.decode;
        for (i = 0; i < n; i++) {
            pl->requests[i] = pl->queue[i].n + s->dec[i].running;
            pl->tokens[i] = pl->queued[i] + (uint64_t)s->dec[i].kv;
        }
        if ((i = serve_pool_route(pl, e, r)) < n && !s->stepping[i])
            decode_next(s, e, i);
        return;
    }
    if (serve_fifo_push(&s->dq, r) != 0) {
        afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    if (s->n_d_idle > 0)
        decode_next(s, e, s->d_idle[--s->n_d_idle]);
}

static void arrive(void *state, afd_serve_engine *e, uint32_t r)
{
    disagg *s = state;
    if (s->c.router != AFD_SERVE_ROUTE_GLOBAL) {
        serve_pool *pl = &s->pp;
        unsigned i, n = s->c.prefill;
        for (i = 0; i < n; i++)
            pl->tokens[i] = pl->queued[i];
        if ((i = serve_pool_route(pl, e, r)) == n)
            return;
        pl->requests[i]++;
        if (!s->p_busy[i])
            start_prefill(s, e, i);
        return;
    }
    if (serve_fifo_push(&s->pq, r) != 0) {
        afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    if (s->n_p_idle > 0)
        start_prefill(s, e, s->p_idle[--s->n_p_idle]);
}

static void event(void *state, afd_serve_engine *e, unsigned kind, uint64_t id)
{
    disagg *s = state;
    uint32_t a = (uint32_t)id; /* instance, or request for EV_KV_DONE */
    switch (kind) {
    case EV_PREFILL_DONE: {
        uint32_t *batch = serve_batch(&s->batch, a);
        unsigned j, n = s->batch.n[a];
        double now = afd_serve_now(e);
        serve_batches_done(&s->batch, a, e);
        for (j = 0; j < n; j++) {
            uint32_t r = batch[j];
            const afd_serve_request *q = afd_serve_req(e, r);
            afd_serve_first_token(e, r);
            if (s->c.router != AFD_SERVE_ROUTE_GLOBAL) {
                s->pp.requests[a]--;
                s->pp.queued[a] -= q->prompt;
            }
            if (q->output <= 1) {
                afd_serve_finish(e, r);
            } else {
                double start = s->link_free[a] > now ? s->link_free[a] : now;
                double dur = s->c.kv_time_fixed + s->c.kv_time_per_token * q->prompt;
                if (dur > 0) {
                    s->link_free[a] = start + dur;
                    afd_serve_at(e, start + dur, EV_KV_DONE, r);
                } else {
                    decode_arrive(s, e, r);
                }
            }
        }
        s->p_busy[a] = 0;
        if (s->c.router != AFD_SERVE_ROUTE_GLOBAL) {
            if (s->pp.queue[a].n > 0)
                start_prefill(s, e, a);
        } else if (s->pq.n > 0) {
            start_prefill(s, e, a);
        } else {
            s->p_idle[s->n_p_idle++] = a;
        }
        break;
    }
    case EV_KV_DONE:
        decode_arrive(s, e, a);
        break;
    case EV_STEP_DONE:
        serve_decoder_step_done(&s->dec[a], e);
        decode_next(s, e, a);
        break;
    case EV_BOX_DONE: {
        unsigned i = (unsigned)(id >> 32);
        afd_serve_finish(e, a);
        s->boxes[i]--;
        if (s->dq.n > 0)
            box_start(s, e, i, serve_fifo_pop(&s->dq));
        break;
    }
    }
}

const afd_serve_policy afd_priv_serve_disagg = {
    .name = "disagg",
    .summary = "prefill and decode on separate instances, KV cache transferred between them",
    .init = init,
    .arrive = arrive,
    .event = event,
    .fini = fini,
};

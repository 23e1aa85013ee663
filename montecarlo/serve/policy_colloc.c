/* policy_colloc.c: collocated serving with prefill priority, never mixing
 * prefill and decode in one iteration (vLLM's default scheduler; BestServe
 * Section 3.4.4, Algorithms 4-7).
 *
 * N instances each prefill and decode.  Arrivals wait in one FIFO queue.
 * With a prefix cache each instance keeps its own, looked up when it forms
 * a batch and filled when the batch is done (prefill_batch.c).
 * At every iteration boundary an instance runs, in this order of priority:
 *   1. a prefill batch of up to prefill_bmax waiting requests, taking
 *      a + b sum P + c sum P^2, when any request waits for its prefill;
 *   2. otherwise one decode step of its running sequences (at most
 *      decode_bmax; its own prefilled requests wait in its local queue for
 *      a slot, since their KV cache lives there), taking beta + gamma b + alpha K;
 *   3. otherwise it is idle, and the next arrival starts it at once.
 * A prefill therefore suspends the instance's decodes for its whole
 * duration, and a stream of prefills can starve them: the decode capacity
 * is what the prefills leave.  Unlike BestServe's Algorithm 6, which
 * suspends running decodes the moment a prefill arrives, a decode step in
 * flight finishes first (an iteration is not interrupted, as in vLLM); the
 * difference is at most one step per prefill batch.  Prefilled requests do
 * not take a decode slot until one is free, so admission to prefill is never
 * blocked by decode occupancy (BestServe's queues P, Q and S).
 * With a router other than global (serve_router.c), each instance has its
 * own prefill queue, filled at arrival by the router from what a gateway
 * sees: each instance's requests (queued, in prefill, waiting for a decode
 * slot, decoding) and its prompt tokens queued or in prefill.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "serve_internal.h"

enum { EV_PREFILL_DONE = 1, EV_STEP_DONE };

typedef struct colloc {
    afd_serve_config c;
    serve_fifo pq;
    serve_fifo *local;  /* per instance: prefilled, waiting for a decode slot */
    double *ready;      /* per instance: the prompt tokens of local */
    serve_decoder *dec;
    serve_batches batch;
    unsigned *idle, n_idle;
    /* routed (router != global): the pool (its queued tokens count a
     * request until its prefill ends), per instance the requests in
     * prefill and a busy flag */
    serve_pool pool;
    unsigned *pre;
    unsigned char *busy;
} colloc;

static void fini(void *state)
{
    colloc *s = state;
    unsigned i;
    if (s == NULL)
        return;
    serve_fifo_free(&s->pq);
    for (i = 0; i < s->c.instances; i++) {
        if (s->local != NULL)
            serve_fifo_free(&s->local[i]);
        if (s->dec != NULL)
            serve_decoder_free(&s->dec[i]);
    }
    free(s->local);
    free(s->ready);
    serve_pool_free(&s->pool);
    free(s->pre);
    free(s->busy);
    free(s->dec);
    serve_batches_free(&s->batch);
    free(s->idle);
    free(s);
}

static afd_status init(afd_serve_engine *e, const afd_serve_config *cfg, void **state,
                       afd_error *err)
{
    colloc *s;
    unsigned i, n = cfg->instances;
    (void)e;
    *state = NULL;
    if (n < 1 || n > AFD_SERVE_MAX_INSTANCES) {
        snprintf(err->text, sizeof err->text, "colloc needs 1 to %u instances",
                 AFD_SERVE_MAX_INSTANCES);
        return AFD_EINVAL;
    }
    if (serve_batch_limits(cfg, err) != AFD_OK || serve_router_check(cfg, err) != AFD_OK)
        return AFD_EINVAL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    s->c = *cfg;
    s->local = calloc(n, sizeof *s->local);
    s->ready = calloc(n, sizeof *s->ready);
    s->dec = calloc(n, sizeof *s->dec);
    s->idle = malloc(n * sizeof *s->idle);
    s->pre = calloc(n, sizeof *s->pre);
    s->busy = calloc(n, 1);
    if (serve_batches_init(&s->batch, n, cfg) != 0 ||
        serve_pool_init(&s->pool, cfg->router, n, SERVE_POOL_ARRIVAL, s->batch.pc) != 0 ||
        s->local == NULL || s->ready == NULL || s->dec == NULL || s->idle == NULL ||
        s->pre == NULL || s->busy == NULL) {
        fini(s);
        return AFD_ENOMEM;
    }
    for (i = 0; i < n; i++)
        s->idle[s->n_idle++] = n - 1 - i;
    *state = s;
    return AFD_OK;
}

/* The next iteration of instance i, by priority. */
static void next(colloc *s, afd_serve_engine *e, unsigned i)
{
    serve_decoder *d = &s->dec[i];
    serve_fifo *q = s->c.router == AFD_SERVE_ROUTE_GLOBAL ? &s->pq : &s->pool.queue[i];
    serve_pcache *pc = serve_batches_pc(&s->batch, i);
    s->busy[i] = 1;
    /* the memory the running requests hold: decoding, prefilled, and the
     * batch about to be prefilled */
    serve_pcache_room(pc, d->kv + s->ready[i]);
    if (q->n > 0) {
        double time = serve_batches_form(&s->batch, i, q, e);
        s->pre[i] = s->batch.n[i];
        if (pc != NULL)
            serve_pcache_room(pc, d->kv + s->ready[i] + serve_batch_prompts(&s->batch, i, e));
        afd_serve_at(e, afd_serve_now(e) + time, EV_PREFILL_DONE, i);
        return;
    }
    while (d->running < s->c.decode_bmax && s->local[i].n > 0) {
        uint32_t r = serve_fifo_pop(&s->local[i]);
        s->ready[i] -= afd_serve_req(e, r)->prompt;
        if (serve_decoder_add(d, afd_serve_req(e, r), r) != 0) {
            afd_serve_fail(e, AFD_ENOMEM);
            return;
        }
    }
    if (d->running > 0)
        afd_serve_at(e, afd_serve_now(e) + afd_serve_decode_step(e, d->running, d->kv),
                     EV_STEP_DONE, i);
    else if (s->c.router != AFD_SERVE_ROUTE_GLOBAL)
        s->busy[i] = 0;
    else
        s->idle[s->n_idle++] = i;
}

static void arrive(void *state, afd_serve_engine *e, uint32_t r)
{
    colloc *s = state;
    if (s->c.router != AFD_SERVE_ROUTE_GLOBAL) {
        serve_pool *pl = &s->pool;
        unsigned i, n = s->c.instances;
        for (i = 0; i < n; i++) {
            pl->requests[i] = pl->queue[i].n + s->pre[i] + s->local[i].n + s->dec[i].running;
            pl->tokens[i] = pl->queued[i];
        }
        if ((i = serve_pool_route(pl, e, r)) < n && !s->busy[i])
            next(s, e, i);
        return;
    }
    if (serve_fifo_push(&s->pq, r) != 0) {
        afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    if (s->n_idle > 0)
        next(s, e, s->idle[--s->n_idle]);
}

static void event(void *state, afd_serve_engine *e, unsigned kind, uint64_t id)
{
    colloc *s = state;
    unsigned a = (unsigned)id;
    if (kind == EV_PREFILL_DONE) {
        uint32_t *batch = serve_batch(&s->batch, a);
        unsigned j;
        serve_batches_done(&s->batch, a, e);
        s->pre[a] = 0;
        for (j = 0; j < s->batch.n[a]; j++) {
            uint32_t r = batch[j];
            if (s->c.router != AFD_SERVE_ROUTE_GLOBAL)
                s->pool.queued[a] -= afd_serve_req(e, r)->prompt;
            afd_serve_first_token(e, r);
            if (afd_serve_req(e, r)->output <= 1)
                afd_serve_finish(e, r);
            else if (serve_fifo_push(&s->local[a], r) != 0)
                afd_serve_fail(e, AFD_ENOMEM);
            else
                s->ready[a] += afd_serve_req(e, r)->prompt;
        }
    } else {
        serve_decoder_step_done(&s->dec[a], e);
    }
    next(s, e, a);
}

const afd_serve_policy afd_priv_serve_colloc = {
    .name = "colloc",
    .summary = "prefill and decode on the same instances, prefill first, never mixed",
    .init = init,
    .arrive = arrive,
    .event = event,
    .fini = fini,
};

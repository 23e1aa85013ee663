/* policy_chunked.c: chunked prefill mixed with decode in every iteration
 * (Sarathi-Serve: Agrawal et al., OSDI 2024), the baseline of the hybrid and
 * two-tier architectures.
 *
 * N instances; arrivals wait in one FIFO queue.  An iteration of an
 * instance carries at most `chunk` tokens: first one token for each of its b
 * running decode sequences, then the rest of the budget for prompt chunks,
 * in order, of the requests it is prefilling and then of new requests from
 * the queue, as long as its sequences (decoding plus prefilling) number
 * fewer than decode_bmax.  chunk > decode_bmax, so a prefill always moves.
 * An iteration with b decodes (KV tokens K) and chunks c_j of requests
 * already holding p_j prompt tokens takes
 *     beta + gamma b + alpha K + sum_j (pb c_j + pc ((p_j + c_j)^2 - p_j^2))    (b >= 1)
 *     pa + sum_j (pb c_j + pc ((p_j + c_j)^2 - p_j^2))                         (b = 0)
 * with (pa, pb, pc) the prefill law and (beta, gamma, alpha) the decode step
 * law: the chunks of one prompt add up to its whole prefill b P + c P^2 (the
 * quadratic attention term counts each chunk against the tokens before it),
 * and the fixed cost of the iteration is the decode step's when it decodes,
 * the prefill's otherwise.  A request's first token comes at the end of the
 * iteration holding its last chunk; it then decodes on the same instance.
 * With a prefix cache (prefix_cache.c), each instance keeps its own: a
 * request taken from the queue starts its prefill past its cached tokens
 * (the chunks' attention term still counts them), and its blocks enter the
 * cache when its last chunk is done.
 * With a router other than global (serve_router.c), each instance admits
 * from its own queue, filled at arrival by the router from what a gateway
 * sees: each instance's requests (queued, prefilling, decoding) and its
 * prompt tokens not yet prefilled (queued or partly chunked).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "serve_internal.h"

enum { EV_ITER_DONE = 1 };

typedef struct chunk_inst {
    serve_decoder dec;
    serve_chunker ch; /* the prefills being chunked here */
} chunk_inst;

typedef struct chunked {
    afd_serve_config c;
    serve_fifo q;
    chunk_inst *in;
    unsigned *idle, n_idle;
    serve_pcache *pc; /* prefix cache per instance, or NULL */
    /* routed (router != global): the pool, per instance a busy flag */
    serve_pool pool;
    unsigned char *busy;
} chunked;

static void fini(void *state)
{
    chunked *s = state;
    unsigned i;
    if (s == NULL)
        return;
    serve_fifo_free(&s->q);
    if (s->in != NULL)
        for (i = 0; i < s->c.instances; i++) {
            serve_decoder_free(&s->in[i].dec);
            serve_chunker_free(&s->in[i].ch);
        }
    serve_pool_free(&s->pool);
    free(s->busy);
    free(s->in);
    free(s->idle);
    serve_pcaches_free(s->pc, s->c.instances);
    free(s);
}

static afd_status init(afd_serve_engine *e, const afd_serve_config *cfg, void **state,
                       afd_error *err)
{
    chunked *s;
    unsigned i, n = cfg->instances;
    int fail = 0;
    (void)e;
    *state = NULL;
    if (n < 1 || n > AFD_SERVE_MAX_INSTANCES) {
        snprintf(err->text, sizeof err->text, "chunked needs 1 to %u instances",
                 AFD_SERVE_MAX_INSTANCES);
        return AFD_EINVAL;
    }
    if (cfg->decode_bmax < 1 || cfg->decode_bmax > 65536) {
        snprintf(err->text, sizeof err->text, "the decode batch limit must be in 1..65536");
        return AFD_EINVAL;
    }
    if (cfg->chunk <= cfg->decode_bmax) {
        snprintf(err->text, sizeof err->text,
                 "the chunk (%u tokens) must exceed the decode batch limit (%u)", cfg->chunk,
                 cfg->decode_bmax);
        return AFD_EINVAL;
    }
    if (serve_router_check(cfg, err) != AFD_OK)
        return AFD_EINVAL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    s->c = *cfg;
    s->in = calloc(n, sizeof *s->in);
    s->idle = malloc(n * sizeof *s->idle);
    s->pc = serve_pcaches_new(cfg, n, &fail);
    s->busy = calloc(n, 1);
    if (s->in == NULL || s->idle == NULL || fail || s->busy == NULL ||
        serve_pool_init(&s->pool, cfg->router, n, SERVE_POOL_ARRIVAL, s->pc) != 0) {
        fini(s);
        return AFD_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        if (serve_chunker_init(&s->in[i].ch, cfg->decode_bmax) != 0) {
            fini(s);
            return AFD_ENOMEM;
        }
        s->in[i].ch.pc = s->pc != NULL ? &s->pc[i] : NULL;
        s->idle[s->n_idle++] = n - 1 - i;
    }
    *state = s;
    return AFD_OK;
}

/* Plan and start the next iteration of instance i, or mark it idle. */
static void next(chunked *s, afd_serve_engine *e, unsigned i)
{
    chunk_inst *in = &s->in[i];
    const afd_hw *hw = afd_serve_hw(e);
    int routed = s->c.router != AFD_SERVE_ROUTE_GLOBAL;
    serve_fifo *q = routed ? &s->pool.queue[i] : &s->q;
    unsigned b = in->dec.running, budget = s->c.chunk - b;
    double t;
    int any = 0;
    in->ch.n_done = 0;
    /* the memory the running requests hold: decoding and being prefilled */
    serve_pcache_room(in->ch.pc, in->dec.kv + (double)in->ch.held);
    /* admit new requests while there is room for sequences and the
     * prefills already here leave budget unused */
    while (q->n > 0 && b + in->ch.pre.n < s->c.decode_bmax && in->ch.pending < budget) {
        uint32_t r = serve_fifo_pop(q);
        if (routed)
            s->pool.queued[i] -= afd_serve_req(e, r)->prompt;
        if (serve_chunker_admit(&in->ch, e, r) != 0) {
            afd_serve_fail(e, AFD_ENOMEM);
            return;
        }
    }
    serve_pcache_room(in->ch.pc, in->dec.kv + (double)in->ch.held);
    /* give the budget to the prefills in order; finished ones leave the list */
    t = serve_chunker_spend(&in->ch, e, budget, &any);
    if (b > 0)
        t += afd_serve_decode_step(e, b, in->dec.kv);
    else if (any)
        t += hw->prefill_a;
    else {
        if (routed)
            s->busy[i] = 0;
        else
            s->idle[s->n_idle++] = i;
        return;
    }
    s->busy[i] = 1;
    afd_serve_at(e, afd_serve_now(e) + t, EV_ITER_DONE, i);
}

static void arrive(void *state, afd_serve_engine *e, uint32_t r)
{
    chunked *s = state;
    if (s->c.router != AFD_SERVE_ROUTE_GLOBAL) {
        serve_pool *pl = &s->pool;
        unsigned i, n = s->c.instances;
        for (i = 0; i < n; i++) {
            pl->requests[i] = pl->queue[i].n + s->in[i].ch.pre.n + s->in[i].dec.running;
            pl->tokens[i] = pl->queued[i] + s->in[i].ch.pending;
        }
        if ((i = serve_pool_route(pl, e, r)) < n && !s->busy[i])
            next(s, e, i);
        return;
    }
    if (serve_fifo_push(&s->q, r) != 0) {
        afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    if (s->n_idle > 0)
        next(s, e, s->idle[--s->n_idle]);
}

static void event(void *state, afd_serve_engine *e, unsigned kind, uint64_t id)
{
    chunked *s = state;
    unsigned a = (unsigned)id, j;
    chunk_inst *in = &s->in[a];
    (void)kind;
    if (in->dec.running > 0)
        serve_decoder_step_done(&in->dec, e);
    for (j = 0; j < in->ch.n_done; j++) {
        uint32_t r = in->ch.done[j];
        const afd_serve_request *q = afd_serve_req(e, r);
        afd_serve_first_token(e, r);
        if (q->output <= 1)
            afd_serve_finish(e, r);
        else if (serve_decoder_add(&in->dec, q, r) != 0)
            afd_serve_fail(e, AFD_ENOMEM);
    }
    next(s, e, a);
}

const afd_serve_policy afd_priv_serve_chunked = {
    .name = "chunked",
    .summary = "decode tokens and prompt chunks mixed in every iteration (Sarathi-Serve)",
    .init = init,
    .arrive = arrive,
    .event = event,
    .fini = fini,
};

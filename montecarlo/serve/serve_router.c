/* serve_router.c: the routers that pick an instance for a request when it
 * arrives, as the gateways in front of LLM engines do.  Each sees only what
 * such a gateway sees (the requests each instance queues and runs, their
 * prompt tokens not yet prefilled), never a service time to come.
 *
 *   random          uniform instance: SGLang model gateway / vllm-router
 *                   policy `random` (docs: "testing"); each instance is then
 *                   an M/G/1 queue fed by a thinned Poisson stream.
 *   round-robin     instance k mod n for the k-th arrival: vLLM production
 *                   stack's RoundRobinRouter, Ray Serve's RoundRobinRouter,
 *                   gateway policy `round_robin`; Vidur's global scheduler.
 *   least-requests  fewest queued + running requests (ties: lowest index):
 *                   the gateway's load fallback of `cache_aware`.
 *   least-tokens    fewest prompt tokens waiting for prefill (ties: fewest
 *                   requests, then lowest index): Ray Serve's KV-aware
 *                   router's token load without a prefix cache.
 *   power-of-two    two instances drawn uniformly (distinct), the one with
 *                   fewer requests (ties: the first drawn): gateway policy
 *                   `power_of_two`, Ray Serve LLM's default router.
 *   session         a consistent hash of the request's first prompt block
 *                   (the prompt's head: the system prompt or the
 *                   conversation so far), so that a conversation stays on
 *                   one instance: the vLLM production stack's SessionRouter
 *                   (a hash ring keyed by the session id; with no key it
 *                   takes the least loaded), gateway policy
 *                   `consistent_hashing`.  Jump consistent hash (Lamping
 *                   and Veach, arXiv:1406.2294) of the block id: for a
 *                   fixed pool any consistent hash is a fixed map from keys
 *                   to instances; a request without blocks goes to the
 *                   fewest requests.
 *   cache-aware     the gateway's default policy `cache_aware` (SGLang model
 *                   gateway, vllm-router): when the busiest instance holds
 *                   more than 64 requests more than the idlest and over 1.5
 *                   times as many (balance_abs_threshold 64,
 *                   balance_rel_threshold 1.5), the fewest requests;
 *                   otherwise the instance whose cache holds the longest
 *                   leading run of the request's blocks (ties: fewest
 *                   requests, then lowest index) when that run covers more
 *                   than 0.3 of its prompt (cache_threshold 0.3), else the
 *                   fewest requests.  The gateway matches against a radix
 *                   tree mirroring each engine's cache; here it reads the
 *                   instance's prefix cache itself.
 * Sources: docs.ray.io serve/llm/architecture/routing-policies.html and
 * user-guides/kv-aware-routing.html; docs.vllm.ai/projects/production-stack
 * (routing_logic); the SGLang model gateway's load-balancing page
 * (--policy random|round_robin|power_of_two|cache_aware); its cache-aware
 * defaults in lightseekorg/smg docs/getting-started/load-balancing.md
 * (--cache-threshold 0.3, --balance-abs-threshold 64,
 * --balance-rel-threshold 1.5); the production stack's router-logic page
 * (SessionRouter). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_internal.h"

static unsigned fewest(unsigned n, const serve_route_load *load, int tokens)
{
    unsigned i, best = 0;
    for (i = 1; i < n; i++) {
        if (tokens && load->tokens[i] != load->tokens[best]) {
            if (load->tokens[i] < load->tokens[best])
                best = i;
        } else if (load->requests[i] < load->requests[best]) {
            best = i;
        }
    }
    return best;
}

/* Jump consistent hash (Lamping and Veach 2014, Fig. 1): the bucket of key
 * among n. */
static unsigned jump_hash(uint64_t key, unsigned n)
{
    int64_t b = -1, j = 0;
    while (j < (int64_t)n) {
        b = j;
        key = key * UINT64_C(2862933555777941757) + 1;
        j = (int64_t)((double)(b + 1) * ((double)(INT64_C(1) << 31) / (double)((key >> 33) + 1)));
    }
    return (unsigned)b;
}

static unsigned cache_aware(const afd_serve_engine *e, uint32_t r, unsigned n,
                            const serve_route_load *load)
{
    const afd_serve_request *q = serve_route_req(e, r);
    unsigned i, lo = 0, hi = 0, best = 0;
    uint32_t best_run = 0;
    for (i = 1; i < n; i++) {
        if (load->requests[i] < load->requests[lo])
            lo = i;
        if (load->requests[i] > load->requests[hi])
            hi = i;
    }
    if (load->requests[hi] - load->requests[lo] > 64 &&
        load->requests[hi] > 1.5 * load->requests[lo])
        return lo;
    for (i = 0; i < n; i++) {
        uint32_t run = serve_pcache_match(&load->caches[i], q->blocks, q->n_blocks);
        if (run > best_run || (run == best_run && load->requests[i] < load->requests[best])) {
            best_run = run;
            best = i;
        }
    }
    if ((double)best_run * load->caches[0].block > 0.3 * q->prompt)
        return best;
    return lo;
}

afd_status serve_router_check(const afd_serve_config *cfg, afd_error *err)
{
    if ((unsigned)cfg->router > AFD_SERVE_ROUTE_CACHE_AWARE) {
        snprintf(err->text, sizeof err->text, "unknown router %d", (int)cfg->router);
        return AFD_EINVAL;
    }
    if ((unsigned)cfg->decode_router > AFD_SERVE_ROUTE_POWER_OF_TWO) {
        snprintf(err->text, sizeof err->text,
                 "decode router %d: a decode pool routes by global, random, round-robin, "
                 "least-requests, least-tokens or power-of-two",
                 (int)cfg->decode_router);
        return AFD_EINVAL;
    }
    return AFD_OK;
}

unsigned serve_route(afd_serve_router how, const afd_serve_engine *e, uint32_t r, unsigned n,
                     const serve_route_load *load, uint64_t *rr)
{
    unsigned a, b;
    switch (how) {
    case AFD_SERVE_ROUTE_RANDOM:
        a = (unsigned)(serve_route_u01(e, r, load->draws) * n);
        return a < n ? a : n - 1;
    case AFD_SERVE_ROUTE_ROUND_ROBIN:
        return (unsigned)((*rr)++ % n);
    case AFD_SERVE_ROUTE_LEAST_REQUESTS:
        return fewest(n, load, 0);
    case AFD_SERVE_ROUTE_LEAST_TOKENS:
        return fewest(n, load, 1);
    case AFD_SERVE_ROUTE_POWER_OF_TWO:
        if (n == 1)
            return 0;
        a = (unsigned)(serve_route_u01(e, r, load->draws) * n);
        a = a < n ? a : n - 1;
        b = (unsigned)(serve_route_u01(e, r, load->draws + 1) * (n - 1)); /* of the n - 1 others */
        b = b < n - 1 ? b : n - 2;
        b += b >= a;
        return load->requests[b] < load->requests[a] ? b : a;
    case AFD_SERVE_ROUTE_SESSION: {
        const afd_serve_request *q = serve_route_req(e, r);
        if (q->n_blocks == 0)
            return fewest(n, load, 0);
        return jump_hash(q->blocks[0], n);
    }
    case AFD_SERVE_ROUTE_CACHE_AWARE:
        return cache_aware(e, r, n, load);
    case AFD_SERVE_ROUTE_GLOBAL:
    default:
        return 0;
    }
}

int serve_pool_init(serve_pool *p, afd_serve_router how, unsigned n, unsigned which,
                    const serve_pcache *caches)
{
    memset(p, 0, sizeof *p);
    p->how = how;
    p->n = n;
    p->which = which;
    p->caches = caches;
    p->queue = calloc(n, sizeof *p->queue);
    p->queued = calloc(n, sizeof *p->queued);
    p->tokens = calloc(n, sizeof *p->tokens);
    p->requests = calloc(n, sizeof *p->requests);
    return p->queue == NULL || p->queued == NULL || p->tokens == NULL || p->requests == NULL ? -1
                                                                                             : 0;
}

void serve_pool_free(serve_pool *p)
{
    unsigned i;
    if (p->queue != NULL)
        for (i = 0; i < p->n; i++)
            serve_fifo_free(&p->queue[i]);
    free(p->queue);
    free(p->queued);
    free(p->tokens);
    free(p->requests);
    memset(p, 0, sizeof *p);
}

unsigned serve_pool_route(serve_pool *p, afd_serve_engine *e, uint32_t r)
{
    serve_route_load load = {p->requests, p->tokens, p->caches, 2 * p->which};
    unsigned i = serve_route(p->how, e, r, p->n, &load, &p->rr);
    if (serve_fifo_push(&p->queue[i], r) != 0) {
        afd_serve_fail(e, AFD_ENOMEM);
        return p->n;
    }
    p->queued[i] += serve_route_req(e, r)->prompt;
    serve_routed(e, r, p->which, i, p->n);
    return i;
}

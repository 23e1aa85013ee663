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
 * Sources: docs.ray.io serve/llm/architecture/routing-policies.html and
 * user-guides/kv-aware-routing.html; docs.vllm.ai/projects/production-stack
 * (routing_logic); the SGLang model gateway's load-balancing page
 * (--policy random|round_robin|power_of_two|cache_aware). */
#include <config.h>

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

unsigned serve_route(afd_serve_router how, const afd_serve_engine *e, uint32_t r, unsigned n,
                     const serve_route_load *load, uint64_t *rr)
{
    unsigned a, b;
    switch (how) {
    case AFD_SERVE_ROUTE_RANDOM:
        a = (unsigned)(serve_route_u01(e, r, 0) * n);
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
        a = (unsigned)(serve_route_u01(e, r, 0) * n);
        a = a < n ? a : n - 1;
        b = (unsigned)(serve_route_u01(e, r, 1) * (n - 1)); /* of the n - 1 others */
        b = b < n - 1 ? b : n - 2;
        b += b >= a;
        return load->requests[b] < load->requests[a] ? b : a;
    case AFD_SERVE_ROUTE_GLOBAL:
    default:
        return 0;
    }
}

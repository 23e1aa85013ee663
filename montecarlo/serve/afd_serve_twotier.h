/* afd_serve_twotier.h: the configuration of the "twotier" serving policy,
 * low-priority (LP) and high-priority (HP) instances with offloading by
 * slack (Ascendra: Ikram et al., "Ascendra: Dynamic Request Prioritization
 * for Efficient LLM Serving", Sections 4-6).  Pass a filled
 * afd_serve_twotier_config as afd_serve_config.extra; the policy reads
 * chunk and decode_bmax of afd_serve_config and ignores the rest.
 *
 * Deadlines.  Request r arriving at a_r has the TTFT deadline a_r + T
 * (T = ttft_slo; the policy stores it in afd_serve_request.deadline).  Its
 * predicted prefill time is the prefill law alone, pi_r = a + b P + c P^2
 * (the paper's performance model applied to the request by itself), and its
 * slack at time t is a_r + T - t - pi_r.
 *
 * LP instances (lp >= 1) run the iterations of the chunked policy
 * (policy_chunked.c): decode first, one token for each running sequence,
 * then the rest of the `chunk` token budget to prompt chunks, first those of
 * prefills already started here, then new requests taken from the LP queue
 * in the order of the policy's value while the sequences number fewer than
 * decode_bmax and the prompts admitted leave budget unused (a greedy prefix
 * of the ordered queue; the last one admitted may be chunked).  The LP queue
 * is shared by the LP instances and ordered by a key, smallest first, ties
 * in arrival order:
 *     fcfs   a_r
 *     edf    a_r + T               (one SLO for all: the same order as fcfs)
 *     sjf    P (the prompt)
 *     slack  a_r + T - pi_r        (least slack first; `now` is common)
 * Differences from the paper's Algorithm 1, which packs whole prompts and
 * stops at the first that does not fit: the last prompt admitted is chunked
 * (as in Sarathi-Serve, the LP's base), so that a prompt longer than the
 * budget still progresses and so that fcfs without HP instances is the
 * chunked policy run for run; and the paper routes arrivals to LP
 * instances round-robin while here they share one queue (what M/G/c models
 * and what `chunked` does).
 *
 * Offloading (Section 5.3).  A request waiting in the LP queue (its prefill
 * not started) is offloaded to the HP pool the instant its slack falls to
 * the threshold X: at a_r + T - pi_r - X, or at its arrival if that time has
 * passed (pi_r > T - X).  Only the prompt moves (no KV cache, no transfer
 * time).  With hp = 0 nothing is offloaded.  The engine's class of an
 * offloaded request is set to 1 (afd_serve_result.class_frac is then the
 * fraction offloaded among the measured requests).
 *
 * HP instances (hp >= 0) share a FIFO queue of offloaded requests and
 * prefill first: at each iteration boundary, if a prefill waits, a prefill
 * batch (law a + b sum P + c sum P^2) of the ticketed request (below) and
 * then the waiting offloads in order; otherwise one decode step of all their
 * running sequences; otherwise idle until work comes.  Elastic batch
 * (Section 6.2): there is no batch size limit; a prefill is admitted while
 * the instance's KV tokens (its running sequences' plus the prompts of the
 * batch) stay within kv_capacity (+inf: all waiting prefills in one batch);
 * an instance holding nothing always takes one.  A request prefilled on an
 * HP instance decodes there.
 *
 * Tickets (Section 6.1).  An HP instance with no prefill pending (no
 * offloaded request waiting, not prefilling) and no ticketed request of its
 * own in the system before its first token holds one ticket; an arrival
 * that finds a ticket goes to that HP instance directly (the first such
 * instance by index) instead of the LP queue.  One ticketed request per
 * instance at a time; tickets = 0 turns the mechanism off.
 *
 * Dropping (Section 6.3).  With drop set, a request still waiting (in the LP
 * queue, the HP queue, or a ticket) at its deadline a_r + T leaves unserved
 * (afd_serve_drop): it misses its SLO.  A prefill under way is not
 * interrupted.
 */
#ifndef AFD_SERVE_TWOTIER_H
#define AFD_SERVE_TWOTIER_H

#include <stdint.h>

#include "afd_dlsim.h"
#include "afd_serve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the policy did over the whole run (warm-up included). */
typedef struct afd_serve_twotier_counts {
    uint64_t offloads; /* requests moved from the LP queue to the HP pool */
    uint64_t drops;    /* requests dropped at their deadline */
    uint64_t tickets;  /* arrivals routed to an HP instance by its ticket */
} afd_serve_twotier_counts;

typedef struct afd_serve_twotier_config {
    unsigned lp, hp;     /* LP >= 1, HP >= 0 instances */
    afd_order order;     /* the LP queue's order */
    double ttft_slo;     /* T > 0 (+inf: no deadline, nothing offloaded or dropped) */
    double threshold;    /* X >= 0, finite when hp >= 1: offload when slack <= X */
    int drop;            /* drop requests waiting at their deadline */
    int tickets;         /* HP instances hand out tickets */
    double kv_capacity;  /* HP KV tokens per instance, > 0 (+inf: no limit) */
    afd_serve_twotier_counts *counts; /* may be NULL */
} afd_serve_twotier_config;

#ifdef __cplusplus
}
#endif

#endif /* AFD_SERVE_TWOTIER_H */

/* policy_twotier.c: LP instances that reorder prefills and offload by
 * slack, HP instances that prefill first (Ascendra, Sections 4-6).  The
 * configuration and the behaviour are described in afd_serve_twotier.h.
 *
 * An LP iteration is the chunked policy's (policy_chunked.c), in the same
 * order of operations, with the FIFO queue replaced by a heap ordered by the
 * policy's key (ties in arrival order), and the same stack of idle
 * instances, so that fcfs with no HP instance reproduces `chunked` run for
 * run.  Offloads and drops are events at the exact instant the slack falls
 * to the threshold and at the deadline; a request that leaves a queue that
 * way stays in the heap as a stale entry, recognised by its arrival number
 * (event ids are arrival number << 32 | slot, so a reused slot is not
 * mistaken for it) and skipped when it comes to the top.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "afd_serve_twotier.h"
#include "serve_internal.h"

enum { EV_LP_DONE = 1, EV_HP_DONE, EV_OFFLOAD, EV_DEADLINE };

/* where a request is */
enum { ST_NONE = 0, ST_LP_WAIT, ST_LP_PRE, ST_HP_WAIT, ST_HP_TICKET, ST_HP_PRE, ST_SERVED };

#define NO_REQ UINT32_MAX

typedef struct tt_req {
    uint32_t seq;    /* arrival number (low 32 bits) */
    unsigned char state;
    unsigned inst;   /* HP instance of a ticketed request */
} tt_req;

typedef struct lp_inst {
    serve_decoder dec;
    serve_chunker ch; /* the prefills being chunked here */
} lp_inst;

typedef struct hp_inst {
    serve_decoder dec;
    uint32_t *batch; /* the prefill batch under way */
    size_t n_batch, cap_batch;
    int busy, prefilling;
    uint32_t ticket;     /* the ticketed request waiting to start, or NO_REQ */
    uint32_t ticket_req; /* the ticketed request until its first token */
    int ticket_active;   /* ticket_req is in the system before its first token */
} hp_inst;

typedef struct twotier {
    afd_serve_config c;
    afd_serve_twotier_config t;
    afd_serve_twotier_counts cnt;
    afd_event_heap lq; /* LP queue: time = key, id = seq << 32 | slot */
    afd_event_heap hq; /* HP queue: time = offload time */
    uint64_t hq_valid; /* live entries of hq */
    lp_inst *lp;
    unsigned *idle, n_idle;
    hp_inst *hp;
    tt_req *rq;
    size_t rq_cap;
    uint64_t arrivals;
} twotier;

static void fini(void *state)
{
    twotier *s = state;
    unsigned i;
    if (s == NULL)
        return;
    if (s->t.counts != NULL)
        *s->t.counts = s->cnt;
    afd_event_heap_free(&s->lq);
    afd_event_heap_free(&s->hq);
    if (s->lp != NULL)
        for (i = 0; i < s->t.lp; i++) {
            serve_decoder_free(&s->lp[i].dec);
            serve_chunker_free(&s->lp[i].ch);
        }
    if (s->hp != NULL)
        for (i = 0; i < s->t.hp; i++) {
            serve_decoder_free(&s->hp[i].dec);
            free(s->hp[i].batch);
        }
    free(s->lp);
    free(s->hp);
    free(s->idle);
    free(s->rq);
    free(s);
}

static afd_status bad(afd_error *err, const char *msg)
{
    snprintf(err->text, sizeof err->text, "%s", msg);
    return AFD_EINVAL;
}

static afd_status init(afd_serve_engine *e, const afd_serve_config *cfg, void **state,
                       afd_error *err)
{
    const afd_serve_twotier_config *t = cfg->extra;
    twotier *s;
    unsigned i;
    (void)e;
    *state = NULL;
    if (t == NULL)
        return bad(err, "twotier needs its configuration (LP and HP instances, order, "
                        "threshold)");
    if (t->lp < 1 || t->lp > AFD_SERVE_MAX_INSTANCES || t->hp > AFD_SERVE_MAX_INSTANCES ||
        t->lp + t->hp > AFD_SERVE_MAX_INSTANCES) {
        snprintf(err->text, sizeof err->text,
                 "twotier needs 1 to %u LP instances and at most %u in all",
                 AFD_SERVE_MAX_INSTANCES, AFD_SERVE_MAX_INSTANCES);
        return AFD_EINVAL;
    }
    if (cfg->decode_bmax < 1 || cfg->decode_bmax > 65536)
        return bad(err, "the decode batch limit must be in 1..65536");
    if (cfg->chunk <= cfg->decode_bmax) {
        snprintf(err->text, sizeof err->text,
                 "the chunk (%u tokens) must exceed the decode batch limit (%u)", cfg->chunk,
                 cfg->decode_bmax);
        return AFD_EINVAL;
    }
    if (afd_order_name(t->order) == NULL)
        return bad(err, "unknown order (fcfs, sjf, edf, slack)");
    if (!(t->ttft_slo > 0))
        return bad(err, "the TTFT SLO must be > 0 (+inf for none)");
    if (t->hp > 0 && !(t->threshold >= 0 && isfinite(t->threshold)))
        return bad(err, "the offload threshold must be finite and >= 0");
    if (!(t->kv_capacity > 0))
        return bad(err, "the HP KV capacity must be > 0 (+inf for none)");
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    s->c = *cfg;
    s->t = *t;
    s->lp = calloc(t->lp, sizeof *s->lp);
    s->idle = malloc(t->lp * sizeof *s->idle);
    s->hp = t->hp > 0 ? calloc(t->hp, sizeof *s->hp) : NULL;
    if (s->lp == NULL || s->idle == NULL || (t->hp > 0 && s->hp == NULL)) {
        fini(s);
        return AFD_ENOMEM;
    }
    for (i = 0; i < t->lp; i++) {
        if (serve_chunker_init(&s->lp[i].ch, cfg->decode_bmax) != 0) {
            fini(s);
            return AFD_ENOMEM;
        }
        s->idle[s->n_idle++] = t->lp - 1 - i; /* as chunked: instance 0 first */
    }
    for (i = 0; i < t->hp; i++)
        s->hp[i].ticket = NO_REQ;
    *state = s;
    return AFD_OK;
}

static uint64_t tag(const twotier *s, uint32_t r)
{
    return (uint64_t)s->rq[r].seq << 32 | r;
}

/* The request of a heap or event id if it is still `state`, else NO_REQ. */
static uint32_t live(const twotier *s, uint64_t id, int state)
{
    uint32_t r = (uint32_t)(id & 0xffffffffu);
    if ((size_t)r < s->rq_cap && s->rq[r].seq == (uint32_t)(id >> 32) &&
        s->rq[r].state == state)
        return r;
    return NO_REQ;
}

/* The next request of the LP queue in order, or NO_REQ. */
static uint32_t lp_pop(twotier *s)
{
    while (s->lq.n > 0) {
        afd_event ev;
        uint32_t r;
        afd_event_heap_pop(&s->lq, &ev);
        if ((r = live(s, ev.id, ST_LP_WAIT)) != NO_REQ)
            return r;
    }
    return NO_REQ;
}

static uint32_t hp_pop(twotier *s)
{
    while (s->hq.n > 0) {
        afd_event ev;
        uint32_t r;
        afd_event_heap_pop(&s->hq, &ev);
        if ((r = live(s, ev.id, ST_HP_WAIT)) != NO_REQ) {
            s->hq_valid--;
            return r;
        }
    }
    return NO_REQ;
}

/* The next iteration of LP instance i (policy_chunked.c's, step for step). */
static void lp_next(twotier *s, afd_serve_engine *e, unsigned i)
{
    lp_inst *in = &s->lp[i];
    const afd_hw *hw = afd_serve_hw(e);
    unsigned b = in->dec.running, budget = s->c.chunk - b;
    double t;
    int any = 0;
    in->ch.n_done = 0;
    while (b + in->ch.pre.n < s->c.decode_bmax && in->ch.pending < budget) {
        uint32_t r = lp_pop(s);
        if (r == NO_REQ)
            break;
        s->rq[r].state = ST_LP_PRE;
        if (serve_chunker_admit(&in->ch, e, r) != 0) {
            afd_serve_fail(e, AFD_ENOMEM);
            return;
        }
    }
    t = serve_chunker_spend(&in->ch, e, budget, &any);
    if (b > 0)
        t += afd_serve_decode_step(e, b, in->dec.kv);
    else if (any)
        t += hw->prefill_a;
    else {
        s->idle[s->n_idle++] = i;
        return;
    }
    afd_serve_at(e, afd_serve_now(e) + t, EV_LP_DONE, i);
}

static int batch_push(afd_serve_engine *e, hp_inst *h, uint32_t r)
{
    if (h->n_batch == h->cap_batch) {
        size_t cap = h->cap_batch ? 2 * h->cap_batch : 16;
        uint32_t *v = realloc(h->batch, cap * sizeof *v);
        if (v == NULL) {
            afd_serve_fail(e, AFD_ENOMEM);
            return -1;
        }
        h->batch = v;
        h->cap_batch = cap;
    }
    h->batch[h->n_batch++] = r;
    return 0;
}

/* The next iteration of HP instance i: prefill first, elastic batch. */
static void hp_next(twotier *s, afd_serve_engine *e, unsigned i)
{
    hp_inst *h = &s->hp[i];
    double sp = 0, sp2 = 0, kv = h->dec.kv;
    h->busy = h->prefilling = 0;
    h->n_batch = 0;
    if (h->ticket != NO_REQ) {
        uint32_t r = h->ticket;
        double p = afd_serve_req(e, r)->prompt;
        h->ticket = NO_REQ;
        s->rq[r].state = ST_HP_PRE;
        if (batch_push(e, h, r) != 0)
            return;
        sp += p;
        sp2 += p * p;
        kv += p;
    }
    while (s->hq_valid > 0) {
        /* the head's prompt must fit, unless the instance holds nothing */
        uint32_t r;
        double p;
        afd_event ev;
        while ((r = live(s, s->hq.e[0].id, ST_HP_WAIT)) == NO_REQ)
            afd_event_heap_pop(&s->hq, &ev);
        p = afd_serve_req(e, r)->prompt;
        if (!(kv + p <= s->t.kv_capacity) && (h->n_batch > 0 || h->dec.running > 0))
            break;
        r = hp_pop(s);
        s->rq[r].state = ST_HP_PRE;
        if (batch_push(e, h, r) != 0)
            return;
        sp += p;
        sp2 += p * p;
        kv += p;
    }
    if (h->n_batch > 0) {
        h->busy = h->prefilling = 1;
        afd_serve_at(e, afd_serve_now(e) + afd_serve_prefill_time(e, sp, sp2), EV_HP_DONE, i);
    } else if (h->dec.running > 0) {
        h->busy = 1;
        afd_serve_at(e, afd_serve_now(e) + afd_serve_decode_step(e, h->dec.running, h->dec.kv),
                     EV_HP_DONE, i);
    }
}

/* An HP instance holding a ticket, or hp if none. */
static unsigned ticket_holder(const twotier *s)
{
    unsigned i;
    if (!s->t.tickets || s->hq_valid > 0)
        return s->t.hp;
    for (i = 0; i < s->t.hp; i++)
        if (!s->hp[i].prefilling && !s->hp[i].ticket_active)
            return i;
    return s->t.hp;
}

static void wake_hp(twotier *s, afd_serve_engine *e)
{
    unsigned i;
    for (i = 0; i < s->t.hp && s->hq_valid > 0; i++)
        if (!s->hp[i].busy)
            hp_next(s, e, i);
}

static void offload(twotier *s, afd_serve_engine *e, uint32_t r)
{
    afd_serve_request *q = afd_serve_req(e, r);
    s->rq[r].state = ST_HP_WAIT;
    q->cls = 1;
    s->cnt.offloads++;
    if (afd_event_heap_push(&s->hq, afd_serve_now(e), tag(s, r), 0) != AFD_OK) {
        afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    s->hq_valid++;
    wake_hp(s, e);
}

static tt_req *req_state(twotier *s, afd_serve_engine *e, uint32_t r)
{
    if (r >= s->rq_cap) {
        size_t cap = s->rq_cap ? s->rq_cap : 256;
        tt_req *v;
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

static void arrive(void *state, afd_serve_engine *e, uint32_t r)
{
    twotier *s = state;
    afd_serve_request *q = afd_serve_req(e, r);
    const afd_hw *hw = afd_serve_hw(e);
    double now = afd_serve_now(e), p = q->prompt, key;
    double pred = hw->prefill_a + hw->prefill_b * p + hw->prefill_c * p * p;
    tt_req *x = req_state(s, e, r);
    unsigned h;
    if (x == NULL)
        return;
    x->seq = (uint32_t)s->arrivals++;
    x->state = ST_NONE;
    q->deadline = now + s->t.ttft_slo;
    if (s->t.drop && isfinite(q->deadline))
        afd_serve_at(e, q->deadline, EV_DEADLINE, tag(s, r));
    if ((h = ticket_holder(s)) < s->t.hp) { /* Section 6.1 */
        hp_inst *hi = &s->hp[h];
        x->state = ST_HP_TICKET;
        x->inst = h;
        hi->ticket = hi->ticket_req = r;
        hi->ticket_active = 1;
        s->cnt.tickets++;
        if (!hi->busy)
            hp_next(s, e, h);
        return;
    }
    if (s->t.hp > 0 && isfinite(q->deadline)) {
        double t_off = q->deadline - pred - s->t.threshold;
        if (t_off <= now) { /* no slack to spare from the start */
            offload(s, e, r);
            return;
        }
        afd_serve_at(e, t_off, EV_OFFLOAD, tag(s, r));
    }
    switch (s->t.order) {
    case AFD_ORDER_SJF: key = p; break;
    case AFD_ORDER_EDF: key = q->deadline; break;
    case AFD_ORDER_SLACK: key = q->deadline - pred; break;
    default: key = now; break;
    }
    x->state = ST_LP_WAIT;
    if (afd_event_heap_push(&s->lq, key, tag(s, r), 0) != AFD_OK) {
        afd_serve_fail(e, AFD_ENOMEM);
        return;
    }
    if (s->n_idle > 0)
        lp_next(s, e, s->idle[--s->n_idle]);
}

static void lp_done(twotier *s, afd_serve_engine *e, unsigned a)
{
    lp_inst *in = &s->lp[a];
    unsigned j;
    if (in->dec.running > 0)
        serve_decoder_step_done(&in->dec, e);
    for (j = 0; j < in->ch.n_done; j++) {
        uint32_t r = in->ch.done[j];
        const afd_serve_request *q = afd_serve_req(e, r);
        s->rq[r].state = ST_SERVED;
        afd_serve_first_token(e, r);
        if (q->output <= 1)
            afd_serve_finish(e, r);
        else if (serve_decoder_add(&in->dec, q, r) != 0)
            afd_serve_fail(e, AFD_ENOMEM);
    }
    lp_next(s, e, a);
}

static void hp_done(twotier *s, afd_serve_engine *e, unsigned a)
{
    hp_inst *h = &s->hp[a];
    size_t j;
    if (h->prefilling) {
        for (j = 0; j < h->n_batch; j++) {
            uint32_t r = h->batch[j];
            const afd_serve_request *q = afd_serve_req(e, r);
            if (h->ticket_active && r == h->ticket_req)
                h->ticket_active = 0;
            s->rq[r].state = ST_SERVED;
            afd_serve_first_token(e, r);
            if (q->output <= 1)
                afd_serve_finish(e, r);
            else if (serve_decoder_add(&h->dec, q, r) != 0)
                afd_serve_fail(e, AFD_ENOMEM);
        }
    } else {
        serve_decoder_step_done(&h->dec, e);
    }
    hp_next(s, e, a);
}

static void event(void *state, afd_serve_engine *e, unsigned kind, uint64_t id)
{
    twotier *s = state;
    uint32_t r;
    switch (kind) {
    case EV_LP_DONE: lp_done(s, e, (unsigned)id); break;
    case EV_HP_DONE: hp_done(s, e, (unsigned)id); break;
    case EV_OFFLOAD:
        if ((r = live(s, id, ST_LP_WAIT)) != NO_REQ)
            offload(s, e, r);
        break;
    case EV_DEADLINE:
        r = (uint32_t)(id & 0xffffffffu);
        if (live(s, id, ST_LP_WAIT) == NO_REQ && live(s, id, ST_HP_WAIT) == NO_REQ &&
            live(s, id, ST_HP_TICKET) == NO_REQ)
            break;
        if (s->rq[r].state == ST_HP_WAIT)
            s->hq_valid--;
        if (s->rq[r].state == ST_HP_TICKET) {
            s->hp[s->rq[r].inst].ticket = NO_REQ;
            s->hp[s->rq[r].inst].ticket_active = 0;
        }
        s->rq[r].state = ST_NONE;
        s->rq[r].seq++; /* stale from now on in any heap */
        s->cnt.drops++;
        afd_serve_drop(e, r);
        break;
    }
}

const afd_serve_policy afd_priv_serve_twotier = {
    .name = "twotier",
    .summary = "LP instances ordering prefills and offloading by slack to prefill-first HP "
               "instances (Ascendra)",
    .init = init,
    .arrive = arrive,
    .event = event,
    .fini = fini,
};

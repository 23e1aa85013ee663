/* prefill_batch.c: the static prefill batches of the colloc and disagg
 * policies (see serve_internal.h). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "serve_internal.h"

afd_status serve_batch_limits(const afd_serve_config *cfg, afd_error *err)
{
    if (cfg->prefill_bmax < 1 || cfg->decode_bmax < 1 || cfg->prefill_bmax > 65536 ||
        cfg->decode_bmax > 65536) {
        snprintf(err->text, sizeof err->text, "batch limits must be in 1..65536");
        return AFD_EINVAL;
    }
    return AFD_OK;
}

int serve_batches_init(serve_batches *b, unsigned instances, const afd_serve_config *cfg)
{
    int fail = 0;
    b->bmax = cfg->prefill_bmax;
    b->instances = instances;
    b->req = malloc((size_t)instances * b->bmax * sizeof *b->req);
    b->n = calloc(instances, sizeof *b->n);
    b->pc = serve_pcaches_new(cfg, instances, &fail);
    return b->req != NULL && b->n != NULL && !fail ? 0 : -1;
}

void serve_batches_free(serve_batches *b)
{
    free(b->req);
    free(b->n);
    serve_pcaches_free(b->pc, b->instances);
    b->pc = NULL;
}

void serve_batches_done(serve_batches *b, unsigned i, afd_serve_engine *e)
{
    const uint32_t *req = serve_batch(b, i);
    unsigned j;
    if (b->pc == NULL)
        return;
    for (j = 0; j < b->n[i]; j++)
        serve_prefix_done(&b->pc[i], e, req[j]);
}

double serve_batches_form(serve_batches *b, unsigned i, serve_fifo *q, afd_serve_engine *e)
{
    uint32_t *req = serve_batch(b, i);
    double sp = 0, sp2 = 0;
    unsigned n = 0;
    while (n < b->bmax && q->n > 0) {
        uint32_t r = serve_fifo_pop(q);
        const afd_serve_request *rq = afd_serve_req(e, r);
        double p, c;
        if (b->pc != NULL)
            serve_prefix_start(&b->pc[i], e, r);
        p = rq->prompt;
        c = serve_prefill_from(rq);
        req[n++] = r;
        sp += p - c;
        sp2 += p * p - c * c;
    }
    b->n[i] = n;
    return afd_serve_prefill_time(e, sp, sp2);
}

double serve_batch_prompts(const serve_batches *b, unsigned i, afd_serve_engine *e)
{
    const uint32_t *req = serve_batch(b, i);
    double sum = 0;
    unsigned j;
    for (j = 0; j < b->n[i]; j++)
        sum += afd_serve_req(e, req[j])->prompt;
    return sum;
}

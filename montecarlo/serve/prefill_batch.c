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

int serve_batches_init(serve_batches *b, unsigned instances, unsigned bmax)
{
    b->bmax = bmax;
    b->req = malloc((size_t)instances * bmax * sizeof *b->req);
    b->n = calloc(instances, sizeof *b->n);
    return b->req != NULL && b->n != NULL ? 0 : -1;
}

void serve_batches_free(serve_batches *b)
{
    free(b->req);
    free(b->n);
}

double serve_batches_form(serve_batches *b, unsigned i, serve_fifo *q, afd_serve_engine *e)
{
    uint32_t *req = serve_batch(b, i);
    double sp = 0, sp2 = 0;
    unsigned n = 0;
    while (n < b->bmax && q->n > 0) {
        uint32_t r = serve_fifo_pop(q);
        double p = afd_serve_req(e, r)->prompt;
        req[n++] = r;
        sp += p;
        sp2 += p * p;
    }
    b->n[i] = n;
    return afd_serve_prefill_time(e, sp, sp2);
}

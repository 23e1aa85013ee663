/* prefill_batch.c: the static prefill batch of the colloc and disagg
 * policies (see serve_internal.h). */
#include <config.h>

#include "serve_internal.h"

unsigned serve_prefill_batch(serve_fifo *q, unsigned bmax, afd_serve_engine *e, uint32_t *b,
                             double *time)
{
    double sp = 0, sp2 = 0;
    unsigned n = 0;
    while (n < bmax && q->n > 0) {
        uint32_t r = serve_fifo_pop(q);
        double p = afd_serve_req(e, r)->prompt;
        b[n++] = r;
        sp += p;
        sp2 += p * p;
    }
    *time = afd_serve_prefill_time(e, sp, sp2);
    return n;
}

/* montecarlo/random/: the random numbers every experiment draws.  The
 * counter-based generator Philox4x32-10, addressed by (seed, stream, index)
 * so that results do not depend on the thread count (afd_philox.h); the
 * samplers of the model's laws (afd_sampler.h); the OpenMP team size
 * (threads.c) and the engine's shared helpers (mc_internal.h). */

/* afd_philox.h: the counter-based generator Philox4x32-10 and uniforms drawn
 * from it by address.
 *
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11; the Random123 library) maps a 128-bit counter and
 * a 64-bit key to 128 random bits by ten rounds of
 *
 *   (c0, c1, c2, c3) -> (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0)),
 *
 * with M0 = 0xD2511F53, M1 = 0xCD9E8D57 and the key bumped by the Weyl
 * constants (0x9E3779B9, 0xBB67AE85) between rounds.  It is a pure function:
 * nothing is stored between calls, so every draw has an address and the same
 * address gives the same bits in any thread, in any order.
 *
 * Addressing.  A uniform is addressed by (seed, stream, index), all 64-bit:
 *
 *   key     = (seed & 0xffffffff, seed >> 32)
 *   counter = (block & 0xffffffff, block >> 32, stream & 0xffffffff, stream >> 32)
 *   block   = index / 2; uniform 2m takes output words (x0, x1) of block m and
 *             uniform 2m+1 takes (x2, x3).
 *
 * Uniforms lie on the OPEN interval (0, 1): from the 64-bit word
 * w = x1 * 2^32 + x0 (resp. x3 * 2^32 + x2) the top 52 bits v = w >> 12 give
 *
 *   u = (2 v + 1) / 2^53,   v = 0 .. 2^52 - 1,
 *
 * the midpoints of 2^52 equal cells: every value is a double exactly,
 * 2^-53 <= u <= 1 - 2^-53, never 0 or 1, and the mean is exactly 1/2.
 * The resolution is 2^-52 (52 random bits per uniform).
 *
 * Streams are meant for independent experiments or independent trials (a
 * simulator documents which streams it uses); each stream holds 2^65
 * uniforms.
 */
#ifndef AFD_PHILOX_H
#define AFD_PHILOX_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Philox4x32-10 of (ctr, key): out = the four output words.  out may alias ctr. */
AFD_API void afd_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* The uniform at (seed, stream, index), as described above. */
AFD_API double afd_philox_u01(uint64_t seed, uint64_t stream, uint64_t index);

/* out[i] = afd_philox_u01(seed, stream, first_index + i) for i = 0..n-1,
 * bit for bit.  The inner loop computes whole Philox blocks and has no
 * branches, so the compiler vectorizes it (SSE2 on x86-64).  Indices wrap
 * modulo 2^64. */
AFD_API void afd_philox_fill_u01(uint64_t seed, uint64_t stream, uint64_t first_index, size_t n,
                                 double *out);

/* Sequential reader of one stream, for algorithms that consume a variable
 * number of uniforms (rejection samplers).  It reads the uniforms
 * (seed, stream, first_index), (seed, stream, first_index + 1), ... in order,
 * buffering AFD_PHILOX_CURSOR_BUF of them at a time, so its output is the
 * same as afd_philox_u01 at those addresses.  Plain data: put it on the
 * stack, one per thread. */
#define AFD_PHILOX_CURSOR_BUF 64
typedef struct afd_philox_cursor {
    uint64_t seed, stream;
    uint64_t next; /* index of the uniform the next refill starts at */
    unsigned pos;  /* next unread entry of buf */
    double buf[AFD_PHILOX_CURSOR_BUF];
} afd_philox_cursor;

/* Position the cursor at (seed, stream, first_index). */
AFD_API void afd_philox_cursor_init(afd_philox_cursor *c, uint64_t seed, uint64_t stream,
                                    uint64_t first_index);

/* Refill the buffer (called by afd_philox_next; not for direct use). */
AFD_API void afd_philox_cursor_refill(afd_philox_cursor *c);

/* The next uniform of the cursor's stream, on (0, 1). */
static inline double afd_philox_next(afd_philox_cursor *c)
{
    if (c->pos == AFD_PHILOX_CURSOR_BUF)
        afd_philox_cursor_refill(c);
    return c->buf[c->pos++];
}

#ifdef __cplusplus
}
#endif

#endif /* AFD_PHILOX_H */

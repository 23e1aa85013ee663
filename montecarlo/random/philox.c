/* philox.c: Philox4x32-10 (Random123) and uniforms addressed by
 * (seed, stream, index); see afd_philox.h for the layout. */
#include <config.h>

#include <string.h>

#include "afd_philox.h"
#include "mc_internal.h"

#define PHILOX_M0 UINT32_C(0xD2511F53)
#define PHILOX_M1 UINT32_C(0xCD9E8D57)
#define PHILOX_W0 UINT32_C(0x9E3779B9)
#define PHILOX_W1 UINT32_C(0xBB67AE85)

/* Blocks are index / 2, so they run modulo 2^63. */
#define BLOCK_MASK (UINT64_MAX >> 1)

/* One Philox round on (c0..c3) with key (k0, k1); 32x32->64 products. */
#define PHILOX_ROUND(c0, c1, c2, c3, k0, k1)                                                       \
    do {                                                                                           \
        uint64_t p0_ = (uint64_t)PHILOX_M0 * (c0), p1_ = (uint64_t)PHILOX_M1 * (c2);               \
        uint32_t n0_ = (uint32_t)(p1_ >> 32) ^ (c1) ^ (k0);                                        \
        uint32_t n2_ = (uint32_t)(p0_ >> 32) ^ (c3) ^ (k1);                                        \
        (c1) = (uint32_t)p1_;                                                                      \
        (c3) = (uint32_t)p0_;                                                                      \
        (c0) = n0_;                                                                                \
        (c2) = n2_;                                                                                \
    } while (0)

#define PHILOX_BUMP(k0, k1)                                                                        \
    do {                                                                                           \
        (k0) += PHILOX_W0;                                                                         \
        (k1) += PHILOX_W1;                                                                         \
    } while (0)

/* Ten rounds, nine key bumps, as philox4x32_R(10, ...) in Random123. */
#define PHILOX_10(c0, c1, c2, c3, k0, k1)                                                          \
    do {                                                                                           \
        uint32_t ka_ = (k0), kb_ = (k1);                                                           \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
        PHILOX_BUMP(ka_, kb_);                                                                     \
        PHILOX_ROUND(c0, c1, c2, c3, ka_, kb_);                                                    \
    } while (0)

void afd_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    PHILOX_10(c0, c1, c2, c3, key[0], key[1]);
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* (2v + 1) / 2^53 with v the top 52 bits of hi:lo.  The double 1 + v/2^52 is
 * built from its bit pattern (no integer-to-float conversion, which SSE2 and
 * AVX2 lack for 64-bit integers); both subtractions are exact. */
static inline double u01_from_words(uint32_t hi, uint32_t lo)
{
    uint64_t v = (((uint64_t)hi << 32) | lo) >> 12;
    uint64_t bits = UINT64_C(0x3FF0000000000000) | v;
    double d;
    memcpy(&d, &bits, sizeof d);
    return (d - 1.0) + 0x1p-53;
}

double afd_philox_u01(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t block = index >> 1;
    uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32);
    uint32_t c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    PHILOX_10(c0, c1, c2, c3, (uint32_t)seed, (uint32_t)(seed >> 32));
    return (index & 1) ? u01_from_words(c3, c2) : u01_from_words(c1, c0);
}

/* Whole blocks block0 .. block0+nblocks-1 into out[0 .. 2 nblocks-1].  The
 * loop body is straight-line integer code that GCC vectorizes with SSE2
 * (-fopt-info-vec: "loop vectorized using 16 byte vectors"; 1.5x the scalar
 * rate on the development machine).  An AVX2 clone (target_clones) was
 * measured slower, as the 32x32->64 products need lane shuffles. */
static void fill_blocks(uint32_t k0, uint32_t k1, uint32_t s0, uint32_t s1, uint64_t block0,
                        size_t nblocks, double *restrict out)
{
    size_t m;
    AFD_SIMD
    for (m = 0; m < nblocks; m++) {
        uint64_t b = (block0 + m) & BLOCK_MASK; /* index 2^64 wraps to block 0 */
        uint32_t c0 = (uint32_t)b, c1 = (uint32_t)(b >> 32), c2 = s0, c3 = s1;
        PHILOX_10(c0, c1, c2, c3, k0, k1);
        out[2 * m] = u01_from_words(c1, c0);
        out[2 * m + 1] = u01_from_words(c3, c2);
    }
}

void afd_philox_fill_u01(uint64_t seed, uint64_t stream, uint64_t first_index, size_t n,
                         double *out)
{
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    uint32_t s0 = (uint32_t)stream, s1 = (uint32_t)(stream >> 32);
    size_t nblocks;
    if (n == 0)
        return;
    if (first_index & 1) { /* odd start: the second half of a block */
        *out++ = afd_philox_u01(seed, stream, first_index++);
        n--;
    }
    nblocks = n / 2;
    if (nblocks > 0)
        fill_blocks(k0, k1, s0, s1, first_index >> 1, nblocks, out);
    if (n & 1)
        out[n - 1] = afd_philox_u01(seed, stream, first_index + 2 * nblocks);
}

void afd_philox_cursor_init(afd_philox_cursor *c, uint64_t seed, uint64_t stream,
                            uint64_t first_index)
{
    c->seed = seed;
    c->stream = stream;
    c->next = first_index;
    c->pos = AFD_PHILOX_CURSOR_BUF;
}

void afd_philox_cursor_refill(afd_philox_cursor *c)
{
    afd_philox_fill_u01(c->seed, c->stream, c->next, AFD_PHILOX_CURSOR_BUF, c->buf);
    c->next += AFD_PHILOX_CURSOR_BUF;
    c->pos = 0;
}

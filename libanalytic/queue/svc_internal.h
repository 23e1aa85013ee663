/* svc_internal.h: the layout of afd_svc_law, shared by deadline.c and
 * priority.c.  Not installed. */
#ifndef AFD_SVC_INTERNAL_H
#define AFD_SVC_INTERNAL_H

#include <stddef.h>

#include "afd_deadline.h"

enum { LAW_ATOMS = 0, LAW_EXP = 1 };

struct afd_svc_law {
    int kind;
    double mean, m2, bin_var;
    size_t n;    /* atoms (LAW_ATOMS) */
    double *t;   /* values, increasing */
    double *w;   /* weights, summing to 1 */
    double *sw;  /* sw[k]  = sum_{i >= k} w_i, k = 0..n */
    double *sm1; /* sm1[k] = sum_{i >= k} w_i t_i */
    double *pm1; /* pm1[k] = sum_{i < k} w_i t_i */
    double *pm2; /* pm2[k] = sum_{i < k} w_i t_i^2 */
};

/* Number of atoms with t <= z (binary search). */
size_t afd_priv_svc_upto(const afd_svc_law *l, double z);

/* 1 - e^{-u} (1 + u) = int_0^u x e^{-x} dx for u >= 0, without cancellation. */
double afd_priv_j2(double u);

#endif /* AFD_SVC_INTERNAL_H */

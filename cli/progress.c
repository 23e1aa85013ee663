/* progress.c: progress reports on stderr for work longer than a few seconds.
 * Shown only when stderr is a terminal, so logs and tests stay clean. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, const char *cmd, const char *what, int quiet)
{
    const char *env = getenv("AFDKIT_PROGRESS");
    p->cmd = cmd;
    p->what = what;
    p->start = cli_now();
    p->last = p->start;
    p->shown = 0;
    p->delay = 2.0;
    p->enabled = !quiet && isatty(STDERR_FILENO);
    if (!quiet && env != NULL && *env != '\0') {
        char *end;
        double d = strtod(env, &end);
        if (*end == '\0' && d >= 0 && isfinite(d)) {
            p->enabled = 1;
            p->delay = d;
        }
    }
}

void cli_progress_update(cli_progress *p, double done, double total, const char *unit)
{
    double now;
    if (!p->enabled)
        return;
    now = cli_now();
    if (now - p->start < p->delay || (p->shown && now - p->last < 0.5 && done < total))
        return;
    p->last = now;
    p->shown = 1;
    if (total > 0)
        fprintf(stderr, "\rafdkit: %s: %s: %.0f/%.0f %s (%.0f%%, %.1f s)   ", p->cmd, p->what,
                done, total, unit, 100.0 * done / total, now - p->start);
    else
        fprintf(stderr, "\rafdkit: %s: %s: %.4g %s (%.1f s)   ", p->cmd, p->what, done, unit,
                now - p->start);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown) {
        fprintf(stderr, "\r%*s\r", 78, "");
        fflush(stderr);
    }
    p->shown = 0;
}

/* progress.c: progress reports on stderr for work longer than a few seconds.
 * On a terminal one line rewritten in place (\r); elsewhere (a log, a pipe,
 * a batch job's stderr) one full line every few seconds, so that a long run
 * says what it does wherever its stderr goes. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_DELAY 2.0    /* seconds of silence before the first report */
#define PROGRESS_TTY_EVERY 0.5
#define PROGRESS_LOG_EVERY 3.0 /* off a terminal: one line per this many seconds */

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A nonnegative finite number of seconds from the environment, or -1. */
static double env_seconds(const char *name)
{
    const char *env = getenv(name);
    char *end;
    double d;
    if (env == NULL || *env == '\0')
        return -1;
    d = strtod(env, &end);
    return *end == '\0' && d >= 0 && isfinite(d) ? d : -1;
}

void cli_progress_init(cli_progress *p, const char *cmd, const char *what, int quiet)
{
    const char *env = getenv("AFDKIT_PROGRESS");
    double d;
    p->cmd = cmd;
    p->what = what;
    p->start = cli_now();
    p->last = p->start;
    p->shown = 0;
    p->tty = isatty(STDERR_FILENO);
    p->delay = PROGRESS_DELAY;
    p->every = p->tty ? PROGRESS_TTY_EVERY : PROGRESS_LOG_EVERY;
    p->enabled = !quiet && !(env != NULL && strcmp(env, "off") == 0);
    if ((d = env_seconds("AFDKIT_PROGRESS")) >= 0)
        p->delay = d;
    if ((d = env_seconds("AFDKIT_PROGRESS_EVERY")) >= 0)
        p->every = d;
}

static void show(cli_progress *p, double now, double done, double total, const char *unit)
{
    double t = now - p->start;
    char eta[48] = "";
    p->last = now;
    p->shown = 1;
    p->done_shown = done;
    /* remaining: the elapsed time scaled by the share left, as if the rate so far held */
    if (total > 0 && done > 0)
        snprintf(eta, sizeof eta, ", %.0f s remaining", t * (total - done) / done);
    if (total > 0)
        fprintf(stderr, "%safdkit: %s: %s: %.0f/%.0f %s (%.0f%%, %.1f s elapsed%s)%s",
                p->tty ? "\r" : "", p->cmd, p->what, done, total, unit, 100.0 * done / total, t,
                eta, p->tty ? "   " : "\n");
    else
        fprintf(stderr, "%safdkit: %s: %s: %.4g %s (%.1f s elapsed)%s", p->tty ? "\r" : "", p->cmd,
                p->what, done, unit, t, p->tty ? "   " : "\n");
    fflush(stderr);
}

void cli_progress_update(cli_progress *p, double done, double total, const char *unit)
{
    double now;
    if (!p->enabled)
        return;
    p->done = done;
    p->total = total;
    p->unit = unit;
    now = cli_now();
    if (now - p->start < p->delay ||
        (p->shown && now - p->last < p->every && !(total > 0 && done >= total)))
        return;
    show(p, now, done, total, unit);
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown && !p->tty && p->done != p->done_shown)
        show(p, cli_now(), p->done, p->total, p->unit);
    if (p->shown && p->tty) {
        fprintf(stderr, "\r%*s\r", 100, "");
        fflush(stderr);
    }
    p->shown = 0;
}

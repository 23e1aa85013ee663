/* cmd_plot.c: afdkit plot, one figure (or all) regenerated from scratch:
 * the tables by this same afdkit program through plots/make-tables.sh, the
 * pictures by gnuplot through plots/make-figures.sh.
 *
 * The scripts are looked for in $AFDKIT_PLOTS_DIR, then in the installed
 * data directory (AFD_PLOTS_DIR), then in the source tree the program was
 * built from (AFD_SOURCE_PLOTS_DIR), so that an uninstalled build works. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#ifndef AFD_PLOTS_DIR
#define AFD_PLOTS_DIR ""
#endif
#ifndef AFD_SOURCE_PLOTS_DIR
#define AFD_SOURCE_PLOTS_DIR ""
#endif

enum { OPT_OUT = OPT_COMMAND, OPT_TABLES, OPT_QUICK, OPT_LIST };

static const cli_option plot_options[] = {
    {"out", 'o', "DIR", "directory of the pictures (default: figures)", OPT_OUT},
    {"tables", 't', "DIR", "directory of the tables (default: the --out directory)", OPT_TABLES},
    {"quick", 0, NULL, "fewer simulated requests and trials, coarser grids (for tests)", OPT_QUICK},
    {"list", 'l', NULL, "print the figure names as a table: name files description", OPT_LIST},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group plot_group = {"Options", plot_options};
static const cli_group *const plot_groups[] = {&plot_group, &cli_output_group, NULL};

typedef struct figure {
    const char *name;
    const char *files; /* pictures written, each as .png and .svg */
    const char *description;
} figure;

/* The figures of plots/make-tables.sh and plots/make-figures.sh. */
static const figure figures[] = {
    {"fig3", "fig3-throughput,fig3-tpot,fig3-idle",
     "Figure 3: throughput, TPOT and idle ratios against r, simulated and closed forms"},
    {"fig4a", "fig4a", "Figure 4(a): throughput against r for B = 128, 256, 512"},
    {"fig4b", "fig4b", "Figure 4(b): throughput against r for four prompt/decode lengths"},
    {"table1", "table1", "Table 1: barrier overhead against r, Monte Carlo and CLT"},
    {"fig5", "fig5", "Figure 5: decode-length distributions of the bundled traces"},
    {"mdc", "mdc", "M/D/c: exact mean wait against three approximations over rho"},
    {"map", "map", "provisioning map: r*_mf and r*_G over theta and B"},
    {"gantt", "gantt", "Figure 2: the pipeline's first steps per stage and worker"},
    {"regime", "regime",
     "TaiChi's SLO regime map: the winning mode per TTFT and TPOT SLO (afdkit regime)"},
    {"pareto", "pareto",
     "goodput against cost per configuration, the frontier and the dominated (afdkit pareto)"},
};
#define NFIGURES (sizeof figures / sizeof figures[0])

struct args {
    const char *out;
    const char *tables;
    int quick;
    int list;
    const char *names[NFIGURES];
    size_t n;
};

static void add_name(struct args *a, const char *name)
{
    size_t k;
    for (k = 0; k < a->n; k++)
        if (strcmp(a->names[k], name) == 0)
            return;
    a->names[a->n++] = name;
}

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    char ex[200];
    size_t k;
    if (opt == NULL) {
        if (strcmp(arg, "all") == 0) {
            for (k = 0; k < NFIGURES; k++)
                add_name(a, figures[k].name);
            return 0;
        }
        for (k = 0; k < NFIGURES; k++)
            if (strcmp(arg, figures[k].name) == 0) {
                add_name(a, figures[k].name);
                return 0;
            }
        return cli_usage_error("plot", "unknown figure '%s' ('afdkit plot --list' names them)",
                               cli_excerpt(arg, ex, sizeof ex));
    }
    switch (opt->id) {
    case OPT_OUT:
    case OPT_TABLES:
        if (arg[0] == '\0')
            return cli_usage_error("plot", "--%s: empty directory name", opt->name);
        if (opt->id == OPT_OUT)
            a->out = arg;
        else
            a->tables = arg;
        return 0;
    case OPT_QUICK:
        a->quick = 1;
        return 0;
    case OPT_LIST:
        a->list = 1;
        return 0;
    }
    return cli_usage_error("plot", "internal error: unhandled option --%s", opt->name);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_scripts(const char *dir)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/make-tables.sh", dir);
    return dir[0] != '\0' && n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* The directory of the plot scripts, or NULL after printing an error. */
static const char *plots_dir(const char *cmd)
{
    const char *env = getenv("AFDKIT_PLOTS_DIR");
    char ex[200];
    if (env != NULL && env[0] != '\0') {
        if (has_scripts(env))
            return env;
        cli_runtime_error(cmd, "AFDKIT_PLOTS_DIR=%s holds no make-tables.sh",
                          cli_excerpt(env, ex, sizeof ex));
        return NULL;
    }
    if (has_scripts(AFD_PLOTS_DIR))
        return AFD_PLOTS_DIR;
    if (has_scripts(AFD_SOURCE_PLOTS_DIR))
        return AFD_SOURCE_PLOTS_DIR;
    cli_runtime_error(cmd,
                      "cannot find the plot scripts (not in %s nor %s); set "
                      "AFDKIT_PLOTS_DIR to the plots/ directory of the sources",
                      AFD_PLOTS_DIR[0] ? AFD_PLOTS_DIR : "(none)",
                      AFD_SOURCE_PLOTS_DIR[0] ? AFD_SOURCE_PLOTS_DIR : "(none)");
    return NULL;
}

/* The running program, for the table commands: /proc/self/exe where there
 * is one, else argv[0] (as given: found in PATH by the script if bare). */
static const char *self_path(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n > 0 && (size_t)n < cap - 1) {
        buf[n] = '\0';
        return buf;
    }
    return cli_program_name();
}

/* Is prog an executable file, given as a path or found in PATH?  The full
 * path goes to buf. */
static int find_program(const char *prog, char *buf, size_t cap)
{
    const char *path, *p;
    if (prog == NULL || prog[0] == '\0')
        return 0;
    if (strchr(prog, '/') != NULL) {
        if (access(prog, X_OK) != 0 || is_dir(prog))
            return 0;
        snprintf(buf, cap, "%s", prog);
        return 1;
    }
    path = getenv("PATH");
    if (path == NULL)
        return 0;
    for (p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        int n = len == 0 ? snprintf(buf, cap, "./%s", prog)
                         : snprintf(buf, cap, "%.*s/%s", (int)len, p, prog);
        if (n > 0 && (size_t)n < cap && access(buf, X_OK) == 0 && !is_dir(buf))
            return 1;
        if (end == NULL)
            return 0;
        p = end;
    }
}

/* gnuplot: $AFDKIT_GNUPLOT if set (a path or a name in PATH), else the one
 * found at configure time, else gnuplot in PATH.  0 if there is none. */
static int find_gnuplot(char *buf, size_t cap, const char **tried)
{
    const char *env = getenv("AFDKIT_GNUPLOT");
    if (env != NULL) {
        *tried = env;
        return find_program(env, buf, cap);
    }
    *tried = "gnuplot";
    return find_program(GNUPLOT_PATH, buf, cap) || find_program("gnuplot", buf, cap);
}

/* Run argv (argv[0] a path) with stdout sent to stderr, so that afdkit
 * plot's own stdout stays empty; gnuplot, when given, is exported as
 * GNUPLOT.  Returns the exit status, or -1 after printing an error. */
static int run_child(const char *cmd, char *const argv[], const char *gnuplot)
{
    pid_t pid, w;
    int status;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        cli_runtime_error(cmd, "cannot start %s: %s", argv[0], strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            _exit(127);
        if (gnuplot != NULL && setenv("GNUPLOT", gnuplot, 1) != 0)
            _exit(127);
        execv(argv[0], argv);
        fprintf(stderr, "afdkit: %s: cannot run %s: %s\n", cmd, argv[0], strerror(errno));
        _exit(127);
    }
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
    if (w < 0) {
        cli_runtime_error(cmd, "waiting for %s: %s", argv[0], strerror(errno));
        return -1;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    cli_runtime_error(cmd, "%s was killed by signal %d", argv[1], WTERMSIG(status));
    return -1;
}

static int list(const char *cmd, const cli_output *o)
{
    cli_table *t = cli_table_new(o);
    size_t k;
    if (t == NULL)
        return cli_runtime_error(cmd, "out of memory");
    cli_table_provenance(t);
    cli_table_begin(t, "name", "files", "description");
    for (k = 0; k < NFIGURES; k++) {
        cli_table_str(t, figures[k].name);
        cli_table_str(t, figures[k].files);
        cli_table_str(t, figures[k].description);
        cli_table_end_row(t);
    }
    return cli_table_finish(t, cmd);
}

#define MAX_ARGS (NFIGURES + 8)

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    const char *dir, *tried;
    char tables_sh[4096], figures_sh[4096], self_buf[4096], gnuplot[4096];
    char *targv[MAX_ARGS], *fargv[MAX_ARGS];
    size_t k, nt = 0, nf = 0;
    int rc;

    memset(&a, 0, sizeof a);
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    if (a.list) {
        if (a.n > 0 || a.out != NULL || a.tables != NULL || a.quick)
            return cli_usage_error(cmd, "--list takes no figure names nor other options");
        return list(cmd, &c.out);
    }
    if (a.n == 0)
        return cli_usage_error(cmd, "name a figure, or all ('afdkit plot --list' names them)");
    if (a.out == NULL)
        a.out = "figures";
    if (a.tables == NULL)
        a.tables = a.out;
    if ((dir = plots_dir(cmd)) == NULL)
        return EXIT_RUNTIME;
    if ((size_t)snprintf(tables_sh, sizeof tables_sh, "%s/make-tables.sh", dir) >=
            sizeof tables_sh ||
        (size_t)snprintf(figures_sh, sizeof figures_sh, "%s/make-figures.sh", dir) >=
            sizeof figures_sh)
        return cli_runtime_error(cmd, "the plot directory name is too long");

    /* sh make-tables.sh [--quick] AFDKIT TABLES NAME... */
    targv[nt++] = (char *)"/bin/sh";
    targv[nt++] = tables_sh;
    if (a.quick)
        targv[nt++] = (char *)"--quick";
    targv[nt++] = (char *)self_path(self_buf, sizeof self_buf);
    targv[nt++] = (char *)a.tables;
    for (k = 0; k < a.n; k++)
        targv[nt++] = (char *)a.names[k];
    targv[nt] = NULL;
    rc = run_child(cmd, targv, NULL);
    if (rc != 0)
        return rc < 0 ? EXIT_RUNTIME
                      : cli_runtime_error(cmd, "making the tables failed (%s exited with %d)",
                                          tables_sh, rc);

    if (!find_gnuplot(gnuplot, sizeof gnuplot, &tried)) {
        char ex[200];
        /* Not an error: the tables are there, only the pictures are missing. */
        fprintf(stderr,
                "afdkit: %s: gnuplot not found%s%s%s: tables written to %s, figures "
                "skipped\n",
                cmd, tried[0] ? " ('" : "", cli_excerpt(tried, ex, sizeof ex), tried[0] ? "')" : "",
                a.tables);
        return 0;
    }

    /* sh make-figures.sh TABLES OUT NAME..., GNUPLOT in the environment */
    fargv[nf++] = (char *)"/bin/sh";
    fargv[nf++] = figures_sh;
    fargv[nf++] = (char *)a.tables;
    fargv[nf++] = (char *)a.out;
    for (k = 0; k < a.n; k++)
        fargv[nf++] = (char *)a.names[k];
    fargv[nf] = NULL;
    rc = run_child(cmd, fargv, gnuplot);
    if (rc != 0)
        return rc < 0 ? EXIT_RUNTIME
                      : cli_runtime_error(cmd, "drawing the figures failed (%s exited with %d)",
                                          figures_sh, rc);
    return 0;
}

const cli_command cli_cmd_plot = {
    .name = "plot",
    .path = "plot",
    .summary = "regenerate a figure of the paper (tables and pictures) with gnuplot",
    .usage = "plot NAME...|all [--out DIR] [--tables DIR] [--quick] | plot --list",
    .description =
        "Regenerates figures from scratch: the tables they need, computed by this afdkit\n"
        "program, into the --tables directory (NAME-*.tsv, each starting with the command\n"
        "line that made it), then the pictures, drawn by gnuplot, into the --out\n"
        "directory: PNG (pngcairo) and SVG files named as the files column of --list.\n"
        "Nothing is printed on stdout; the tools' own messages go to stderr.\n"
        "\n"
        "Without gnuplot the tables are still written, a one-line note says that the\n"
        "figures were skipped, and the exit status is 0.  gnuplot is $AFDKIT_GNUPLOT if\n"
        "set (a path or a name looked up in PATH), else the one found when afdkit was\n"
        "configured, else gnuplot in PATH.\n"
        "\n"
        "The work is done by make-tables.sh and make-figures.sh and the NAME.gp scripts,\n"
        "installed with afdkit; $AFDKIT_PLOTS_DIR points to another copy (e.g. the\n"
        "plots/ directory of the sources).  --quick simulates 2,000 requests per\n"
        "Attention instance instead of 10,000, runs 5,000 Monte Carlo trials instead\n"
        "of 50,000 and uses coarser grids: the same figures in a few seconds, noisier.\n"
        "\n"
        "Exit status: 2 for an unknown figure or option, 1 when a table command or\n"
        "gnuplot fails.",
    .groups = plot_groups,
    .run = run,
};

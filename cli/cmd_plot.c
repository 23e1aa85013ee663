/* cmd_plot.c: afdkit plot, one figure (or all) regenerated from scratch:
 * the tables by this same afdkit program through plots/make-tables.sh, the
 * pictures by gnuplot through plots/make-figures.sh.
 *
 * The scripts are looked for in $AFDKIT_PLOTS_DIR, then in the installed
 * data directory (AFD_PLOTS_DIR), then in the source tree the program was
 * built from (AFD_SOURCE_PLOTS_DIR), so that an uninstalled build works. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
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

enum {
    OPT_OUT = OPT_COMMAND, OPT_TABLES, OPT_QUICK, OPT_LIST, OPT_BATCH,
    /* the serving options of regime and pareto, in the order of serving_kinds */
    OPT_SV_MODEL, OPT_SV_DEVICE, OPT_SV_TP, OPT_SV_INSTANCES, OPT_SV_DEVICES, OPT_SV_TTFT,
    OPT_SV_TPOT, OPT_SV_LENGTHS
};
#define NSERVING 8

static const cli_option plot_options[] = {
    {"out", 'o', "DIR", "directory of the pictures (default: figures)", OPT_OUT},
    {"tables", 't', "DIR", "directory of the tables (default: the --out directory)", OPT_TABLES},
    {"quick", 0, NULL, "fewer simulated requests and trials, coarser grids (for tests)", OPT_QUICK},
    {"list", 'l', NULL, "print the figure names as a table: name files description", OPT_LIST},
    {"batch", 'B', "N", "micro-batch size of fig3, fig4b and gantt (default 256)", OPT_BATCH},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_option serving_options[] = {
    {"model", 'm', "NAME|FILE", "model preset or config.json (regime, pareto)", OPT_SV_MODEL},
    {"device", 'd', "NAME|FILE", "device preset or file; pareto: a comma-separated list",
     OPT_SV_DEVICE},
    {"tp", 0, "T", "tensor-parallel size; pareto: a list (regime, pareto)", OPT_SV_TP},
    {"instances", 'n', "N", "instances to configure (regime)", OPT_SV_INSTANCES},
    {"devices", 'N', "N", "at most N devices per configuration (pareto)", OPT_SV_DEVICES},
    {"ttft-slo", 0, "LIST", "TTFT SLOs with units; pareto: one (regime, pareto)", OPT_SV_TTFT},
    {"tpot-slo", 0, "LIST", "TPOT SLOs with units; pareto: one (regime, pareto)", OPT_SV_TPOT},
    {"lengths", 0, "P,G", "fixed prompt and output tokens (regime, pareto)", OPT_SV_LENGTHS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group plot_group = {"Options", plot_options};
static const cli_group serving_group = {"Serving (the options of afdkit regime and pareto)",
                                        serving_options};
static const cli_group *const plot_groups[] = {
    &plot_group, &cli_workload_group, &cli_hw_group, &serving_group, &cli_output_group, NULL};

/* What a figure's tables can be computed from, besides the paper's setting:
 * the workload, the AFD coefficients, -B, and each serving option (bit
 * TAKES_SERVING << k for the k-th of serving_options). */
enum { TAKES_WORKLOAD = 1, TAKES_HW = 2, TAKES_B = 4, TAKES_SERVING = 8 };
#define SV(k) (TAKES_SERVING << ((k) - OPT_SV_MODEL))
#define REGIME_TAKES                                                                              \
    (TAKES_WORKLOAD | SV(OPT_SV_MODEL) | SV(OPT_SV_DEVICE) | SV(OPT_SV_TP) |                      \
     SV(OPT_SV_INSTANCES) | SV(OPT_SV_TTFT) | SV(OPT_SV_TPOT) | SV(OPT_SV_LENGTHS))
#define PARETO_TAKES                                                                              \
    (SV(OPT_SV_MODEL) | SV(OPT_SV_DEVICE) | SV(OPT_SV_TP) | SV(OPT_SV_DEVICES) |                  \
     SV(OPT_SV_TTFT) | SV(OPT_SV_TPOT) | SV(OPT_SV_LENGTHS))

typedef struct figure {
    const char *name;
    const char *files; /* pictures written, each as .png and .svg */
    const char *description;
    int takes;
} figure;

/* The figures of plots/make-tables.sh and plots/make-figures.sh. */
static const figure figures[] = {
    {"fig3", "fig3-throughput,fig3-tpot,fig3-idle",
     "Figure 3: throughput, TPOT and idle ratios against r, simulated and closed forms",
     TAKES_WORKLOAD | TAKES_HW | TAKES_B},
    {"fig4a", "fig4a", "Figure 4(a): throughput against r for B = 128, 256, 512",
     TAKES_WORKLOAD | TAKES_HW},
    {"fig4b", "fig4b", "Figure 4(b): throughput against r for four prompt/decode lengths",
     TAKES_HW | TAKES_B},
    {"table1", "table1", "Table 1: barrier overhead against r, Monte Carlo and CLT",
     TAKES_WORKLOAD | TAKES_B},
    {"fig5", "fig5", "Figure 5: decode-length distributions of the bundled traces",
     TAKES_WORKLOAD},
    {"mdc", "mdc", "M/D/c: exact mean wait against three approximations over rho", 0},
    {"map", "map", "provisioning map: r*_mf and r*_G over theta and B", TAKES_HW},
    {"gantt", "gantt", "Figure 2: the pipeline's first steps per stage and worker",
     TAKES_WORKLOAD | TAKES_HW | TAKES_B},
    {"regime", "regime",
     "TaiChi's SLO regime map: the winning mode per TTFT and TPOT SLO (afdkit regime)",
     REGIME_TAKES},
    {"pareto", "pareto",
     "goodput against cost per configuration, the frontier and the dominated (afdkit pareto)",
     PARETO_TAKES},
};
#define NFIGURES (sizeof figures / sizeof figures[0])

struct args {
    const char *out;
    const char *tables;
    int quick;
    int list;
    double B;
    const char *serving[NSERVING]; /* each serving option as given, NULL: not given */
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
        {
            const char *names[NFIGURES + 1], *near;
            for (k = 0; k < NFIGURES; k++)
                names[k] = figures[k].name;
            names[NFIGURES] = "all";
            near = cli_suggest(arg, strlen(arg), names, NFIGURES + 1);
            if (near != NULL)
                return cli_usage_error("plot", "unknown figure '%s'; did you mean '%s'? "
                                               "('afdkit plot --list' names them)",
                                       cli_excerpt(arg, ex, sizeof ex), near);
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
    case OPT_BATCH:
        return cli_batch("plot", arg, &a->B);
    }
    if (opt->id >= OPT_SV_MODEL && opt->id < OPT_SV_MODEL + NSERVING) {
        if (arg[0] == '\0')
            return cli_usage_error("plot", "--%s: empty value", opt->name);
        a->serving[opt->id - OPT_SV_MODEL] = arg;
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

/* A growing string of shell words, each single-quoted. */
typedef struct words {
    char *s;
    size_t len, cap;
    int oom;
} words;

static void words_add(words *w, const char *word)
{
    const char *c;
    size_t need = w->len + 4 * strlen(word) + 4;
    if (w->oom)
        return;
    if (need > w->cap) {
        size_t cap = need * 2;
        char *p = realloc(w->s, cap);
        if (p == NULL) {
            w->oom = 1;
            return;
        }
        w->s = p;
        w->cap = cap;
    }
    if (w->len > 0)
        w->s[w->len++] = ' ';
    w->s[w->len++] = '\'';
    for (c = word; *c != '\0'; c++) {
        if (*c == '\'') {
            memcpy(w->s + w->len, "'\\''", 4);
            w->len += 4;
        } else {
            w->s[w->len++] = *c;
        }
    }
    w->s[w->len++] = '\'';
    w->s[w->len] = '\0';
}

/* A double as the shortest decimal that reads back to it. */
static void words_real(words *w, double v)
{
    char buf[40];
    int p;
    for (p = 6; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    words_add(w, buf);
}

/* A file name made absolute: the table commands run in another directory. */
static int words_path(const char *cmd, const char *opt, words *w, const char *path)
{
    char buf[PATH_MAX], ex[200];
    if (realpath(path, buf) == NULL)
        return cli_usage_error(cmd, "--%s: cannot open '%s': %s", opt,
                               cli_excerpt(path, ex, sizeof ex), strerror(errno));
    words_add(w, buf);
    return 0;
}

/* The workload options as words for the table commands (none given: empty). */
static int workload_words(const char *cmd, const cli_workload_args *a, words *w)
{
    const afd_trace_options *c = &a->topt.columns;
    size_t k;
    int rc;
    if (a->trace != NULL) {
        words_add(w, "--trace");
        if ((rc = words_path(cmd, "trace", w, a->trace)) != 0)
            return rc;
        if (c->prompt_col != NULL) {
            words_add(w, "--prompt-col");
            words_add(w, c->prompt_col);
        }
        if (c->output_col != NULL) {
            words_add(w, "--output-col");
            words_add(w, c->output_col);
        }
        if (c->time_col != NULL) {
            words_add(w, "--time-col");
            words_add(w, c->time_col[0] == '\0' ? "none" : c->time_col);
        }
        if (c->time_unit != NULL) {
            words_add(w, "--time-unit");
            words_add(w, c->time_unit);
        }
        if (c->format != NULL) {
            words_add(w, "--format");
            words_add(w, c->format);
        }
        for (k = 0; k < c->n_where; k++) {
            char buf[CLI_WHERE_NAME_MAX + 4096];
            snprintf(buf, sizeof buf, "%s=%s", a->where[k].column, a->where[k].value);
            words_add(w, "--where");
            words_add(w, buf);
        }
        if (a->decode_offset_set) {
            char buf[32];
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)a->topt.decode_offset);
            words_add(w, "--decode-offset");
            words_add(w, buf);
        }
    } else if (a->geometric) {
        words_add(w, "--geometric");
        words_add(w, "--mu-p");
        words_real(w, a->mu_p);
        words_add(w, "--mu-d");
        words_real(w, a->mu_d);
    }
    return 0;
}

/* The hardware options as words: the preset or the file, then overrides. */
static int hw_words(const char *cmd, const cli_hw_args *a, words *w)
{
    static const char *const names[6] = {"--alpha-a", "--beta-a", "--alpha-f",
                                         "--beta-f",  "--alpha-c", "--beta-c"};
    afd_hw probe;
    int k, rc;
    if (a->hw != NULL) {
        words_add(w, "--hw");
        if (afd_hw_preset(a->hw, &probe) == AFD_OK)
            words_add(w, a->hw);
        else if ((rc = words_path(cmd, "hw", w, a->hw)) != 0)
            return rc;
    }
    for (k = 0; k < 6; k++)
        if (a->have[k]) {
            words_add(w, names[k]);
            words_add(w, a->arg[k]); /* as given: a unit is converted by the command */
        }
    return 0;
}

static const figure *find_figure(const char *name)
{
    size_t k;
    for (k = 0; k < NFIGURES; k++)
        if (strcmp(figures[k].name, name) == 0)
            return &figures[k];
    return NULL;
}

/* Every named figure must take each kind of option given. */
static int check_takes(const char *cmd, const struct args *a, int given)
{
    static const struct {
        int flag;
        const char *what;
    } kinds[3 + NSERVING] = {
        {TAKES_WORKLOAD, "workload options (--trace, --geometric, ...)"},
        {TAKES_HW, "hardware options (--hw, --alpha-a, ...)"},
        {TAKES_B, "-B"},
        {SV(OPT_SV_MODEL), "--model"},
        {SV(OPT_SV_DEVICE), "--device"},
        {SV(OPT_SV_TP), "--tp"},
        {SV(OPT_SV_INSTANCES), "--instances"},
        {SV(OPT_SV_DEVICES), "--devices"},
        {SV(OPT_SV_TTFT), "--ttft-slo"},
        {SV(OPT_SV_TPOT), "--tpot-slo"},
        {SV(OPT_SV_LENGTHS), "--lengths"},
    };
    size_t k, i;
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char list[200] = "";
        size_t o = 0;
        if (!(given & kinds[i].flag))
            continue;
        for (k = 0; k < NFIGURES; k++)
            if (figures[k].takes & kinds[i].flag)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? " " : "",
                                      figures[k].name);
        for (k = 0; k < a->n; k++)
            if (!(find_figure(a->names[k])->takes & kinds[i].flag))
                return cli_usage_error(cmd, "%s takes no %s; those that do: %s", a->names[k],
                                       kinds[i].what, list);
    }
    return 0;
}

/* Is name one of the presets listed by preset_name(0), preset_name(1), ...? */
static int is_preset(const char *name, const char *(*preset_name)(size_t))
{
    size_t i;
    for (i = 0; preset_name(i) != NULL; i++)
        if (strcmp(preset_name(i), name) == 0)
            return 1;
    return 0;
}

/* --model and --device checked by loading them, as regime and pareto will,
 * and given to the table commands as the preset's name or the file's
 * absolute path (comma-separated for a --device list).  The words go to
 * out; 0 or the exit code after printing an error. */
static int serving_paths(const char *cmd, const char *opt, const char *arg, char *out,
                         size_t cap)
{
    char item[PATH_MAX], abs[PATH_MAX], ex[200];
    const char *p = arg;
    size_t o = 0;
    int is_model = strcmp(opt, "model") == 0;
    out[0] = '\0';
    for (;;) {
        const char *end = is_model ? NULL : strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        const char *word;
        int rc, n;
        if (len == 0 || len >= sizeof item)
            return cli_usage_error(cmd, "--%s: empty or too long item in '%s'", opt,
                                   cli_excerpt(arg, ex, sizeof ex));
        memcpy(item, p, len);
        item[len] = '\0';
        if (is_model) {
            afd_model m;
            rc = cli_load_model(cmd, item, &m);
        } else {
            afd_device d;
            rc = cli_load_device(cmd, item, &d);
        }
        if (rc != 0)
            return rc;
        word = item;
        if (!is_preset(item, is_model ? afd_model_preset_name : afd_device_preset_name)) {
            if (realpath(item, abs) == NULL)
                return cli_usage_error(cmd, "--%s: cannot open '%s': %s", opt,
                                       cli_excerpt(item, ex, sizeof ex), strerror(errno));
            word = abs;
        }
        n = snprintf(out + o, cap - o, "%s%s", o ? "," : "", word);
        if (n < 0 || (size_t)n >= cap - o)
            return cli_usage_error(cmd, "--%s: too long: '%s'", opt,
                                   cli_excerpt(arg, ex, sizeof ex));
        o += (size_t)n;
        if (end == NULL)
            return 0;
        p = end + 1;
    }
}

/* The integer serving options (--tp, --instances, --devices): checked as
 * lists of positive integers here, so that a mistake is one line from plot;
 * the table commands check the rest (one value where they take one). */
static int serving_integers(const char *cmd, const char *opt, const char *arg)
{
    cli_list l;
    int rc = cli_list_parse(cmd, opt, arg, 1, 1, 1 << 20, &l);
    if (rc == 0)
        cli_list_free(&l);
    return rc;
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

#define MAX_ARGS (NFIGURES + 14 + 2 * NSERVING)

/* Run argv[0..at) with one figure name appended, for each of the n names in
 * turn (one at a time, so that progress can be reported between them);
 * the progress counts 2n steps, of which `done` came before.  0, or the exit
 * code after ending the progress and printing "WHAT failed". */
static int run_each(const char *cmd, char **argv, size_t at, const char *const *names, size_t n,
                    const char *gnuplot, cli_progress *prog, size_t done, const char *what,
                    const char *script)
{
    size_t k;
    for (k = 0; k < n; k++) {
        int rc;
        argv[at] = (char *)names[k];
        argv[at + 1] = NULL;
        rc = run_child(cmd, argv, gnuplot);
        if (rc != 0) {
            cli_progress_end(prog);
            return rc < 0 ? EXIT_RUNTIME
                          : cli_runtime_error(cmd, "%s failed (%s exited with %d)", what, script,
                                              rc);
        }
        cli_progress_update(prog, (double)(done + k) + 1, 2.0 * (double)n, "steps");
    }
    return 0;
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    const char *dir, *tried;
    char tables_sh[4096], figures_sh[4096], self_buf[4096], gnuplot[4096];
    char *targv[MAX_ARGS], *fargv[MAX_ARGS];
    char batch[32], model_word[PATH_MAX], device_word[8 * PATH_MAX];
    cli_progress prog;
    words wl = {NULL, 0, 0, 0}, hw = {NULL, 0, 0, 0};
    size_t nt = 0, nf = 0, k;
    int rc, given, k6;

    memset(&a, 0, sizeof a);
    a.B = NAN;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    given = (!isnan(a.B) ? TAKES_B : 0) | (c.hw.hw != NULL ? TAKES_HW : 0) |
            (c.wl.trace != NULL || c.wl.geometric || c.wl.have_mu_p || c.wl.have_mu_d ||
                     c.wl.have_theta || c.wl.have_nu
                 ? TAKES_WORKLOAD
                 : 0);
    for (k6 = 0; k6 < 6; k6++)
        if (c.hw.have[k6])
            given |= TAKES_HW;
    for (k = 0; k < NSERVING; k++)
        if (a.serving[k] != NULL)
            given |= TAKES_SERVING << k;
    if (a.list) {
        if (a.n > 0 || a.out != NULL || a.tables != NULL || a.quick || given)
            return cli_usage_error(cmd, "--list takes no figure names nor other options");
        return list(cmd, &c.out);
    }
    if (a.n == 0)
        return cli_usage_error(cmd, "name a figure, or all ('afdkit plot --list' names them)");
    if ((rc = check_takes(cmd, &a, given)) != 0)
        return rc;
    if (c.wl.trace == NULL && (c.wl.geometric || c.wl.have_mu_p || c.wl.have_mu_d))
        for (k = 0; k < a.n; k++)
            if (strcmp(a.names[k], "fig5") == 0)
                return cli_usage_error(cmd, "fig5 draws the decode lengths of a trace: give "
                                            "--trace FILE");
    /* The options are checked here as the table commands would, so that a
     * mistake is one line from plot rather than a failing script. */
    if (given & TAKES_WORKLOAD) {
        afd_workload w;
        if (c.wl.trace != NULL && strcmp(c.wl.trace, "-") == 0)
            return cli_usage_error(cmd, "--trace -: several table commands read the trace; "
                                        "give a file");
        if (c.wl.have_theta || c.wl.have_nu)
            return cli_usage_error(cmd, "--theta/--nu do not define request lengths; the "
                                        "figures simulate: give --trace or --geometric");
        if ((rc = cli_workload_load(cmd, &c.wl, CLI_WL_NEEDS_LENGTHS, 0, &c.out, &w)) != 0)
            return rc;
        afd_workload_free(&w);
        if ((rc = workload_words(cmd, &c.wl, &wl)) != 0)
            goto out;
    }
    if (given & TAKES_HW) {
        /* Overrides alone apply to the figures' own preset. */
        cli_hw_args base = c.hw;
        afd_hw h;
        int all = 1;
        for (k6 = 0; k6 < 6; k6++)
            all &= base.have[k6];
        if (base.hw == NULL && !all)
            base.hw = "paper-910c";
        if ((rc = cli_hw_load(cmd, &base, &h)) != 0 || (rc = hw_words(cmd, &base, &hw)) != 0)
            goto out;
    }
    if (a.serving[OPT_SV_MODEL - OPT_SV_MODEL] != NULL &&
        (rc = serving_paths(cmd, "model", a.serving[OPT_SV_MODEL - OPT_SV_MODEL], model_word,
                            sizeof model_word)) != 0)
        goto out;
    if (a.serving[OPT_SV_DEVICE - OPT_SV_MODEL] != NULL &&
        (rc = serving_paths(cmd, "device", a.serving[OPT_SV_DEVICE - OPT_SV_MODEL], device_word,
                            sizeof device_word)) != 0)
        goto out;
    if ((a.serving[OPT_SV_TP - OPT_SV_MODEL] != NULL &&
         (rc = serving_integers(cmd, "tp", a.serving[OPT_SV_TP - OPT_SV_MODEL])) != 0) ||
        (a.serving[OPT_SV_INSTANCES - OPT_SV_MODEL] != NULL &&
         (rc = serving_integers(cmd, "instances", a.serving[OPT_SV_INSTANCES - OPT_SV_MODEL])) !=
             0) ||
        (a.serving[OPT_SV_DEVICES - OPT_SV_MODEL] != NULL &&
         (rc = serving_integers(cmd, "devices", a.serving[OPT_SV_DEVICES - OPT_SV_MODEL])) != 0))
        goto out;
    if (wl.oom || hw.oom) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    if (a.out == NULL)
        a.out = "figures";
    if (a.tables == NULL)
        a.tables = a.out;
    if ((dir = plots_dir(cmd)) == NULL) {
        rc = EXIT_RUNTIME;
        goto out;
    }
    if ((size_t)snprintf(tables_sh, sizeof tables_sh, "%s/make-tables.sh", dir) >=
            sizeof tables_sh ||
        (size_t)snprintf(figures_sh, sizeof figures_sh, "%s/make-figures.sh", dir) >=
            sizeof figures_sh) {
        rc = cli_runtime_error(cmd, "the plot directory name is too long");
        goto out;
    }

    /* sh make-tables.sh [--quick] [--workload WORDS] [--hw WORDS] [-B N]
     *    [--model M] [--device D] ... AFDKIT TABLES NAME... */
    targv[nt++] = (char *)"/bin/sh";
    targv[nt++] = tables_sh;
    if (a.quick)
        targv[nt++] = (char *)"--quick";
    if (wl.s != NULL) {
        targv[nt++] = (char *)"--workload";
        targv[nt++] = wl.s;
    }
    if (hw.s != NULL) {
        targv[nt++] = (char *)"--hw";
        targv[nt++] = hw.s;
    }
    if (!isnan(a.B)) {
        snprintf(batch, sizeof batch, "%.0f", a.B);
        targv[nt++] = (char *)"-B";
        targv[nt++] = batch;
    }
    for (k = 0; k < NSERVING; k++) {
        static const char *const flags[NSERVING] = {
            "--model", "--device", "--tp", "--instances",
            "--devices", "--ttft-slo", "--tpot-slo", "--lengths"};
        if (a.serving[k] == NULL)
            continue;
        targv[nt++] = (char *)flags[k];
        targv[nt++] = k == OPT_SV_MODEL - OPT_SV_MODEL    ? model_word
                      : k == OPT_SV_DEVICE - OPT_SV_MODEL ? device_word
                                                          : (char *)a.serving[k];
    }
    targv[nt++] = (char *)self_path(self_buf, sizeof self_buf);
    targv[nt++] = (char *)a.tables;
    /* One figure at a time, so that progress can be reported between them:
     * every table first, then every picture. */
    cli_progress_init(&prog, cmd, "tables, then pictures", c.out.quiet);
    if ((rc = run_each(cmd, targv, nt, a.names, a.n, NULL, &prog, 0, "making the tables",
                       tables_sh)) != 0)
        goto out;

    if (!find_gnuplot(gnuplot, sizeof gnuplot, &tried)) {
        char ex[200];
        cli_progress_end(&prog);
        /* Not an error: the tables are there, only the pictures are missing. */
        fprintf(stderr,
                "afdkit: %s: gnuplot not found%s%s%s: tables written to %s, figures "
                "skipped\n",
                cmd, tried[0] ? " ('" : "", cli_excerpt(tried, ex, sizeof ex), tried[0] ? "')" : "",
                a.tables);
        rc = 0;
        goto out;
    }

    /* sh make-figures.sh TABLES OUT NAME, GNUPLOT in the environment */
    fargv[nf++] = (char *)"/bin/sh";
    fargv[nf++] = figures_sh;
    fargv[nf++] = (char *)a.tables;
    fargv[nf++] = (char *)a.out;
    if ((rc = run_each(cmd, fargv, nf, a.names, a.n, gnuplot, &prog, a.n, "drawing the figures",
                       figures_sh)) != 0)
        goto out;
    cli_progress_end(&prog);
out:
    free(wl.s);
    free(hw.s);
    return rc;
}

const cli_command cli_cmd_plot = {
    .name = "plot",
    .path = "plot",
    .summary = "regenerate a figure of the paper (tables and pictures) with gnuplot",
    .usage = "plot NAME...|all [--out DIR] [--tables DIR] [--quick] [WORKLOAD] [HARDWARE] [-B N]\n"
             "       [SERVING] | plot --list",
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
        "The paper's setting is the default: the geometric workload with mu_P = 100 and\n"
        "mu_D = 500, the paper-910c coefficients, B = 256.  The figures computed from a\n"
        "workload and a latency model take the options of the commands behind them and\n"
        "draw your data instead: the workload options (--trace FILE or --geometric) for\n"
        "fig3, fig4a, table1, gantt and regime, and --trace for fig5 (one histogram\n"
        "with bins of 20 per decade instead of the two bundled traces); the hardware\n"
        "options (--hw FILE, or coefficients overriding paper-910c) for fig3, fig4a,\n"
        "fig4b, map and gantt; -B for fig3, fig4b, table1 and gantt; and the serving\n"
        "options of afdkit regime and pareto for those two (each replaces the figure's\n"
        "own value of it: regime draws llama-3.1-70b on 8 instances of 4\n"
        "notebooks-data/devices/h100-sxm-round.device over the conversation trace,\n"
        "pareto llama-3.1-8b on up to 8 of h100-sxm,a100-80g at --lengths 1000,100,\n"
        "--ttft-slo 500ms --tpot-slo 50ms).  Naming a figure that does not take an\n"
        "option given is an error.  Titles and time units come from the tables (the\n"
        "trace's, model's and latency file's names, the file's unit); the paper's\n"
        "printed values are drawn only beside the paper's own setting.\n"
        "\n"
        "Exit status: 2 for an unknown figure or option, 1 when a table command or\n"
        "gnuplot fails.",
    .groups = plot_groups,
    .run = run,
};

/* main.c: afdkit's entry point and subcommand dispatch table. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli.h"

/* The dispatch table: one entry per top-level command, in help order. */
static const cli_command *const commands[] = {
    &cli_cmd_theta,
    &cli_cmd_kappa,
    &cli_cmd_ratio,
    &cli_cmd_sweep,
    &cli_cmd_model,
    &cli_cmd_estimate,
    &cli_cmd_hw,
    &cli_cmd_calibrate,
    &cli_cmd_sim,
    &cli_cmd_mc,
    &cli_cmd_mdc,
    &cli_cmd_pipeline,
    &cli_cmd_offload,
    &cli_cmd_twotier,
    &cli_cmd_kvretrieve,
    &cli_cmd_pd,
    &cli_cmd_goodput,
    &cli_cmd_serve,
    &cli_cmd_strategies,
    &cli_cmd_plan,
    &cli_cmd_regime,
    &cli_cmd_pareto,
    &cli_cmd_hist,
    &cli_cmd_plot,
    &cli_cmd_merge,
    NULL,
};

static void print_usage(FILE *f)
{
    const cli_command *const *c;
    fprintf(f, "Usage: afdkit [-h|--help] [-V|--version] COMMAND [OPTIONS]\n"
               "       afdkit help COMMAND\n"
               "       afdkit help --presets\n\n"
               "Provisioning of Attention/FFN-disaggregated LLM serving from request traces.\n\n"
               "Commands:\n");
    for (c = commands; *c != NULL; c++)
        fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->summary);
    fprintf(f, "  %-10s %s\n", "help", "show the help of a command");
    fprintf(f, "\nWorkloads: --trace FILE | --geometric --mu-p MP --mu-d MD | --theta X --nu Y\n"
               "Output: a table with one '# ' header line and tab-separated rows (--csv for CSV).\n"
               "Exit status: 0 success, 1 runtime failure, 2 usage or input error.\n"
               "Run 'afdkit COMMAND --help' for a command's options.\n");
}

static const cli_command *lookup(const cli_command *const *table, const char *name)
{
    for (; *table != NULL; table++)
        if (strcmp((*table)->name, name) == 0)
            return *table;
    return NULL;
}

/* Follow "mc barrier"-style paths; *used counts the words consumed. */
static const cli_command *resolve(int argc, char **argv, int *used)
{
    const cli_command *c = lookup(commands, argv[0]);
    *used = 1;
    while (c != NULL && c->subcommands != NULL && *used < argc) {
        const cli_command *sub = lookup(c->subcommands, argv[*used]);
        if (sub == NULL)
            break;
        c = sub;
        (*used)++;
    }
    return c;
}

/* The command of table closest to name, if one is close enough. */
static const char *suggest(const cli_command *const *table, const char *name)
{
    const char *names[64];
    size_t n = 0;
    for (; *table != NULL && n < 64; table++)
        names[n++] = (*table)->name;
    return cli_suggest(name, strlen(name), names, n);
}

/* Every write to stdout is checked: rc unchanged, or 1 after a message
 * when stdout could not be written (a full disk, a closed pipe). */
static int finish_stdout(const char *cmd, int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    if (rc != 0)
        return rc;
    if (cmd != NULL)
        fprintf(stderr, "afdkit: %s: cannot write to stdout: %s\n", cmd,
                errno != 0 ? strerror(errno) : "write error");
    else
        fprintf(stderr, "afdkit: cannot write to stdout: %s\n",
                errno != 0 ? strerror(errno) : "write error");
    return EXIT_RUNTIME;
}

/* afdkit help --presets: the names --hw, --model and --device accept besides
 * a file (the man page and the shell completion list them). */
static int list_presets(void)
{
    size_t i;
    const char *name;
    printf("# option\tname\n");
    for (i = 0; (name = afd_hw_preset_name(i)) != NULL; i++)
        printf("hw\t%s\n", name);
    for (i = 0; (name = afd_model_preset_name(i)) != NULL; i++)
        printf("model\t%s\n", name);
    for (i = 0; (name = afd_device_preset_name(i)) != NULL; i++)
        printf("device\t%s\n", name);
    return finish_stdout("help", 0);
}

static int help(int argc, char **argv)
{
    const cli_command *c;
    char ex[200];
    int used;
    if (argc == 0) {
        print_usage(stdout);
        return finish_stdout("help", 0);
    }
    if (argc == 1 && strcmp(argv[0], "--presets") == 0)
        return list_presets();
    c = resolve(argc, argv, &used);
    if (c == NULL || used != argc) {
        /* the word not found: the command, or a group's subcommand */
        const char *word = argv[used < argc && c != NULL ? used : 0];
        const char *s = suggest(c != NULL && c->subcommands != NULL ? c->subcommands : commands,
                                word);
        cli_excerpt(word, ex, sizeof ex);
        if (s != NULL)
            fprintf(stderr, "afdkit: help: unknown command '%s'; did you mean '%s'? (see "
                            "'afdkit --help')\n",
                    ex, s);
        else
            fprintf(stderr, "afdkit: help: unknown command '%s' (see 'afdkit --help')\n", ex);
        return EXIT_USAGE;
    }
    cli_print_help(c);
    return finish_stdout("help", 0);
}

int main(int argc, char **argv)
{
    const cli_command *c;
    char ex[200];
    int used, rc;

    gsl_set_error_handler_off();
    cli_set_command_line(argc, argv);

    if (argc < 2) {
        print_usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        if (argc > 2) /* afdkit --help COMMAND is afdkit help COMMAND */
            return help(argc - 2, argv + 2);
        print_usage(stdout);
        return finish_stdout(NULL, 0);
    }
    if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
        if (argc > 2) {
            fprintf(stderr, "afdkit: %s takes no argument: unexpected '%s' (see 'afdkit --help')\n",
                    argv[1], cli_excerpt(argv[2], ex, sizeof ex));
            return EXIT_USAGE;
        }
        printf("afdkit %s\n", PACKAGE_VERSION);
        return finish_stdout(NULL, 0);
    }
    if (strcmp(argv[1], "help") == 0)
        return help(argc - 2, argv + 2);
    if (argv[1][0] == '-') {
        static const char *const top[] = {"--help", "--version"};
        const char *s = cli_suggest(argv[1], strlen(argv[1]), top, 2);
        if (s != NULL)
            fprintf(stderr, "afdkit: unknown option '%s'; did you mean '%s'? (see 'afdkit "
                            "--help')\n",
                    cli_excerpt(argv[1], ex, sizeof ex), s);
        else
            fprintf(stderr, "afdkit: unknown option '%s' (see 'afdkit --help')\n",
                    cli_excerpt(argv[1], ex, sizeof ex));
        return EXIT_USAGE;
    }

    c = resolve(argc - 1, argv + 1, &used);
    if (c == NULL) {
        const char *s = suggest(commands, cli_excerpt(argv[1], ex, sizeof ex));
        if (s != NULL)
            fprintf(stderr, "afdkit: unknown command '%s'; did you mean '%s'? (see 'afdkit "
                            "--help')\n",
                    cli_excerpt(argv[1], ex, sizeof ex), s);
        else
            fprintf(stderr, "afdkit: unknown command '%s' (see 'afdkit --help')\n", cli_excerpt(argv[1], ex, sizeof ex));
        return EXIT_USAGE;
    }
    if (c->run == NULL) {
        /* A command group such as "mc" without a valid subcommand. */
        if (used < argc - 1 && strcmp(argv[used + 1], "-h") != 0 &&
            strcmp(argv[used + 1], "--help") != 0) {
            const char *s = suggest(c->subcommands, argv[used + 1]);
            if (s != NULL)
                fprintf(stderr, "afdkit: %s: unknown subcommand '%s'; did you mean '%s'? (see "
                                "'afdkit %s --help')\n",
                        c->path, cli_excerpt(argv[used + 1], ex, sizeof ex), s, c->path);
            else
                fprintf(stderr, "afdkit: %s: unknown subcommand '%s' (see 'afdkit %s --help')\n",
                        c->path, cli_excerpt(argv[used + 1], ex, sizeof ex), c->path);
            return EXIT_USAGE;
        }
        if (used < argc - 1) {
            cli_print_help(c);
            return finish_stdout(c->path, 0);
        }
        fprintf(stderr, "afdkit: %s: missing subcommand (see 'afdkit %s --help')\n", c->path,
                c->path);
        return EXIT_USAGE;
    }
    rc = c->run(c, argc - used, argv + used);
    return finish_stdout(c->path, rc);
}

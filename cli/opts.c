/* opts.c: messages, the option iterator and generated --help. */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* ---- messages */

static void vmessage(const char *cmd, const char *prefix, const char *fmt, va_list ap,
                     const char *suffix) CLI_PRINTF(3, 0);

static void vmessage(const char *cmd, const char *prefix, const char *fmt, va_list ap,
                     const char *suffix)
{
    char text[1024], shown[sizeof text * 4];
    size_t k, o = 0;
    vsnprintf(text, sizeof text, fmt, ap);
    /* One line, always, and no terminal control sequences from an argument:
     * control bytes (none is in a format string) are shown as \xNN. */
    for (k = 0; text[k] != '\0'; k++) {
        unsigned char c = (unsigned char)text[k];
        if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", c);
        else
            shown[o++] = (char)c;
    }
    shown[o] = '\0';
    fflush(stdout);
    if (cmd != NULL)
        fprintf(stderr, "afdkit: %s: %s%s%s\n", cmd, prefix, shown, suffix);
    else
        fprintf(stderr, "afdkit: %s%s%s\n", prefix, shown, suffix);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char hint[128];
    va_list ap;
    snprintf(hint, sizeof hint, " (see 'afdkit %s --help')", cmd != NULL ? cmd : "");
    va_start(ap, fmt);
    vmessage(cmd, "", fmt, ap, hint);
    va_end(ap);
    return EXIT_USAGE;
}

int cli_input_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, "", fmt, ap, "");
    va_end(ap);
    return EXIT_USAGE;
}

int cli_runtime_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, "", fmt, ap, "");
    va_end(ap);
    return EXIT_RUNTIME;
}

int cli_infeasible(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, "", fmt, ap, "");
    va_end(ap);
    return EXIT_RUNTIME;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, "warning: ", fmt, ap, "");
    va_end(ap);
}

int cli_exit_code(afd_status st)
{
    switch (st) {
    case AFD_OK: return 0;
    case AFD_EIO:
    case AFD_ENOMEM:
    case AFD_ENUMERIC:
    case AFD_EUNSTABLE:
    case AFD_EINFINITE: return EXIT_RUNTIME;
    case AFD_ELIMIT: /* the input asks for more than is supported */
    default: return EXIT_USAGE;
    }
}

static void message(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

static void message(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, "", fmt, ap, "");
    va_end(ap);
}

int cli_file_error(const char *cmd, const char *path, afd_status st, const afd_error *err)
{
    const char *text = err != NULL && err->text[0] != '\0' ? err->text : afd_strerror(st);
    if (err != NULL && err->line > 0 && err->column > 0)
        message(cmd, "%s:%ld:%ld: %s", path, err->line, err->column, text);
    else if (err != NULL && err->line > 0)
        message(cmd, "%s:%ld: %s", path, err->line, text);
    else
        message(cmd, "%s: %s", path, text);
    return cli_exit_code(st);
}

/* ---- option iterator */

void cli_parser_init(cli_parser *p, const cli_command *cmd, int argc, char **argv)
{
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
    p->no_more_options = 0;
}

static const cli_option *find_long(const cli_command *cmd, const char *name, size_t len)
{
    const cli_group *const *g;
    const cli_option *o;
    if (cmd->groups == NULL)
        return NULL;
    for (g = cmd->groups; *g != NULL; g++)
        for (o = (*g)->options; o->name != NULL; o++)
            if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
                return o;
    return NULL;
}

static const cli_option *find_short(const cli_command *cmd, char c)
{
    const cli_group *const *g;
    const cli_option *o;
    if (cmd->groups == NULL)
        return NULL;
    for (g = cmd->groups; *g != NULL; g++)
        for (o = (*g)->options; o->name != NULL; o++)
            if (o->short_name == c)
                return o;
    return NULL;
}

int cli_next(cli_parser *p, const cli_option **opt, const char **arg)
{
    const char *a;
    *opt = NULL;
    *arg = NULL;
    if (p->i >= p->argc)
        return CLI_DONE;
    a = p->argv[p->i++];

    if (p->no_more_options || a[0] != '-' || a[1] == '\0') {
        *arg = a;
        return CLI_POSITIONAL;
    }
    if (strcmp(a, "--") == 0) {
        p->no_more_options = 1;
        return cli_next(p, opt, arg);
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
        return CLI_HELP;

    if (a[1] == '-') {
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        const cli_option *o = find_long(p->cmd, name, len);
        if (o == NULL) {
            cli_usage_error(p->cmd->path, "unknown option '--%.*s'", (int)len, name);
            return CLI_ERROR;
        }
        *opt = o;
        if (o->arg == NULL) {
            if (eq != NULL) {
                cli_usage_error(p->cmd->path, "option '--%s' takes no value", o->name);
                return CLI_ERROR;
            }
            return CLI_OPTION;
        }
        if (eq != NULL) {
            *arg = eq + 1;
            return CLI_OPTION;
        }
        if (p->i >= p->argc) {
            cli_usage_error(p->cmd->path, "option '--%s' needs a value %s", o->name, o->arg);
            return CLI_ERROR;
        }
        *arg = p->argv[p->i++];
        return CLI_OPTION;
    }

    /* Short option: "-B 256" or "-B256".  A negative number is not an option
     * name, but reaching here with one means a value was missing. */
    {
        const cli_option *o = find_short(p->cmd, a[1]);
        if (o == NULL) {
            cli_usage_error(p->cmd->path, "unknown option '%s'", a);
            return CLI_ERROR;
        }
        *opt = o;
        if (o->arg == NULL) {
            if (a[2] != '\0') {
                cli_usage_error(p->cmd->path, "option '-%c' takes no value", a[1]);
                return CLI_ERROR;
            }
            return CLI_OPTION;
        }
        if (a[2] != '\0') {
            *arg = a + 2;
            return CLI_OPTION;
        }
        if (p->i >= p->argc) {
            cli_usage_error(p->cmd->path, "option '-%c' needs a value %s", a[1], o->arg);
            return CLI_ERROR;
        }
        *arg = p->argv[p->i++];
        return CLI_OPTION;
    }
}

/* ---- help */

static void print_wrapped(const char *text, int indent)
{
    /* Descriptions are pre-formatted; indent every line. */
    const char *s = text;
    while (*s != '\0') {
        const char *nl = strchr(s, '\n');
        size_t len = nl != NULL ? (size_t)(nl - s) : strlen(s);
        if (len > 0)
            printf("%*s%.*s\n", indent, "", (int)len, s);
        else
            printf("\n");
        s += len;
        if (*s == '\n')
            s++;
    }
}

void cli_print_help(const cli_command *cmd)
{
    const cli_group *const *g;
    const cli_option *o;
    printf("Usage: afdkit %s\n\n", cmd->usage);
    printf("%s\n", cmd->summary);
    if (cmd->description != NULL && cmd->description[0] != '\0') {
        printf("\n");
        print_wrapped(cmd->description, 2);
    }
    if (cmd->subcommands != NULL) {
        const cli_command *const *c;
        printf("\nSubcommands:\n");
        for (c = cmd->subcommands; *c != NULL; c++)
            printf("  %-10s %s\n", (*c)->name, (*c)->summary);
        printf("\nRun 'afdkit %s SUBCOMMAND --help' for details.\n", cmd->path);
    }
    if (cmd->groups != NULL) {
        for (g = cmd->groups; *g != NULL; g++) {
            printf("\n%s:\n", (*g)->title);
            for (o = (*g)->options; o->name != NULL; o++) {
                char left[64];
                if (o->short_name != 0)
                    snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name,
                             o->arg ? " " : "", o->arg ? o->arg : "");
                else
                    snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "",
                             o->arg ? o->arg : "");
                if (strlen(left) > 26)
                    printf("  %s\n  %-26s  %s\n", left, "", o->help);
                else
                    printf("  %-26s  %s\n", left, o->help);
            }
        }
    }
    printf("\n  -h, --help                  show this help\n");
}

/* opts.c: messages, the option iterator and generated --help. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ---- messages */

/* Values echoed in messages are quoted ('...'); copy in to out with every
 * quoted span longer than CLI_EXCERPT_MAX bytes cut there (at a UTF-8
 * character boundary) and marked "...", so that no message repeats a long
 * value whole, whichever call site formatted it. */
static void cut_quoted(const char *in, char *out, size_t cap)
{
    size_t i = 0, o = 0;
    while (in[i] != '\0' && o + 1 < cap) {
        const char *close;
        size_t n, keep;
        out[o++] = in[i];
        if (in[i++] != '\'' || (close = strchr(in + i, '\'')) == NULL)
            continue;
        n = (size_t)(close - (in + i));
        keep = n;
        if (n > CLI_EXCERPT_MAX) {
            keep = CLI_EXCERPT_MAX;
            while (keep > 0 && ((unsigned char)in[i + keep] & 0xc0) == 0x80)
                keep--;
        }
        if (o + keep + 5 >= cap)
            break;
        memcpy(out + o, in + i, keep);
        o += keep;
        if (keep < n) {
            memcpy(out + o, "...", 3);
            o += 3;
        }
        out[o++] = '\'';
        i += n + 1;
    }
    out[o] = '\0';
}

/* Excerpts of arguments (cli.h): at most CLI_EXCERPT_MAX bytes, control
 * and non-ASCII bytes as \xNN, so that a message stays on one line. */
const char *cli_excerpt_n(const char *s, size_t len, char *buf, size_t cap)
{
    size_t o = 0, i;
    for (i = 0; i < len && s[i] != '\0' && i < CLI_EXCERPT_MAX && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    if (i < len && s[i] != '\0' && o + 4 < cap) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

const char *cli_excerpt(const char *s, char *buf, size_t cap)
{
    return cli_excerpt_n(s, strlen(s), buf, cap);
}

static void vmessage(const char *cmd, const char *prefix, const char *fmt, va_list ap,
                     const char *suffix) CLI_PRINTF(3, 0);

static void vmessage(const char *cmd, const char *prefix, const char *fmt, va_list ap,
                     const char *suffix)
{
    char full[1024], text[1024], shown[sizeof text * 4];
    size_t k, o = 0;
    vsnprintf(full, sizeof full, fmt, ap);
    cut_quoted(full, text, sizeof text);
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

/* The body of every message function: vmessage over its own arguments. */
#define MESSAGE(cmd, prefix, fmt, suffix)                                                          \
    do {                                                                                           \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        vmessage(cmd, prefix, fmt, ap, suffix);                                                    \
        va_end(ap);                                                                                \
    } while (0)

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char hint[128];
    snprintf(hint, sizeof hint, " (see 'afdkit %s --help')", cmd != NULL ? cmd : "");
    MESSAGE(cmd, "", fmt, hint);
    return EXIT_USAGE;
}

int cli_input_error(const char *cmd, const char *fmt, ...)
{
    MESSAGE(cmd, "", fmt, "");
    return EXIT_USAGE;
}

int cli_runtime_error(const char *cmd, const char *fmt, ...)
{
    MESSAGE(cmd, "", fmt, "");
    return EXIT_RUNTIME;
}

int cli_infeasible(const char *cmd, const char *fmt, ...)
{
    MESSAGE(cmd, "", fmt, "");
    return EXIT_RUNTIME;
}

int cli_unstable_queue(const char *cmd, const char *load, double c, double a)
{
    if (!isfinite(a))
        return cli_infeasible(cmd, "unstable queue: %s overflows, so no number of servers "
                                   "makes it stable", load);
    /* below 2^53 floor(a) + 1 is the next integer, printed in full by %.16g;
     * from 2^53 on every double is an integer and a + 1 rounds to a */
    if (floor(a) + 1 > a)
        return cli_infeasible(cmd, "unstable queue at c = %.15g: rho = %s/c = %g >= 1; the "
                                   "smallest c that makes it stable is %.16g",
                              c, load, a / c, floor(a) + 1);
    return cli_infeasible(cmd, "unstable queue at c = %.15g: rho = %s/c = %g >= 1; a stable "
                               "queue needs c > %.15g",
                          c, load, a / c, a);
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
    MESSAGE(cmd, "warning: ", fmt, "");
}

/* -q: the notes, which only inform, are not printed */
static int notes_off;

void cli_notes_quiet(int quiet)
{
    notes_off = quiet;
}

void cli_note(const char *cmd, const char *fmt, ...)
{
    if (notes_off)
        return;
    MESSAGE(cmd, "note: ", fmt, "");
}

int cli_exit_code(afd_status st)
{
    switch (st) {
    case AFD_OK:
        return 0;
    case AFD_EIO:
    case AFD_ENOMEM:
    case AFD_ENUMERIC:
    case AFD_EUNSTABLE:
    case AFD_EINFINITE:
        return EXIT_RUNTIME;
    case AFD_ELIMIT: /* the input asks for more than is supported */
    default: return EXIT_USAGE;
    }
}

static void message(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

static void message(const char *cmd, const char *fmt, ...)
{
    MESSAGE(cmd, "", fmt, "");
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

int cli_spec_error(const char *cmd, const char *opt, const char *spec, afd_status st,
                   const afd_error *err, const char *(*preset_name)(size_t))
{
    const char *names[64], *near;
    char known[512] = "", ex[200], hint[120] = "";
    size_t n;
    if (st != AFD_EIO || strchr(spec, '/') != NULL || access(spec, F_OK) == 0 || errno != ENOENT)
        return cli_file_error(cmd, spec, st, err);
    for (n = 0; n < 64 && preset_name(n) != NULL; n++) {
        names[n] = preset_name(n);
        strncat(known, n ? ", " : "", sizeof known - strlen(known) - 1);
        strncat(known, names[n], sizeof known - strlen(known) - 1);
    }
    near = cli_suggest(spec, strlen(spec), names, n);
    if (near != NULL)
        snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    return cli_usage_error(cmd, "--%s: '%s' is neither a preset nor a file%s (presets: %s)", opt,
                           cli_excerpt(spec, ex, sizeof ex), hint, known);
}

/* ---- the preset a --model or --device argument names */

/* The name of the preset (names(i), texts(i)) that spec is, or whose text
 * the file spec holds exactly; NULL if none. */
static const char *preset_of(const char *spec, const char *(*names)(size_t),
                             const char *(*texts)(size_t))
{
    const char *found = NULL;
    char *buf;
    size_t i, n;
    FILE *f;
    for (i = 0; names(i) != NULL; i++)
        if (strcmp(names(i), spec) == 0)
            return names(i);
    f = fopen(spec, "rb");
    if (f == NULL)
        return NULL;
    buf = malloc(1 << 20);
    n = buf != NULL ? fread(buf, 1, 1 << 20, f) : 0;
    fclose(f);
    for (i = 0; buf != NULL && names(i) != NULL && found == NULL; i++) {
        const char *t = texts(i);
        if (t != NULL && strlen(t) == n && memcmp(t, buf, n) == 0)
            found = names(i);
    }
    free(buf);
    return found;
}

int cli_same_model(const char *name, const char *spec, const char *loaded)
{
    const char *p;
    if (strcmp(name, loaded) == 0)
        return 1;
    p = preset_of(spec, afd_model_preset_name, afd_model_preset_json);
    return p != NULL && strcmp(p, name) == 0;
}

int cli_same_device(const char *name, const char *spec, const char *loaded)
{
    const char *p;
    if (strcmp(name, loaded) == 0)
        return 1;
    p = preset_of(spec, afd_device_preset_name, afd_device_preset_text);
    return p != NULL && strcmp(p, name) == 0;
}

/* ---- suggestions */

/* Optimal string alignment distance (Levenshtein with adjacent
 * transpositions) between a[0..na) and b[0..nb), capped at 64 bytes each. */
size_t cli_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t d[65][65], i, j;
    if (na > 64 || nb > 64)
        return (size_t)-1;
    for (i = 0; i <= na; i++)
        d[i][0] = i;
    for (j = 0; j <= nb; j++)
        d[0][j] = j;
    for (i = 1; i <= na; i++)
        for (j = 1; j <= nb; j++) {
            size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

/* Whether candidate is close enough to the typed name to suggest: an edit
 * distance of at most a third of the longer name (at least 1), or the typed
 * name a prefix of the candidate (--max-instance for --max-instances). */
static int close_enough(const char *typed, size_t n, const char *cand, size_t *dist)
{
    size_t m = strlen(cand), longer = n > m ? n : m;
    size_t limit = longer / 3 > 1 ? longer / 3 : 1;
    *dist = cli_edit_distance(typed, n, cand, m);
    if (n >= 2 && n < m && strncmp(typed, cand, n) == 0 && *dist > limit)
        *dist = limit;
    return *dist <= limit;
}

const char *cli_suggest(const char *typed, size_t n, const char *const *names, size_t count)
{
    const char *best = NULL;
    size_t k, bd = (size_t)-1, prefixed = 0;
    /* a name the typed text begins, when only one does ("h100" for
     * "h100-sxm" rather than "h200", one letter away) */
    for (k = 0; k < count && n > 0; k++)
        if (names[k] != NULL && strncmp(names[k], typed, n) == 0 && names[k][n] != '\0') {
            best = names[k];
            prefixed++;
        }
    if (prefixed == 1)
        return best;
    best = NULL;
    for (k = 0; k < count; k++) {
        size_t dist;
        if (names[k] != NULL && close_enough(typed, n, names[k], &dist) && dist < bd) {
            bd = dist;
            best = names[k];
        }
    }
    return best;
}

/* The long option closest to name[0..len), or NULL. */
static const cli_option *suggest_long(const cli_command *cmd, const char *name, size_t len)
{
    const cli_group *const *g;
    const cli_option *o, *best = NULL;
    size_t bd = (size_t)-1;
    if (cmd->groups == NULL)
        return NULL;
    for (g = cmd->groups; *g != NULL; g++)
        for (o = (*g)->options; o->name != NULL; o++) {
            size_t dist;
            if (close_enough(name, len, o->name, &dist) && dist < bd) {
                bd = dist;
                best = o;
            }
        }
    return best;
}

/* ---- option iterator */

void cli_parser_init(cli_parser *p, const cli_command *cmd, int argc, char **argv)
{
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
    p->no_more_options = 0;
    p->nseen = 0;
}

int cli_option_repeatable(const cli_option *o)
{
    size_t n = o->arg != NULL ? strlen(o->arg) : 0;
    return n >= 3 && strcmp(o->arg + n - 3, "...") == 0;
}

/* Record o; 0, or CLI_ERROR after a message when a single-valued option
 * (or another entry with its id, an alias) was given before. */
static int note_seen(cli_parser *p, const cli_option *o)
{
    int k;
    if (o->arg == NULL || cli_option_repeatable(o))
        return 0;
    for (k = 0; k < p->nseen; k++)
        if (p->seen[k] == o || p->seen[k]->id == o->id) {
            char name[64];
            if (o->short_name != 0)
                snprintf(name, sizeof name, "-%c/--%s", o->short_name, o->name);
            else
                snprintf(name, sizeof name, "--%s", o->name);
            cli_usage_error(p->cmd->path, "option '%s' given twice (it takes one value)", name);
            return CLI_ERROR;
        }
    if (p->nseen < CLI_MAX_SEEN)
        p->seen[p->nseen++] = o;
    return 0;
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

static int next_raw(cli_parser *p, const cli_option **opt, const char **arg)
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
        return next_raw(p, opt, arg);
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
        return CLI_HELP;

    if (a[1] == '-') {
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        const cli_option *o = find_long(p->cmd, name, len);
        if (o == NULL) {
            /* "--B 128": a short option written with two dashes */
            const cli_option *s = len == 1 ? find_short(p->cmd, name[0]) : NULL;
            if (s == NULL)
                s = suggest_long(p->cmd, name, len);
            if (s != NULL && s->short_name != 0 && len == 1 && s->short_name == name[0])
                cli_usage_error(p->cmd->path, "unknown option '--%.*s'; did you mean '-%c' "
                                              "(or '--%s')?",
                                (int)len, name, s->short_name, s->name);
            else if (s != NULL)
                cli_usage_error(p->cmd->path, "unknown option '--%.*s'; did you mean '--%s'?",
                                (int)len, name, s->name);
            else
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
            /* "-trace FILE": a long option written with one dash */
            const cli_option *s = find_long(p->cmd, a + 1, strlen(a + 1));
            /* "-b" for "-B": the same letter in the other case */
            const cli_option *c =
                a[2] != '\0' ? NULL
                : find_short(p->cmd, islower((unsigned char)a[1])
                                         ? (char)toupper((unsigned char)a[1])
                                         : (char)tolower((unsigned char)a[1]));
            if (s != NULL)
                cli_usage_error(p->cmd->path, "unknown option '%s'; did you mean '--%s'?", a,
                                s->name);
            else if (c != NULL)
                cli_usage_error(p->cmd->path, "unknown option '%s'; did you mean '-%c' (--%s)?",
                                a, c->short_name, c->name);
            else
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

int cli_next(cli_parser *p, const cli_option **opt, const char **arg)
{
    int rc = next_raw(p, opt, arg);
    if (rc == CLI_OPTION && note_seen(p, *opt) != 0)
        return CLI_ERROR;
    return rc;
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

/* 1 if an option of an earlier group, or earlier in this one, has o's name:
 * the parser takes the first (a command's own --tp LIST before the shared
 * --tp T), so the help shows only that one. */
static int shadowed(const cli_group *const *groups, const cli_group *const *g,
                    const cli_option *o)
{
    const cli_group *const *h;
    const cli_option *q;
    for (h = groups; h <= g; h++)
        for (q = (*h)->options; q->name != NULL && q != o; q++)
            if (strcmp(q->name, o->name) == 0)
                return 1;
    return 0;
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
                if (shadowed(cmd->groups, g, o))
                    continue;
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

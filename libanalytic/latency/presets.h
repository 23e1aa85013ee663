/* presets.h: the bundled model configs and device files (presets.c is
 * generated from data/models and data/devices by scripts/gen_presets.sh;
 * tests/check_presets.sh checks that it is up to date).  Not installed. */
#ifndef AFD_PRESETS_H
#define AFD_PRESETS_H

typedef struct afd_priv_preset {
    const char *name;
    const char *text;   /* the file, verbatim */
    const char *source; /* where it comes from */
} afd_priv_preset;

/* Each list ends with an entry whose name is NULL. */
extern const afd_priv_preset afd_priv_model_presets[];
extern const afd_priv_preset afd_priv_device_presets[];

#endif /* AFD_PRESETS_H */

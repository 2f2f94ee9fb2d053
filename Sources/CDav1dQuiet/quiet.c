// dav1d logs what it finds wrong in an AV1 bitstream ("Unknown OBU type 0 of size 124", once an OBU: thousands of
// lines for one hostile sequence) through `Dav1dSettings.logger`, whose default writes to the process's stderr.
// libavif 0.11 and libheif 1.15 create dav1d's settings with `dav1d_default_settings` and offer no way to change
// the logger, so this module defines that function: the dynamic linker binds their calls to the executable's
// definition, which asks dav1d's own for the defaults and then turns logging off (a NULL callback, which dav1d
// documents as "disable logging"). Decoding is otherwise unchanged; errors still come back as dav1d's return codes.
#define _GNU_SOURCE
#include "CDav1dQuiet.h"

#if defined(__linux__) && __has_include(<dav1d/dav1d.h>)
#include <dav1d/dav1d.h>
#include <dlfcn.h>
#include <stddef.h>

typedef void (*cdav1d_settings_function)(Dav1dSettings *);

static cdav1d_settings_function cdav1d_real_default_settings(void) {
    static cdav1d_settings_function cached;
    cdav1d_settings_function found = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (found == NULL) {
        found = (cdav1d_settings_function)dlsym(RTLD_NEXT, "dav1d_default_settings");
        __atomic_store_n(&cached, found, __ATOMIC_RELEASE);
    }
    return found;
}

DAV1D_API void dav1d_default_settings(Dav1dSettings *settings) {
    cdav1d_settings_function real = cdav1d_real_default_settings();
    // (dav1d is always loaded when this is called: its callers link it)
    if (real != NULL) real(settings);
    settings->logger.callback = NULL;
    settings->logger.cookie = NULL;
}

int cdav1d_quiet_is_active(void) {
    Dav1dSettings settings;
    // What a caller of dav1d_default_settings through the dynamic linker gets, as libavif does.
    cdav1d_settings_function bound = (cdav1d_settings_function)dlsym(RTLD_DEFAULT, "dav1d_default_settings");
    if (bound == NULL) return 0;
    bound(&settings);
    return settings.logger.callback == NULL;
}
#else
int cdav1d_quiet_is_active(void) { return 0; }
#endif

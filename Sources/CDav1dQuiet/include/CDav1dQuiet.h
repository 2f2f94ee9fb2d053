#ifndef CDAV1D_QUIET_H
#define CDAV1D_QUIET_H

/// Whether dav1d's settings are made quiet in this process: 1 when this module's `dav1d_default_settings` is the
/// one libavif and libheif call (Linux, dav1d's headers present at build time), else 0.
int cdav1d_quiet_is_active(void);

#endif

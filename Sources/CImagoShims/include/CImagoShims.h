#ifndef CIMAGO_SHIMS_H
#define CIMAGO_SHIMS_H
// The few C lines Swift cannot express directly (function-like macros, setjmp error paths).
// Each codec that needs one adds it here, with a comment saying why Swift could not do it.
#include <stddef.h>

/// The version of this shim header, so that a mismatch is visible in a debugger.
static const int cimago_shims_version = 1;

#endif

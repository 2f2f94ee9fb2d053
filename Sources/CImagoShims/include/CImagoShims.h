#ifndef CIMAGO_SHIMS_H
#define CIMAGO_SHIMS_H
// The few C lines Swift cannot express directly (function-like macros, setjmp error paths).
// Each codec that needs one adds it here, with a comment saying why Swift could not do it.
#include <stddef.h>

/// The version of this shim header, so that a mismatch is visible in a debugger.
static const int cimago_shims_version = 1;

// --- PNG (libpng simplified API) ---
// png.h defines its formats as composite macros (`PNG_FORMAT_RGBA` is `(PNG_FORMAT_RGB|PNG_FORMAT_FLAG_ALPHA)`),
// which the Swift importer drops; these constants re-export the values used by PNGDecoder and PNGEncoder.
#include <png.h>

/// `PNG_IMAGE_VERSION`: the value `png_image.version` must hold.
static const unsigned int cimago_png_image_version = PNG_IMAGE_VERSION;
/// `PNG_FORMAT_GRAY`: one 8-bit luminance channel.
static const unsigned int cimago_png_format_gray = PNG_FORMAT_GRAY;
/// `PNG_FORMAT_RGB`: three 8-bit channels.
static const unsigned int cimago_png_format_rgb = PNG_FORMAT_RGB;
/// `PNG_FORMAT_RGBA`: four 8-bit channels, straight alpha.
static const unsigned int cimago_png_format_rgba = PNG_FORMAT_RGBA;
/// `PNG_FORMAT_LINEAR_Y`: one 16-bit luminance channel, linear.
static const unsigned int cimago_png_format_linear_y = PNG_FORMAT_LINEAR_Y;
/// `PNG_FORMAT_LINEAR_RGB_ALPHA`: four 16-bit channels, linear, colour premultiplied by alpha.
static const unsigned int cimago_png_format_linear_rgb_alpha = PNG_FORMAT_LINEAR_RGB_ALPHA;
/// `PNG_FORMAT_FLAG_ALPHA`: the file's format has an alpha channel (or tRNS).
static const unsigned int cimago_png_format_flag_alpha = PNG_FORMAT_FLAG_ALPHA;
/// `PNG_FORMAT_FLAG_COLOR`: the file's format is colour (else grayscale).
static const unsigned int cimago_png_format_flag_color = PNG_FORMAT_FLAG_COLOR;
/// `PNG_FORMAT_RGB_COLORMAP`: one index a pixel into a colour map of RGB entries (a palette PNG).
static const unsigned int cimago_png_format_rgb_colormap = PNG_FORMAT_RGB_COLORMAP;
/// `PNG_FORMAT_RGBA_COLORMAP`: one index a pixel into a colour map of RGBA entries (a palette PNG with tRNS).
static const unsigned int cimago_png_format_rgba_colormap = PNG_FORMAT_RGBA_COLORMAP;
/// `PNG_FORMAT_FLAG_COLORMAP`: the file is palette-based.
static const unsigned int cimago_png_format_flag_colormap = PNG_FORMAT_FLAG_COLORMAP;
/// `PNG_IMAGE_FLAG_16BIT_sRGB`: treat 16-bit files without gAMA/sRGB as sRGB-encoded rather than linear.
static const unsigned int cimago_png_image_flag_16bit_srgb = PNG_IMAGE_FLAG_16BIT_sRGB;

// --- glibc malloc (MallocTrimmer in the Imago module) ---
// Swift's Glibc module does not export <malloc.h>, so `malloc_trim` needs a wrapper. Only an explicit opt-in
// calls it (see MallocTrimmer); nothing in the library changes malloc's settings (no `mallopt`).
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/// `malloc_trim(0)`: hands the free pages inside every glibc arena back to the kernel. 1 when memory was released,
/// 0 when none was, -1 when the C library is not glibc (nothing to do).
static inline int cimago_malloc_trim(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return -1;
#endif
}

// --- Child processes (ChildWorker in ImagoCodecs) ---
// `SOCK_CLOEXEC` and `posix_spawn_file_actions_addclosefrom_np` are GNU extensions, which Swift's Glibc module does not
// export; shims.c defines _GNU_SOURCE to reach them.
#include <spawn.h>

/// `socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, descriptors)`: a connected pair that no other child
/// started meanwhile inherits. 0 or -1 with `errno` set.
int cimago_socketpair_cloexec(int descriptors[2]);

/// `posix_spawn_file_actions_addclosefrom_np(actions, lowest)`: the child starts with every descriptor from
/// `lowest` up closed. 0, or an error number (ENOSYS without glibc 2.34's function).
int cimago_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif

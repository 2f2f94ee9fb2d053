// Imago's SVG rasteriser over librsvg 2 and cairo, both loaded on first use (dlopen), not linked: librsvg pulls in
// ~50 shared libraries (GLib, Pango, HarfBuzz, fontconfig, gdk-pixbuf …), which cost every process linking Imago
// about 9 MB of RSS; loaded, they cost only the processes that decode an SVG.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// Whether librsvg 2 (2.52 or later) and cairo could be loaded; loads them on the first call. Thread-safe.
int cimago_svg_available(void);

/// Parses the SVG document `data` (`length` bytes). Returns a handle for ``cimago_svg_render`` and
/// ``cimago_svg_close``, with the document's intrinsic size in pixels in `width` and `height` (its `width` and
/// `height` at 96 dpi, else its viewBox's; 0 when it has neither), or NULL with a message in `error` (`capacity`
/// bytes, NUL-terminated) when librsvg cannot load it or is not available.
void *cimago_svg_open(const uint8_t *data, size_t length, double *width, double *height, char *error, size_t capacity);

/// Renders the whole document of `handle` scaled to `width` × `height` pixels into `pixels` (4 × width × height
/// bytes), as premultiplied RGBA. Returns 1, or 0 with a message in `error`.
int cimago_svg_render(void *handle, int width, int height, uint8_t *pixels, char *error, size_t capacity);

/// Frees `handle` (NULL is ignored).
void cimago_svg_close(void *handle);

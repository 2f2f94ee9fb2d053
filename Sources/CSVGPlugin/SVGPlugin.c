// See CSVGPlugin.h. librsvg's and cairo's types are declared here, as their ABI (librsvg 2.52+, cairo 1.x) defines
// them, so that building needs neither -dev package; the libraries themselves are opened by soname.
#include "CSVGPlugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef int gboolean;
typedef struct {
    uint32_t domain;
    int code;
    char *message;
} imago_gerror;
typedef struct {
    double length;
    int unit;
} imago_rsvg_length;
typedef struct {
    double x, y, width, height;
} imago_rsvg_rectangle;
enum { IMAGO_CAIRO_FORMAT_ARGB32 = 0, IMAGO_CAIRO_STATUS_SUCCESS = 0 };

typedef struct {
    void *(*new_from_data)(const uint8_t *, size_t, imago_gerror **);
    gboolean (*intrinsic_size_in_pixels)(void *, double *, double *);
    void (*intrinsic_dimensions)(
        void *, gboolean *, imago_rsvg_length *, gboolean *, imago_rsvg_length *, gboolean *, imago_rsvg_rectangle *);
    gboolean (*render_document)(void *, void *, const imago_rsvg_rectangle *, imago_gerror **);
    void (*object_unref)(void *);
    void (*error_free)(imago_gerror *);
    void *(*surface_create_for_data)(uint8_t *, int, int, int, int);
    int (*surface_status)(void *);
    void (*surface_flush)(void *);
    void (*surface_destroy)(void *);
    void *(*cairo_create)(void *);
    int (*cairo_status)(void *);
    void (*cairo_destroy)(void *);
} imago_svg_api;

static imago_svg_api imago_svg;
static int imago_svg_loaded;
static pthread_once_t imago_svg_once = PTHREAD_ONCE_INIT;

static int imago_svg_symbol(void *library, const char *name, void *slot) {
    void *symbol = library ? dlsym(library, name) : NULL;
    memcpy(slot, &symbol, sizeof symbol);
    return symbol != NULL;
}

static void imago_svg_load(void) {
    void *rsvg = dlopen("librsvg-2.so.2", RTLD_NOW | RTLD_LOCAL);
    void *gobject = dlopen("libgobject-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    void *glib = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    void *cairo = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
    imago_svg_api api;
    int ok = imago_svg_symbol(rsvg, "rsvg_handle_new_from_data", &api.new_from_data) &&
             imago_svg_symbol(rsvg, "rsvg_handle_get_intrinsic_size_in_pixels", &api.intrinsic_size_in_pixels) &&
             imago_svg_symbol(rsvg, "rsvg_handle_get_intrinsic_dimensions", &api.intrinsic_dimensions) &&
             imago_svg_symbol(rsvg, "rsvg_handle_render_document", &api.render_document) &&
             imago_svg_symbol(gobject, "g_object_unref", &api.object_unref) &&
             imago_svg_symbol(glib, "g_error_free", &api.error_free) &&
             imago_svg_symbol(cairo, "cairo_image_surface_create_for_data", &api.surface_create_for_data) &&
             imago_svg_symbol(cairo, "cairo_surface_status", &api.surface_status) &&
             imago_svg_symbol(cairo, "cairo_surface_flush", &api.surface_flush) &&
             imago_svg_symbol(cairo, "cairo_surface_destroy", &api.surface_destroy) &&
             imago_svg_symbol(cairo, "cairo_create", &api.cairo_create) &&
             imago_svg_symbol(cairo, "cairo_status", &api.cairo_status) &&
             imago_svg_symbol(cairo, "cairo_destroy", &api.cairo_destroy);
    if (ok) {
        imago_svg = api;
        imago_svg_loaded = 1;
    }
}

int cimago_svg_available(void) {
    pthread_once(&imago_svg_once, imago_svg_load);
    return imago_svg_loaded;
}

static void imago_svg_message(char *error, size_t capacity, const char *what, imago_gerror *gerror) {
    if (error && capacity > 0) {
        snprintf(error, capacity, "%s%s%s", what, gerror && gerror->message ? ": " : "",
                 gerror && gerror->message ? gerror->message : "");
    }
    if (gerror) imago_svg.error_free(gerror);
}

void *cimago_svg_open(const uint8_t *data, size_t length, double *width, double *height, char *error, size_t capacity) {
    *width = 0;
    *height = 0;
    if (!cimago_svg_available()) {
        imago_svg_message(error, capacity, "librsvg 2.52 or later is not installed (librsvg2-2)", NULL);
        return NULL;
    }
    imago_gerror *gerror = NULL;
    void *handle = imago_svg.new_from_data(data, length, &gerror);
    if (!handle) {
        imago_svg_message(error, capacity, "librsvg cannot load the document", gerror);
        return NULL;
    }
    if (gerror) imago_svg.error_free(gerror);
    double w = 0, h = 0;
    if (imago_svg.intrinsic_size_in_pixels(handle, &w, &h)) {
        *width = w;
        *height = h;
    } else {
        gboolean has_width = 0, has_height = 0, has_viewbox = 0;
        imago_rsvg_length lw, lh;
        imago_rsvg_rectangle viewbox = {0, 0, 0, 0};
        imago_svg.intrinsic_dimensions(handle, &has_width, &lw, &has_height, &lh, &has_viewbox, &viewbox);
        if (has_viewbox) {
            *width = viewbox.width;
            *height = viewbox.height;
        }
    }
    return handle;
}

int cimago_svg_render(void *handle, int width, int height, uint8_t *pixels, char *error, size_t capacity) {
    if (!handle || width <= 0 || height <= 0 || width > (1 << 15) || height > (1 << 15)) {
        imago_svg_message(error, capacity, "bad render size", NULL);
        return 0;
    }
    memset(pixels, 0, (size_t)width * (size_t)height * 4);
    void *surface = imago_svg.surface_create_for_data(pixels, IMAGO_CAIRO_FORMAT_ARGB32, width, height, width * 4);
    if (imago_svg.surface_status(surface) != IMAGO_CAIRO_STATUS_SUCCESS) {
        imago_svg.surface_destroy(surface);
        imago_svg_message(error, capacity, "cairo cannot make the canvas", NULL);
        return 0;
    }
    void *cr = imago_svg.cairo_create(surface);
    imago_gerror *gerror = NULL;
    imago_rsvg_rectangle viewport = {0, 0, (double)width, (double)height};
    int ok = imago_svg.cairo_status(cr) == IMAGO_CAIRO_STATUS_SUCCESS &&
             imago_svg.render_document(handle, cr, &viewport, &gerror);
    imago_svg.cairo_destroy(cr);
    imago_svg.surface_flush(surface);
    imago_svg.surface_destroy(surface);
    if (!ok) {
        imago_svg_message(error, capacity, "librsvg cannot render the document", gerror);
        return 0;
    }
    if (gerror) imago_svg.error_free(gerror);
    // cairo's ARGB32 is a native-endian 32-bit word: B, G, R, A in memory on little-endian machines.
    size_t count = (size_t)width * (size_t)height;
    for (size_t i = 0; i < count; i++) {
        uint8_t *p = pixels + 4 * i;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint8_t b = p[0];
        p[0] = p[2];
        p[2] = b;
#else
        uint8_t a = p[0], r = p[1], g = p[2], b = p[3];
        p[0] = r, p[1] = g, p[2] = b, p[3] = a;
#endif
    }
    return 1;
}

void cimago_svg_close(void *handle) {
    if (handle && imago_svg_loaded) imago_svg.object_unref(handle);
}

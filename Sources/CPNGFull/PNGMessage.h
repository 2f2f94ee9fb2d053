// Private to CPNGFull: how both of its libpng callers keep an error's text for the Swift side.
#ifndef CIMAGO_PNG_MESSAGE_H
#define CIMAGO_PNG_MESSAGE_H

#include <stddef.h>
#include <string.h>

/// Copies `text` into the caller's `message` buffer of `size` bytes, cut to fit and always NUL-terminated; nothing
/// when the buffer is empty.
static inline void cimago_png_note(char *message, size_t size, const char *text) {
    if (size == 0) return;
    strncpy(message, text, size - 1);
    message[size - 1] = 0;
}

#endif

#ifndef COURIER_IMAGE_CODECS_H
#define COURIER_IMAGE_CODECS_H

#include <stddef.h>
#include <stdint.h>

/// The outcome of a decode: on success `pixels` holds width × height × 4 bytes of RGBA (8 bits each, alpha not
/// premultiplied, rows top to bottom), to be released with courier_image_free(); on failure `pixels` is NULL and
/// `message` says why.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
    char message[256];
} courier_image_result;

/// Decodes a PNG of any colour type, bit depth and interlacing with libpng. Returns 0 on success. Refuses images
/// of more than `max_pixels` pixels before allocating anything for them. Never prints, never exits.
int courier_png_decode(const uint8_t *data, size_t size, uint64_t max_pixels, courier_image_result *result);

/// Decodes a baseline or progressive JPEG (grey, YCbCr, CMYK or YCCK) with libjpeg. Returns 0 on success. Any
/// warning but extraneous bytes before a marker is an error, so a truncated or corrupt file never yields a partly
/// grey image. Never prints, never exits (libjpeg's default error handler would call exit()).
int courier_jpeg_decode(const uint8_t *data, size_t size, uint64_t max_pixels, courier_image_result *result);

/// Releases the pixels of a successful decode.
void courier_image_free(uint8_t *pixels);

#endif

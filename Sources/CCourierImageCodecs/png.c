#if defined(__linux__)
#include "CourierImageCodecs.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Where libpng reads from, and where its error message goes before it jumps back.
typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
    courier_image_result *result;
} png_source;

static void png_source_read(png_structp png, png_bytep out, size_t length) {
    png_source *source = png_get_io_ptr(png);
    if (length > source->size - source->offset) {
        png_error(png, "the data ends early (truncated)");
    }
    memcpy(out, source->data + source->offset, length);
    source->offset += length;
}

static void png_source_error(png_structp png, png_const_charp message) {
    png_source *source = png_get_error_ptr(png);
    snprintf(source->result->message, sizeof source->result->message, "%s", message);
    png_longjmp(png, 1);
}

static void png_source_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

int courier_png_decode(const uint8_t *data, size_t size, uint64_t max_pixels, courier_image_result *result) {
    result->pixels = NULL;
    result->width = 0;
    result->height = 0;
    result->message[0] = 0;
    png_source source = {data, size, 0, result};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, png_source_error, png_source_warning);
    if (png == NULL) {
        snprintf(result->message, sizeof result->message, "libpng could not start");
        return 1;
    }
    png_infop info = png_create_info_struct(png);
    // Changed between setjmp and longjmp: volatile, so the error path sees their last values.
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (info == NULL || setjmp(png_jmpbuf(png))) {
        free(rows);
        free(pixels);
        png_destroy_read_struct(&png, info ? &info : NULL, NULL);
        if (result->message[0] == 0) snprintf(result->message, sizeof result->message, "libpng failed");
        return 1;
    }
    png_set_read_fn(png, &source, png_source_read);
    png_read_info(png, info);
    png_uint_32 width = 0, height = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(png, info, &width, &height, &depth, &color, &interlace, NULL, NULL);
    if (width == 0 || height == 0 || (uint64_t)width * height > max_pixels) {
        png_error(png, "the image has more pixels than allowed");
    }
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (depth == 16) png_set_scale_16(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t row_bytes = png_get_rowbytes(png, info);
    if (row_bytes != (size_t)width * 4) png_error(png, "unexpected row size after conversion");
    pixels = malloc(row_bytes * height);
    rows = malloc(sizeof(png_bytep) * height);
    if (pixels == NULL || rows == NULL) png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + row_bytes * y;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    result->pixels = pixels;
    result->width = width;
    result->height = height;
    return 0;
}

void courier_image_free(uint8_t *pixels) { free(pixels); }
#endif

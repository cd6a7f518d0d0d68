#if defined(__linux__)
#include "CourierImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

// libjpeg's error manager with a way back: libjpeg's own error_exit calls exit().
typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    courier_image_result *result;
} jpeg_failure;

static void jpeg_fail(j_common_ptr info) {
    jpeg_failure *failure = (jpeg_failure *)info->err;
    char text[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, text);
    snprintf(failure->result->message, sizeof failure->result->message, "%s", text);
    longjmp(failure->jump, 1);
}

// Level -1 is a warning: corrupt data libjpeg would paper over with grey. Extraneous bytes before a marker are
// common and harmless; every other warning fails the decode.
static void jpeg_message(j_common_ptr info, int level) {
    if (level == -1 && info->err->msg_code != JWRN_EXTRANEOUS_DATA) jpeg_fail(info);
}

static void jpeg_silence(j_common_ptr info) { (void)info; }

int courier_jpeg_decode(const uint8_t *data, size_t size, uint64_t max_pixels, courier_image_result *result) {
    result->pixels = NULL;
    result->width = 0;
    result->height = 0;
    result->message[0] = 0;
    struct jpeg_decompress_struct info;
    jpeg_failure failure;
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = jpeg_fail;
    failure.manager.emit_message = jpeg_message;
    failure.manager.output_message = jpeg_silence;
    failure.result = result;
    uint8_t *volatile pixels = NULL;
    if (setjmp(failure.jump)) {
        free(pixels);
        jpeg_destroy_decompress(&info);
        return 1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if (info.image_width == 0 || info.image_height == 0 ||
        (uint64_t)info.image_width * info.image_height > max_pixels) {
        snprintf(result->message, sizeof result->message, "the image has more pixels than allowed");
        longjmp(failure.jump, 1);
    }
    int cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
    info.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    jpeg_start_decompress(&info);
    uint32_t width = info.output_width, height = info.output_height;
    size_t row_bytes = (size_t)width * 4;
    pixels = malloc(row_bytes * height);
    if (pixels == NULL) {
        snprintf(result->message, sizeof result->message, "out of memory");
        longjmp(failure.jump, 1);
    }
    while (info.output_scanline < height) {
        JSAMPROW target = pixels + row_bytes * info.output_scanline;
        if (jpeg_read_scanlines(&info, &target, 1) != 1) {
            snprintf(result->message, sizeof result->message, "the data ends early (truncated)");
            longjmp(failure.jump, 1);
        }
    }
    if (cmyk) {
        // Adobe's files store CMYK inverted (255 = no ink); others store ink amounts.
        int inverted = info.saw_Adobe_marker;
        for (size_t i = 0; i < (size_t)width * height; i++) {
            uint8_t *p = pixels + i * 4;
            unsigned c = p[0], m = p[1], y = p[2], k = p[3];
            if (!inverted) {
                c = 255 - c;
                m = 255 - m;
                y = 255 - y;
                k = 255 - k;
            }
            p[0] = (uint8_t)((c * k + 127) / 255);
            p[1] = (uint8_t)((m * k + 127) / 255);
            p[2] = (uint8_t)((y * k + 127) / 255);
            p[3] = 255;
        }
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    result->pixels = pixels;
    result->width = width;
    result->height = height;
    return 0;
}
#endif

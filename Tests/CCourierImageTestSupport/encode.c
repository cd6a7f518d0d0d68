#if defined(__linux__)
#include "CourierImageTestSupport.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
} encode_failure;

static void encode_fail(j_common_ptr info) { longjmp(((encode_failure *)info->err)->jump, 1); }

int courier_test_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int components, int quality,
                             int progressive, int sampling, uint8_t **out, size_t *out_size) {
    struct jpeg_compress_struct info;
    encode_failure failure;
    info.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = encode_fail;
    unsigned char *volatile buffer = NULL;
    unsigned long size = 0;
    if (setjmp(failure.jump)) {
        jpeg_destroy_compress(&info);
        free(buffer);
        return 1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **)&buffer, &size);
    info.image_width = width;
    info.image_height = height;
    info.input_components = components;
    info.in_color_space = components == 1 ? JCS_GRAYSCALE : components == 4 ? JCS_CMYK : JCS_RGB;
    jpeg_set_defaults(&info);
    if (components == 4) jpeg_set_colorspace(&info, JCS_CMYK);
    jpeg_set_quality(&info, quality, TRUE);
    if (components == 3) {
        info.comp_info[0].h_samp_factor = sampling;
        info.comp_info[0].v_samp_factor = sampling;
    }
    if (progressive) jpeg_simple_progression(&info);
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)info.next_scanline * width * components);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    *out = buffer;
    *out_size = size;
    return 0;
}

void courier_test_free(void *pointer) { free(pointer); }
#endif

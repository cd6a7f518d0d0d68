#ifndef COURIER_IMAGE_TEST_SUPPORT_H
#define COURIER_IMAGE_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// Encodes `pixels` (width × height × components bytes: 1 = grey, 3 = RGB, 4 = CMYK) as a JPEG with libjpeg, for
/// the decoder's tests. `sampling` is 1 for 4:4:4 and 2 for 4:2:0 (colour only). Returns 0 and a malloc'd file in
/// `*out` (free it with free()), or 1.
int courier_test_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int components, int quality,
                             int progressive, int sampling, uint8_t **out, size_t *out_size);

/// free(), for Swift.
void courier_test_free(void *pointer);

#endif

/*
 * Decoding only the region of a baseline JPEG that a crop box covers, with libjpeg-turbo.
 *
 * libjpeg-turbo can skip the rows above a region without the inverse DCT and colour conversion
 * (jpeg_skip_scanlines), decode only the iMCU columns the region covers (jpeg_crop_scanline),
 * and stop after the region's last row (jpeg_abort_decompress), all at a DCT scale of 1/1,
 * 1/2, 1/4 or 1/8. litdata/vision/region.py loads this file's shared library with ctypes (no
 * Python API here, so one build serves every Python version; ctypes releases the GIL around
 * each call).
 *
 * Every byte is someone else's: libjpeg's errors and its corrupt-data warnings end the decode
 * (setjmp/longjmp) with the library's message; the image's size is checked against the
 * caller's pixel budget before any pixel is decoded; the output never exceeds the caller's
 * buffer; libjpeg's own memory is capped; and a file cut short is refused even when the region
 * ends before the cut, by looking for the end-of-image marker after the last row read (entropy-
 * coded data cannot hold the bytes FF D9: a 0xFF there is always followed by a stuffed 0x00).
 */

#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

#define LD_ROWS_PER_READ 16
#define LD_MAX_MEMORY (256L * 1024L * 1024L)

enum { LD_OK = 0, LD_ERROR = -1, LD_TOO_LARGE = -2, LD_BAD_REQUEST = -3 };

struct ld_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char *message;
    size_t message_size;
};

static void ld_fail(j_common_ptr cinfo) {
    struct ld_error *error = (struct ld_error *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    snprintf(error->message, error->message_size, "%s", text);
    longjmp(error->jump, 1);
}

/* Warnings (level -1) mean corrupt data: the decode ends, as an error does. Traces are dropped. */
static void ld_emit(j_common_ptr cinfo, int level) {
    if (level < 0) {
        ld_fail(cinfo);
    }
}

static void ld_prepare(struct jpeg_decompress_struct *cinfo, struct ld_error *error,
                       char *message, size_t message_size) {
    cinfo->err = jpeg_std_error(&error->manager);
    error->manager.error_exit = ld_fail;
    error->manager.emit_message = ld_emit;
    error->message = message;
    error->message_size = message_size;
    message[0] = '\0';
}

/*
 * The header of a JPEG: info = {width, height, libjpeg colour space, progressive, components}.
 * Returns LD_OK, or LD_ERROR with the reason in message.
 */
int ld_jpeg_header(const unsigned char *data, unsigned long size, int *info, char *message,
                   size_t message_size) {
    struct jpeg_decompress_struct cinfo;
    struct ld_error error;
    ld_prepare(&cinfo, &error, message, message_size);
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return LD_ERROR;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    info[0] = (int)cinfo.image_width;
    info[1] = (int)cinfo.image_height;
    info[2] = (int)cinfo.jpeg_color_space;
    info[3] = cinfo.progressive_mode ? 1 : 0;
    info[4] = cinfo.num_components;
    jpeg_destroy_decompress(&cinfo);
    return LD_OK;
}

/* Whether an end-of-image marker (FF D9) lies in the bytes after position. */
static int ld_has_end(const unsigned char *from, size_t count) {
    const unsigned char *end = from + count;
    while (from < end) {
        const unsigned char *mark = memchr(from, 0xFF, (size_t)(end - from));
        if (mark == NULL || mark + 1 >= end) {
            return 0;
        }
        if (mark[1] == 0xD9) {
            return 1;
        }
        from = mark + 1;
    }
    return 0;
}

/*
 * Decodes rows [top, bottom) and at least columns [left, right) of the image scaled by
 * 1/denom, as RGB, into out (capacity bytes). The columns start at an iMCU boundary at or
 * before left: place = {width, height, left, top} of what was written, in scaled pixels.
 * Images of more than max_pixels pixels are refused before decoding (LD_TOO_LARGE).
 */
int ld_jpeg_region(const unsigned char *data, unsigned long size, int denom, long max_pixels,
                   int left, int top, int right, int bottom, unsigned char *out,
                   size_t capacity, int *place, char *message, size_t message_size) {
    struct jpeg_decompress_struct cinfo;
    struct ld_error error;
    JSAMPROW rows[LD_ROWS_PER_READ];
    ld_prepare(&cinfo, &error, message, message_size);
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return LD_ERROR;
    }
    jpeg_create_decompress(&cinfo);
    cinfo.mem->max_memory_to_use = LD_MAX_MEMORY;
    jpeg_mem_src(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    if ((long)cinfo.image_width * (long)cinfo.image_height > max_pixels) {
        snprintf(message, message_size, "the image declares %u x %u pixels",
                 cinfo.image_width, cinfo.image_height);
        jpeg_destroy_decompress(&cinfo);
        return LD_TOO_LARGE;
    }
    cinfo.out_color_space = JCS_RGB;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)denom;
    jpeg_start_decompress(&cinfo);
    if (left < 0 || top < 0 || left >= right || top >= bottom ||
        right > (int)cinfo.output_width || bottom > (int)cinfo.output_height ||
        cinfo.output_components != 3) {
        snprintf(message, message_size,
                 "the region [%d, %d) x [%d, %d) is not inside the %u x %u image", left, right,
                 top, bottom, cinfo.output_width, cinfo.output_height);
        jpeg_destroy_decompress(&cinfo);
        return LD_BAD_REQUEST;
    }
    JDIMENSION first = (JDIMENSION)left;
    JDIMENSION width = (JDIMENSION)(right - left);
    if (width < cinfo.output_width) {
        jpeg_crop_scanline(&cinfo, &first, &width);
    }
    size_t stride = (size_t)cinfo.output_width * 3;
    JDIMENSION count = (JDIMENSION)(bottom - top);
    if (stride * count > capacity) {
        snprintf(message, message_size, "%zu bytes needed, %zu given", stride * count, capacity);
        jpeg_destroy_decompress(&cinfo);
        return LD_BAD_REQUEST;
    }
    if (top > 0) {
        jpeg_skip_scanlines(&cinfo, (JDIMENSION)top);
    }
    while (cinfo.output_scanline < (JDIMENSION)bottom) {
        JDIMENSION done = cinfo.output_scanline - (JDIMENSION)top;
        JDIMENSION want = (JDIMENSION)bottom - cinfo.output_scanline;
        if (want > LD_ROWS_PER_READ) {
            want = LD_ROWS_PER_READ;
        }
        for (JDIMENSION row = 0; row < want; row++) {
            rows[row] = out + stride * (done + row);
        }
        if (jpeg_read_scanlines(&cinfo, rows, want) == 0) {
            snprintf(message, message_size, "the decoder stopped at row %u",
                     cinfo.output_scanline);
            jpeg_destroy_decompress(&cinfo);
            return LD_ERROR;
        }
    }
    if (cinfo.unread_marker != JPEG_EOI &&
        !ld_has_end(cinfo.src->next_input_byte, cinfo.src->bytes_in_buffer)) {
        snprintf(message, message_size, "the data ends before the image does (no end marker)");
        jpeg_destroy_decompress(&cinfo);
        return LD_ERROR;
    }
    place[0] = (int)cinfo.output_width;
    place[1] = (int)count;
    place[2] = (int)first;
    place[3] = top;
    jpeg_abort_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return LD_OK;
}

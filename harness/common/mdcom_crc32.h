/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_crc32.h - CRC-32 (IEEE 802.3: reflected, polynomial 0xEDB88320, init
 * and final xor 0xFFFFFFFF) of the end-to-end message checks, for the C
 * programs around the library (harness/vhost-rpmsg and the test peers that
 * talk to it or to OpenAMP). Header only, bitwise (small, no table).
 * Chainable: mdcom_crc32(mdcom_crc32(0, a, m), b, n) == CRC-32 of a || b.
 */
#ifndef MDCOM_TOOLS_CRC32_H
#define MDCOM_TOOLS_CRC32_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t mdcom_crc32(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

#endif /* MDCOM_TOOLS_CRC32_H */

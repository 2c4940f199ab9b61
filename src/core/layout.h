/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * layout.h - the core's private side of the wire format: the layout
 * computation (this file and layout.c are the only places that compute where
 * anything lives) and small helpers. The region's structs, constants and
 * their _Static_asserts, with the layout diagram, are in the public
 * <mdcom/wire.h>.
 */
#ifndef MDCOM_LAYOUT_H
#define MDCOM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/mdcom.h"
#include "mdcom/platform.h"
#include "mdcom/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The region's and one channel's geometry, computed by
 * mdcom_layout_compute() from the config alone (never read back from the
 * region): the public inspectors' types of <mdcom/wire.h>, one definition. */
typedef mdcom_wire_chan_layout mdcom_chan_layout;
typedef mdcom_wire_layout mdcom_layout;

/* Bounded error-message builder (no libc). */
typedef struct mdcom_err {
    char *buf;
    size_t cap;
    size_t pos;
} mdcom_err;
void mdcom_err_str(mdcom_err *e, const char *s);
/* Append fmt, whose "%s" and "%u" take the next argument (a string, NULL
 * for nothing; a uint32_t); every other character is copied. */
void mdcom_err_fmt(mdcom_err *e, const char *fmt, ...);
/* Convenience: "region 'R': " prefix + msg; returns code. */
int mdcom_err_set(mdcom_err *e, int code, const char *region, const char *msg);

size_t mdcom_strnlen(const char *s, size_t max);

/* FNV-1a (32-bit) of n bytes, continuing from h (MDCOM_FNV1A_BASIS to
 * start): the layout hash and the attach hold keys. */
#define MDCOM_FNV1A_BASIS 2166136261u
static inline uint32_t mdcom_fnv1a(uint32_t h, const void *p, size_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    while (n--) {
        h ^= *b++;
        h *= 16777619u;
    }
    return h;
}
int mdcom_streq(const char *a, const char *b, size_t max);

/* Validate cfg and compute the region layout. chans (may be NULL) receives
 * n_channels entries (on failure, some of them). Returns 0, -EINVAL
 * (config invalid: e says which key) or -ENOSPC (region_size too small; e
 * says how much is needed). */
int mdcom_layout_compute(const mdcom_config *cfg, mdcom_layout *lay, mdcom_chan_layout *chans,
                         mdcom_err *e);

/* The k-th string of a packed table ("a\0b\0c"). */
const char *mdcom_nth_str(const char *packed, uint32_t k);

/* The header's first words, up to master_domain, as 32-bit words (index of
 * field f: MDCOM_HW(f)), and a directory entry's words after its name
 * (MDCOM_DW(f)): what format writes and verify expects. The header's state
 * and generation words (the attach protocol's, not the layout's) are left 0
 * and never written from here. */
#define MDCOM_HDR_WORDS 15u
#define MDCOM_HW(f) (offsetof(mdcom_wire_hdr, f) / 4u)
#define MDCOM_DIRENT_WORDS 8u
#define MDCOM_DW(f) ((offsetof(mdcom_wire_dirent, f) - offsetof(mdcom_wire_dirent, type)) / 4u)
_Static_assert(MDCOM_HW(master_domain) == MDCOM_HDR_WORDS - 1u, "the header's layout words");
_Static_assert(sizeof(mdcom_wire_dirent) - offsetof(mdcom_wire_dirent, type) ==
                   MDCOM_DIRENT_WORDS * 4u,
               "a directory entry's words after its name");
_Static_assert(offsetof(mdcom_wire_domain, role) == offsetof(mdcom_wire_domain, id) + 4u,
               "a domain entry: id, role");
void mdcom_layout_hdr_words(const mdcom_config *cfg, const mdcom_layout *lay,
                            uint32_t w[MDCOM_HDR_WORDS]);
void mdcom_layout_dirent_words(const mdcom_chan_layout *cl, uint32_t w[MDCOM_DIRENT_WORDS]);

/* Write header, tables and empty channels for cfg into base (master). The
 * state and fmt_pid/fmt_token words are left alone: the caller owns the
 * region through state == FORMATTING and publishes READY. same: the region
 * held this very layout before (a re-format in place): each FIFO channel's
 * messages still queued there are counted into its stats.discarded. */
void mdcom_layout_format(void *base, const mdcom_config *cfg, const mdcom_layout *lay,
                         const mdcom_chan_layout *chans, uint32_t generation, int same);

/* Write the header's fixed fields (not state, generation, fmt_*), the
 * domain table and the directory for cfg: what a remote verifies. The
 * formatter rewrites them when its audit finds them damaged. */
void mdcom_layout_write_tables(void *base, const mdcom_config *cfg, const mdcom_layout *lay,
                               const mdcom_chan_layout *chans);

/* (Re)initialise one channel's area to its empty state. */
void mdcom_layout_format_channel(void *base, const mdcom_chan_layout *cl);

/* Check a formatted region against the layout computed from our own config.
 * Reads every shared header/directory field once. Returns 0, -EBADMSG,
 * -EPROTONOSUPPORT, -ESTALE (with e saying which field differs). */
int mdcom_layout_verify(const void *base, uint32_t mapped_size, const mdcom_config *cfg,
                        const mdcom_layout *lay, const mdcom_chan_layout *chans, mdcom_err *e);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_LAYOUT_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export.h - symbol visibility of libmdcom's public API.
 *
 * The library is compiled with -fvisibility=hidden. Every public header wraps
 * its declarations in MDCOM_API_BEGIN ... MDCOM_API_END, which gives them
 * default visibility: libmdcom.so exports exactly the functions the public
 * headers declare (tests/package checks it against `nm -D`), and the linker
 * version script src/libmdcom.map puts them in the version node of the ABI.
 * MDCOM_API marks a single declaration outside such a block.
 *
 * For an application these change nothing: a declaration's visibility only
 * matters where it is defined.
 */
#ifndef MDCOM_EXPORT_H
#define MDCOM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define MDCOM_API __attribute__((visibility("default")))
#define MDCOM_API_BEGIN _Pragma("GCC visibility push(default)")
#define MDCOM_API_END _Pragma("GCC visibility pop")
#else
#define MDCOM_API
#define MDCOM_API_BEGIN
#define MDCOM_API_END
#endif

#endif /* MDCOM_EXPORT_H */

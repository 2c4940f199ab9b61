/* SPDX-License-Identifier: BSD-3-Clause */
// qemu_results.h - what the QEMU tests of this directory share about a
// firmware's console and about running at all:
//
//   qemu_results      the "RESULT <name> <rest>" lines of a console: name -> rest
//   qemu_skip_or_fail a test that cannot run (no QEMU, no image) says why and
//                     skips (exit 77), except under CI (env CI=true), where
//                     that is a failure (exit 1)
#ifndef MDCOM_TESTS_QEMU_RESULTS_H
#define MDCOM_TESTS_QEMU_RESULTS_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

inline std::map<std::string, std::string> qemu_results(const std::string &console)
{
    std::map<std::string, std::string> out;
    std::istringstream in(console);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("RESULT ", 0) != 0)
            continue;
        std::string rest = line.substr(7);
        auto sp = rest.find(' ');
        out[rest.substr(0, sp)] = sp == std::string::npos ? "" : rest.substr(sp + 1);
    }
    return out;
}

inline int qemu_skip_or_fail(const std::string &why)
{
    const char *ci = std::getenv("CI");
    if (ci && std::strcmp(ci, "true") == 0) {
        std::printf("FAIL (CI=true): %s\n", why.c_str());
        return 1;
    }
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
}

#endif // MDCOM_TESTS_QEMU_RESULTS_H

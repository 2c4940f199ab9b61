/*
 * transports.c - the table of round-trip transports, in report order.
 * Baselines first: the ratios of the others refer to them.
 */
#include <string.h>

#include "transport.h"

extern const bench_transport bench_tr_raw_spin;
extern const bench_transport bench_tr_raw_futex;
extern const bench_transport bench_tr_mdcom_copy_poll;
extern const bench_transport bench_tr_mdcom_zc_poll;
extern const bench_transport bench_tr_mdcom_copy_block;
extern const bench_transport bench_tr_mdcom_zc_block;

const bench_transport *const bench_transports[] = {
    &bench_tr_raw_spin,        &bench_tr_raw_futex,       &bench_tr_mdcom_copy_poll,
    &bench_tr_mdcom_zc_poll,   &bench_tr_mdcom_copy_block, &bench_tr_mdcom_zc_block,
};
const unsigned bench_n_transports = sizeof(bench_transports) / sizeof(bench_transports[0]);

const bench_transport *bench_transport_find(const char *name)
{
    for (unsigned i = 0; i < bench_n_transports; i++)
        if (strcmp(bench_transports[i]->name, name) == 0)
            return bench_transports[i];
    return NULL;
}

// SPDX-License-Identifier: BSD-3-Clause
/*
 * events.hpp - the wait sets of <mdcom/events.h> for the C++ API of
 * <mdcom/mdcom.hpp> (the same conventions: results, std::chrono timeouts,
 * mdcom::span; header-only). A separate header because events.h is the
 * Linux port's (src/linux/events.c): code that only includes mdcom.hpp
 * needs nothing of it.
 *
 *   mdcom::wait_set   owns an mdcom_waitset_t (destroyed with it), move-only
 */
#ifndef MDCOM_EVENTS_HPP
#define MDCOM_EVENTS_HPP

#include <utility>

#include "mdcom/events.h"
#include "mdcom/mdcom.hpp"

namespace mdcom {

namespace ev {
inline constexpr uint32_t unlocked = MDCOM_EV_UNLOCKED; /* SMEM: the lock is free */
} // namespace ev

/* A set of channels of one attachment to wait on together, in a thread or
 * through its pollable fd (an event loop). Must not outlive the attachment. */
class wait_set {
public:
    wait_set() noexcept = default;
    explicit wait_set(mdcom_waitset_t *ws) noexcept : ws_(ws) {}
    wait_set(wait_set &&o) noexcept : ws_(std::exchange(o.ws_, nullptr)) {}
    wait_set &operator=(wait_set &&o) noexcept
    {
        if (this != &o) {
            reset();
            ws_ = std::exchange(o.ws_, nullptr);
        }
        return *this;
    }
    wait_set(const wait_set &) = delete;
    wait_set &operator=(const wait_set &) = delete;
    ~wait_set() { reset(); }

    /* mdcom_waitset_create */
    static result<wait_set> create(const attachment &m) noexcept
    {
        mdcom_waitset_t *ws = nullptr;
        if (int r = mdcom_waitset_create(m.get(), &ws); r < 0)
            return error(r);
        return wait_set(ws);
    }

    mdcom_waitset_t *get() const noexcept { return ws_; }
    explicit operator bool() const noexcept { return ws_ != nullptr; }

    /* members: a FIFO channel for events (ev::rx | tx | space | notified),
     * an SMEM channel for ev::unlocked; user comes back in mdcom_event */
    result<void> add(fifo_channel ch, uint32_t events, void *user = nullptr) const noexcept
    {
        return detail::check(mdcom_waitset_add_fifo(ws_, ch.get(), events, user));
    }
    result<void> add(smem_channel ch, void *user = nullptr) const noexcept
    {
        return detail::check(mdcom_waitset_add_smem(ws_, ch.get(), user));
    }
    result<void> remove(fifo_channel ch) const noexcept
    {
        return detail::check(mdcom_waitset_remove(ws_, ch.get()));
    }
    result<void> remove(smem_channel ch) const noexcept
    {
        return detail::check(mdcom_waitset_remove(ws_, ch.get()));
    }

    /* Wait up to t for members' events: the first entries of out that were
     * filled (at least one), or ETIMEDOUT. */
    result<span<mdcom_event>> wait(span<mdcom_event> out, timeout t) const noexcept
    {
        uint32_t n = out.size() > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(out.size());
        int r = mdcom_waitset_wait(ws_, out.data(), n, t.ns());
        if (r < 0)
            return error(r);
        return out.first(static_cast<std::size_t>(r));
    }

    /* the set's pollable fd (owned by the set) */
    result<int> fd() const noexcept
    {
        int r = mdcom_waitset_fd(ws_);
        if (r < 0)
            return error(r);
        return r;
    }

private:
    void reset() noexcept
    {
        if (ws_)
            (void)mdcom_waitset_destroy(std::exchange(ws_, nullptr));
    }
    mdcom_waitset_t *ws_ = nullptr;
};

} // namespace mdcom

#endif /* MDCOM_EVENTS_HPP */

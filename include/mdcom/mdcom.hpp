// SPDX-License-Identifier: BSD-3-Clause
/*
 * mdcom.hpp - header-only C++17 API over the C API of <mdcom/mdcom.h>
 * (issue 37). It adds no behaviour: every call maps to one C call (or a
 * loop of them, for the waiting alloc/dequeue) and says what the C call says.
 * It includes only the public C header and the standard library, and also
 * compiles as C++20 (tests/cpp builds a test that way). docs/cpp.md shows it.
 *
 *   mdcom::attachment    owns an mdcom_t (mdcom_init .. mdcom_term), move-only
 *   mdcom::fifo_channel  a view of a FIFO channel, valid while its attachment lives
 *   mdcom::smem_channel  the same for an SMEM channel
 *   mdcom::block         a zero-copy block held by this process (allocated or
 *                        dequeued): freed when dropped unless enqueued/released
 *   mdcom::smem_lock     the SMEM lock held, released when dropped
 *   mdcom::timeout       any std::chrono duration, mdcom::poll or mdcom::forever
 *   mdcom::span<T>       a pointer and a length (the zero-copy views)
 *   mdcom::result<T>     a value or an mdcom::error (the errno)
 *
 * <mdcom/events.hpp> adds mdcom::wait_set (the wait sets of events.h).
 *
 * Errors: results, not exceptions. A call returns result<T>: the value, or
 * the error the C call returned (error::code() is the positive errno,
 * error::message() mdcom_strerror's text). Why:
 *   - timeouts (ETIMEDOUT), a dry pool (ENOBUFS), an empty or full queue
 *     (EAGAIN) and a busy lock (EBUSY) are the normal outcomes of a
 *     non-blocking or timed call, to be handled where the call is, not
 *     unwound through the stack;
 *   - the library lives where exceptions are often off (firmware builds,
 *     -fno-exceptions): this header targets Linux, but code using it should
 *     build there too; it never throws and works with -fno-exceptions;
 *   - result<T> maps one-to-one onto the C convention (negative errno), so
 *     nothing is lost or renamed between the two APIs.
 * result<T> is [[nodiscard]]. value() (or *, ->) on an error is a bug of the
 * caller: it writes the error to stderr and calls std::abort().
 *
 * Spans: C++17 has no std::span, so mdcom::span<T> is a small view of its own,
 * in C++17 and C++20 alike (one type for both, so translation units built
 * with either standard agree on every class here: no ODR trap). Under C++20
 * it converts from and to std::span.
 *
 * Lifetimes (as in the C API): the mdcom_config given to attachment::attach
 * must outlive the attachment (the library keeps the pointer; a temporary is
 * refused at compile time). Channel views, blocks and locks must not outlive
 * their attachment: declare the attachment first, so it is destroyed last.
 * mdcom_term (the attachment's destructor) gives back whatever blocks and
 * locks the process still holds.
 */
#ifndef MDCOM_MDCOM_HPP
#define MDCOM_MDCOM_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif

#include "mdcom/mdcom.h"

namespace mdcom {

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/* An error of an mdcom call: the errno (positive, e.g. ETIMEDOUT). */
class error {
public:
    /* from a C return value (-ETIMEDOUT) or an errno (ETIMEDOUT) */
    constexpr explicit error(int e) noexcept : code_(e < 0 ? -e : e) {}
    constexpr int code() const noexcept { return code_; }
    /* mdcom_strerror's text, e.g. "ETIMEDOUT: timed out" */
    const char *message() const noexcept { return mdcom_strerror(code_); }
    /* the outcomes of a call that did not block long enough, not failures */
    constexpr bool is_timeout() const noexcept { return code_ == ETIMEDOUT; }
    constexpr bool would_block() const noexcept
    {
        return code_ == EAGAIN || code_ == ENOBUFS || code_ == EBUSY;
    }
    friend constexpr bool operator==(error a, error b) noexcept { return a.code_ == b.code_; }
    friend constexpr bool operator!=(error a, error b) noexcept { return a.code_ != b.code_; }

private:
    int code_;
};

namespace detail {
[[noreturn]] inline void bad_access(error e) noexcept
{
    std::fprintf(stderr, "mdcom::result: value() of an error: %s\n", e.message());
    std::abort();
}
} // namespace detail

/* A value or an error (an expected-style result, without exceptions). */
template <class T>
class [[nodiscard]] result {
public:
    result(T v) : v_(std::move(v)) {}
    /* error(0) would be neither a value nor an error: it is taken as EINVAL */
    result(mdcom::error e) : e_(e.code() ? e : mdcom::error(EINVAL)) {}

    bool has_value() const noexcept { return v_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }

    T &value() &
    {
        check();
        return *v_;
    }
    const T &value() const &
    {
        check();
        return *v_;
    }
    T &&value() &&
    {
        check();
        return std::move(*v_);
    }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }
    T &&operator*() && { return std::move(*this).value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    template <class U>
    T value_or(U &&alt) const &
    {
        return v_ ? *v_ : static_cast<T>(std::forward<U>(alt));
    }
    template <class U>
    T value_or(U &&alt) &&
    {
        return v_ ? std::move(*v_) : static_cast<T>(std::forward<U>(alt));
    }

    /* error(0) ("no error", code() 0) when there is a value */
    mdcom::error error() const noexcept { return e_; }

private:
    void check() const noexcept
    {
        if (!v_)
            detail::bad_access(e_);
    }
    std::optional<T> v_;
    mdcom::error e_{0};
};

/* Success or an error. */
template <>
class [[nodiscard]] result<void> {
public:
    result() noexcept = default;
    result(mdcom::error e) noexcept : e_(e) {}
    bool has_value() const noexcept { return e_.code() == 0; }
    explicit operator bool() const noexcept { return has_value(); }
    void value() const noexcept
    {
        if (!has_value())
            detail::bad_access(e_);
    }
    mdcom::error error() const noexcept { return e_; }

private:
    mdcom::error e_{0};
};

namespace detail {
/* C return value (0 or -errno) -> result<void> */
inline result<void> check(int r) noexcept
{
    if (r < 0)
        return error(r);
    return {};
}
} // namespace detail

/* ------------------------------------------------------------------ */
/* Timeouts                                                             */
/* ------------------------------------------------------------------ */

/* How long a call may block: any std::chrono duration (rounded up to whole
 * nanoseconds; negative = poll, like an expired deadline; beyond ~292 years
 * = forever), or the constants mdcom::poll and mdcom::forever. */
class timeout {
public:
    template <class Rep, class Period>
    constexpr timeout(std::chrono::duration<Rep, Period> d) noexcept : ns_(to_ns(d))
    {}
    /* the C value: MDCOM_POLL, MDCOM_FOREVER or a positive ns count */
    constexpr int64_t ns() const noexcept { return ns_; }
    constexpr bool is_forever() const noexcept { return ns_ == MDCOM_FOREVER; }
    constexpr bool is_poll() const noexcept { return ns_ == MDCOM_POLL; }
    static constexpr timeout from_c(int64_t ns) noexcept { return timeout(ns, 0); }

private:
    constexpr timeout(int64_t ns, int) noexcept : ns_(ns < 0 ? MDCOM_FOREVER : ns) {}
    template <class Rep, class Period>
    static constexpr int64_t to_ns(std::chrono::duration<Rep, Period> d) noexcept
    {
        using D = std::chrono::duration<Rep, Period>;
        if (d <= D::zero())
            return MDCOM_POLL;
        /* compared in floating point: converting a huge duration to ns (or
         * ns::max() to a narrow Rep) would overflow */
        if (std::chrono::duration<double, std::nano>(d).count() >= 9.2e18)
            return MDCOM_FOREVER;
        return std::chrono::ceil<std::chrono::nanoseconds>(d).count();
    }
    int64_t ns_;
};

/* Never block / block until the event (MDCOM_POLL, MDCOM_FOREVER). */
inline constexpr timeout poll = timeout::from_c(MDCOM_POLL);
inline constexpr timeout forever = timeout::from_c(MDCOM_FOREVER);

namespace detail {
/* The time left of t, started at t0, for a loop of waits. */
struct deadline {
    explicit deadline(timeout t) noexcept : t_(t), t0_(std::chrono::steady_clock::now()) {}
    timeout left() const noexcept
    {
        if (t_.is_forever() || t_.is_poll())
            return t_;
        auto spent = std::chrono::steady_clock::now() - t0_;
        auto rest = std::chrono::nanoseconds(t_.ns()) - spent;
        return rest <= std::chrono::nanoseconds::zero() ? poll : timeout(rest);
    }
    timeout t_;
    std::chrono::steady_clock::time_point t0_;
};
} // namespace detail

/* ------------------------------------------------------------------ */
/* Views                                                                */
/* ------------------------------------------------------------------ */

/* A contiguous range of T: a pointer and a length (no ownership). */
template <class T>
class span {
public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using size_type = std::size_t;
    using pointer = T *;
    using reference = T &;
    using iterator = T *;

    constexpr span() noexcept = default;
    constexpr span(T *p, std::size_t n) noexcept : p_(p), n_(n) {}
    template <std::size_t N>
    constexpr span(T (&a)[N]) noexcept : p_(a), n_(N)
    {}
    /* a contiguous range: std::vector, std::array, std::string, another
     * span (span<T> -> span<const T>), std::span in C++20, ... */
    template <
        class C,
        class = std::enable_if_t<
            !std::is_array_v<std::remove_reference_t<C>> &&
            std::is_convertible_v<
                std::remove_pointer_t<decltype(std::data(std::declval<C &>()))> (*)[], T (*)[]>>,
        class = decltype(std::size(std::declval<C &>()))>
    constexpr span(C &&c) noexcept : p_(std::data(c)), n_(std::size(c))
    {}
#if __cplusplus >= 202002L && defined(__cpp_lib_span)
    /* to std::span (from std::span: the range constructor above) */
    constexpr operator std::span<T>() const noexcept { return {p_, n_}; }
#endif

    constexpr T *data() const noexcept { return p_; }
    constexpr std::size_t size() const noexcept { return n_; }
    constexpr std::size_t size_bytes() const noexcept { return n_ * sizeof(T); }
    constexpr bool empty() const noexcept { return n_ == 0; }
    constexpr T *begin() const noexcept { return p_; }
    constexpr T *end() const noexcept { return p_ + n_; }
    constexpr T &operator[](std::size_t i) const noexcept { return p_[i]; }
    /* the first n elements (at most size()) / from offset off on */
    constexpr span first(std::size_t n) const noexcept { return {p_, n < n_ ? n : n_}; }
    constexpr span subspan(std::size_t off) const noexcept
    {
        return off < n_ ? span{p_ + off, n_ - off} : span{p_ + n_, 0};
    }

private:
    T *p_ = nullptr;
    std::size_t n_ = 0;
};

/* The bytes of a contiguous range (a span, container or array): a message
 * to send from, a buffer to receive into. */
template <class C>
span<const std::byte> as_bytes(const C &c) noexcept
{
    return {reinterpret_cast<const std::byte *>(std::data(c)),
            std::size(c) * sizeof(*std::data(c))};
}
template <class C>
span<std::byte> as_writable_bytes(C &&c) noexcept
{
    return {reinterpret_cast<std::byte *>(std::data(c)), std::size(c) * sizeof(*std::data(c))};
}

/* ------------------------------------------------------------------ */
/* Zero-copy blocks                                                     */
/* ------------------------------------------------------------------ */

/* What an enqueue or a send did: queued, or dropped by the channel's filter
 * (MDCOM_FILTERED; the block went back to the pool, counted). */
enum class sent { queued, filtered };

/* A block of a FIFO channel held by this process: allocated (to fill and
 * enqueue) or dequeued (to read). When dropped still held, it is freed
 * (mdcom_fifoch_free) and the channel notified, so a sender waiting for a
 * block wakes. Move-only. */
class block {
public:
    block() noexcept = default;
    block(block &&o) noexcept { *this = std::move(o); }
    block &operator=(block &&o) noexcept
    {
        if (this != &o) {
            drop();
            ch_ = std::exchange(o.ch_, nullptr);
            id_ = o.id_;
            p_ = o.p_;
            size_ = o.size_;
            len_ = o.len_;
        }
        return *this;
    }
    block(const block &) = delete;
    block &operator=(const block &) = delete;
    ~block() { drop(); }

    /* still held (not enqueued, released or detached) */
    bool held() const noexcept { return ch_ != nullptr; }
    explicit operator bool() const noexcept { return held(); }
    uint32_t id() const noexcept { return id_; }
    /* the whole block (its block_size bytes), to write a message into */
    span<std::byte> buffer() const noexcept { return {p_, size_}; }
    /* the message of a dequeued block (its length bytes) */
    span<const std::byte> message() const noexcept { return {p_, len_}; }
    uint32_t length() const noexcept { return len_; }

    /* Queue the first len bytes (mdcom_fifoch_enqueue), then, unless
     * wake is false (batches: notify the channel once after the last),
     * mdcom_fifoch_notify. On success the block is no longer held. On an
     * error it stays held (EAGAIN, queue full: retry or drop it), except
     * ENOTCONN (this process was reaped: the pool has the block back). */
    result<sent> enqueue(uint32_t len, bool wake = true) noexcept
    {
        if (!ch_)
            return error(EINVAL);
        int r = mdcom_fifoch_enqueue(ch_, id_, len);
        if (r < 0) {
            if (r == -ENOTCONN)
                ch_ = nullptr;
            return error(r);
        }
        mdcom_fifoch_t *ch = std::exchange(ch_, nullptr);
        if (wake)
            (void)mdcom_fifoch_notify(ch);
        return r == MDCOM_FILTERED ? sent::filtered : sent::queued;
    }

    /* Free the block now (mdcom_fifoch_free + notify) and say how it went;
     * the block is not held afterwards whatever the answer. */
    result<void> release() noexcept
    {
        if (!ch_)
            return error(EINVAL);
        mdcom_fifoch_t *ch = std::exchange(ch_, nullptr);
        int r = mdcom_fifoch_free(ch, id_);
        (void)mdcom_fifoch_notify(ch);
        return detail::check(r);
    }

    /* Give up the guard without freeing: the caller now owns block id()
     * through the C API. */
    uint32_t detach() noexcept
    {
        ch_ = nullptr;
        return id_;
    }

private:
    friend class fifo_channel;
    block(mdcom_fifoch_t *ch, uint32_t id, uint32_t len) noexcept : ch_(ch), id_(id), len_(len)
    {
        void *p = nullptr;
        uint32_t size = 0;
        if (mdcom_fifoch_get(ch, id, &p, &size) == 0) {
            p_ = static_cast<std::byte *>(p);
            size_ = size;
        }
    }
    void drop() noexcept
    {
        if (ch_)
            (void)release();
    }

    mdcom_fifoch_t *ch_ = nullptr;
    uint32_t id_ = 0;
    std::byte *p_ = nullptr;
    uint32_t size_ = 0;
    uint32_t len_ = 0;
};

/* ------------------------------------------------------------------ */
/* FIFO channels                                                        */
/* ------------------------------------------------------------------ */

/* Events of wait() (MDCOM_EV_*): levels rx, tx, space; the edge notified. */
namespace ev {
inline constexpr uint32_t rx = MDCOM_EV_RX;
inline constexpr uint32_t tx = MDCOM_EV_TX;
inline constexpr uint32_t notified = MDCOM_EV_NOTIFY;
inline constexpr uint32_t space = MDCOM_EV_SPACE;
} // namespace ev

/* A FIFO channel of an attachment: a copyable view, valid while the
 * attachment lives. */
class fifo_channel {
public:
    fifo_channel() noexcept = default;
    explicit fifo_channel(mdcom_fifoch_t *ch) noexcept : ch_(ch) {}
    mdcom_fifoch_t *get() const noexcept { return ch_; }
    explicit operator bool() const noexcept { return ch_ != nullptr; }

    /* Copy msg into a block and queue it, waiting up to t for a free block
     * (mdcom_fifoch_send). EMSGSIZE when msg is larger than a block. The
     * calls that may block take their timeout explicitly (no default);
     * alloc and dequeue default to poll, as their C calls never block. */
    result<sent> send(span<const std::byte> msg, timeout t) const noexcept
    {
        if (msg.size() > UINT32_MAX)
            return error(EMSGSIZE);
        int r = mdcom_fifoch_send(ch_, msg.data(), static_cast<uint32_t>(msg.size()), t.ns());
        if (r < 0)
            return error(r);
        return r == MDCOM_FILTERED ? sent::filtered : sent::queued;
    }
    result<sent> send(const void *msg, std::size_t len, timeout t) const noexcept
    {
        return send(span<const std::byte>(static_cast<const std::byte *>(msg), len), t);
    }

    /* Wait up to t for a message and copy it into buf (mdcom_fifoch_recv):
     * its length, or ETIMEDOUT (with poll too: it waits like
     * mdcom_fifoch_wait), or EMSGSIZE (buf too small: the message is
     * consumed, its first buf.size() bytes copied). */
    result<std::size_t> recv(span<std::byte> buf, timeout t) const noexcept
    {
        uint32_t cap = buf.size() > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(buf.size());
        int r = mdcom_fifoch_recv(ch_, buf.data(), cap, t.ns());
        if (r < 0)
            return error(r);
        return static_cast<std::size_t>(r);
    }
    result<std::size_t> recv(void *buf, std::size_t cap, timeout t) const noexcept
    {
        return recv(span<std::byte>(static_cast<std::byte *>(buf), cap), t);
    }

    /* A free block to fill, waiting up to t (default: poll, like
     * mdcom_fifoch_alloc) for one: ENOBUFS when the pool stayed empty
     * with poll, ETIMEDOUT after a longer wait. */
    result<block> alloc(timeout t = poll) const noexcept
    {
        return take(t, ev::tx, ENOBUFS, [this](uint32_t *id, uint32_t *len) {
            *len = 0;
            return mdcom_fifoch_alloc(ch_, id);
        });
    }

    /* The oldest queued message, waiting up to t (default: poll, like
     * mdcom_fifoch_dequeue): EAGAIN when the queue stayed empty with poll,
     * ETIMEDOUT after a longer wait. */
    result<block> dequeue(timeout t = poll) const noexcept
    {
        return take(t, ev::rx, EAGAIN, [this](uint32_t *id, uint32_t *len) {
            return mdcom_fifoch_dequeue(ch_, id, len);
        });
    }

    /* mdcom_fifoch_wait: the mask of events that hold, or ETIMEDOUT. */
    result<uint32_t> wait(uint32_t events, timeout t) const noexcept
    {
        int r = mdcom_fifoch_wait(ch_, events, t.ns());
        if (r < 0)
            return error(r);
        return static_cast<uint32_t>(r);
    }
    result<void> notify() const noexcept { return detail::check(mdcom_fifoch_notify(ch_)); }

    /* mdcom_sense_fifoch: a snapshot of the channel's counters */
    result<mdcom_fifo_state> state() const noexcept
    {
        mdcom_fifo_state st{};
        if (int r = mdcom_sense_fifoch(ch_, &st); r < 0)
            return error(r);
        return st;
    }
    result<void> set_filter(const mdcom_filter *f) const noexcept
    {
        return detail::check(mdcom_filter_set(ch_, f));
    }
    result<void> set_spin(uint32_t spin_ns) const noexcept
    {
        return detail::check(mdcom_fifoch_set_spin(ch_, spin_ns));
    }

private:
    /* try op; while it answers `empty` and time is left, wait for `event` */
    template <class Op>
    result<block> take(timeout t, uint32_t event, int empty, Op op) const noexcept
    {
        detail::deadline dl(t);
        for (;;) {
            uint32_t id = 0, len = 0;
            int r = op(&id, &len);
            if (r == 0)
                return block(ch_, id, len);
            if (r != -empty || t.is_poll())
                return error(r);
            timeout left = dl.left();
            if (left.is_poll())
                return error(ETIMEDOUT);
            int w = mdcom_fifoch_wait(ch_, event, left.ns());
            if (w < 0)
                return error(w);
        }
    }

    mdcom_fifoch_t *ch_ = nullptr;
};

/* ------------------------------------------------------------------ */
/* SMEM channels                                                        */
/* ------------------------------------------------------------------ */

/* The lock of an SMEM channel, held: released (mdcom_smemch_unlock) when
 * dropped. Move-only; data() is the shared area, to use while held. */
class smem_lock {
public:
    smem_lock() noexcept = default;
    smem_lock(smem_lock &&o) noexcept { *this = std::move(o); }
    smem_lock &operator=(smem_lock &&o) noexcept
    {
        if (this != &o) {
            (void)unlock();
            ch_ = std::exchange(o.ch_, nullptr);
            area_ = o.area_;
        }
        return *this;
    }
    smem_lock(const smem_lock &) = delete;
    smem_lock &operator=(const smem_lock &) = delete;
    ~smem_lock() { (void)unlock(); }

    bool owns_lock() const noexcept { return ch_ != nullptr; }
    explicit operator bool() const noexcept { return owns_lock(); }
    span<std::byte> data() const noexcept { return ch_ ? area_ : span<std::byte>{}; }
    /* Release now and say how it went (EPERM not held, ENOTCONN this
     * process was reaped and its lock broken); not held afterwards. */
    result<void> unlock() noexcept
    {
        if (!ch_)
            return error(EPERM);
        return detail::check(mdcom_smemch_unlock(std::exchange(ch_, nullptr)));
    }

private:
    friend class smem_channel;
    smem_lock(mdcom_smemch_t *ch, span<std::byte> area) noexcept : ch_(ch), area_(area) {}
    mdcom_smemch_t *ch_ = nullptr;
    span<std::byte> area_;
};

/* An SMEM channel of an attachment: a copyable view, valid while the
 * attachment lives. */
class smem_channel {
public:
    smem_channel() noexcept = default;
    explicit smem_channel(mdcom_smemch_t *ch) noexcept : ch_(ch) {}
    mdcom_smemch_t *get() const noexcept { return ch_; }
    explicit operator bool() const noexcept { return ch_ != nullptr; }

    /* Take the lock, waiting up to t: the guard, or ETIMEDOUT, EDEADLK
     * (held by this process already), EBUSY (with poll). */
    result<smem_lock> lock(timeout t) const noexcept
    {
        int r = t.is_poll() ? mdcom_smemch_trylock(ch_) : mdcom_smemch_lock(ch_, t.ns());
        if (r < 0)
            return error(r);
        return smem_lock(ch_, area());
    }
    result<smem_lock> try_lock() const noexcept { return lock(poll); }
    /* the shared area (access it only while holding the lock) */
    span<std::byte> area() const noexcept
    {
        void *p = nullptr;
        uint32_t size = 0;
        if (mdcom_smemch_get(ch_, &p, &size) != 0)
            return {};
        return {static_cast<std::byte *>(p), size};
    }

private:
    mdcom_smemch_t *ch_ = nullptr;
};

/* ------------------------------------------------------------------ */
/* Attachment                                                           */
/* ------------------------------------------------------------------ */

/* mdcom_init_opts with C++ types (what is not here stays 0). */
struct attach_options {
    timeout attach_timeout = poll; /* wait for the master to format the region */
    uint32_t spin_ns = 0;          /* 0 default; MDCOM_NO_SPIN */
    uint32_t heartbeat_ms = 0;     /* 0 none */
    bool keep_region = false;      /* master: keep the region file at term */
    const struct mdcom_platform *platform = nullptr;
    const struct mdcom_layout_table *layout = nullptr;
    std::string *explain = nullptr; /* receives mdcom_init's one-line reason */
};

/* This process attached to a system: owns an mdcom_t, terminated
 * (mdcom_term) when destroyed. Move-only. */
class attachment {
public:
    attachment() noexcept = default;
    /* adopt a handle from mdcom_init */
    explicit attachment(mdcom_t *m) noexcept : m_(m) {}
    attachment(attachment &&o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
    attachment &operator=(attachment &&o) noexcept
    {
        if (this != &o) {
            (void)term();
            m_ = std::exchange(o.m_, nullptr);
        }
        return *this;
    }
    attachment(const attachment &) = delete;
    attachment &operator=(const attachment &) = delete;
    ~attachment() { (void)term(); }

    /* mdcom_init of cfg as domain_id. cfg is kept by the library: it must
     * outlive the attachment (a temporary does not compile). */
    static result<attachment> attach(const mdcom_config &cfg, uint32_t domain_id,
                                     const attach_options &o = {})
    {
        char why[256] = "";
        mdcom_init_opts io{};
        io.attach_timeout_ns = o.attach_timeout.ns();
        io.platform = o.platform;
        io.errbuf = why;
        io.errbuf_len = sizeof(why);
        io.spin_ns = o.spin_ns;
        io.keep_region = o.keep_region ? 1u : 0u;
        io.heartbeat_ms = o.heartbeat_ms;
        io.layout = o.layout;
        mdcom_t *m = nullptr;
        int r = mdcom_init(&m, &cfg, domain_id, &io);
        if (o.explain)
            o.explain->assign(why); /* the only allocation here */
        if (r < 0)
            return error(r);
        return attachment(m);
    }
    static result<attachment> attach(const mdcom_config &&, uint32_t,
                                     const attach_options & = {}) = delete;

    mdcom_t *get() const noexcept { return m_; }
    explicit operator bool() const noexcept { return m_ != nullptr; }
    /* the handle, no longer owned (the caller calls mdcom_term) */
    mdcom_t *release() noexcept { return std::exchange(m_, nullptr); }
    /* mdcom_term now; empty afterwards. EINVAL when empty. */
    result<void> term() noexcept
    {
        if (!m_)
            return error(EINVAL);
        return detail::check(mdcom_term(std::exchange(m_, nullptr)));
    }

    uint32_t domain_id() const noexcept { return mdcom_domain_id(m_); }
    result<void> heartbeat() const noexcept { return detail::check(mdcom_heartbeat(m_)); }
    /* live processes attached as domain d */
    result<uint32_t> sense_process(uint32_t d) const noexcept
    {
        int r = mdcom_sense_process(m_, d);
        if (r < 0)
            return error(r);
        return static_cast<uint32_t>(r);
    }

    /* channels by name (ENOENT, EPERM: not a user) or by config index */
    result<fifo_channel> fifo(const char *name) const noexcept
    {
        mdcom_fifoch_t *ch = nullptr;
        if (int r = mdcom_fifoch_open(m_, name, &ch); r < 0)
            return error(r);
        return fifo_channel(ch);
    }
    result<fifo_channel> fifo_at(uint32_t index) const noexcept
    {
        mdcom_fifoch_t *ch = nullptr;
        if (int r = mdcom_fifoch_at(m_, index, &ch); r < 0)
            return error(r);
        return fifo_channel(ch);
    }
    result<smem_channel> smem(const char *name) const noexcept
    {
        mdcom_smemch_t *ch = nullptr;
        if (int r = mdcom_smemch_open(m_, name, &ch); r < 0)
            return error(r);
        return smem_channel(ch);
    }
    result<smem_channel> smem_at(uint32_t index) const noexcept
    {
        mdcom_smemch_t *ch = nullptr;
        if (int r = mdcom_smemch_at(m_, index, &ch); r < 0)
            return error(r);
        return smem_channel(ch);
    }

private:
    mdcom_t *m_ = nullptr;
};

} // namespace mdcom

#endif /* MDCOM_MDCOM_HPP */

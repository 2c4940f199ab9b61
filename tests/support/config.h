/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * support/config.h - tsup::Config, the one run-time mdcom_config builder of
 * the tests (C++17, header only, no GoogleTest: forked children use it too).
 *
 * A Config owns the storage of everything its mdcom_config points to (domain
 * and channel tables, names), so it may be built before fork() and copied.
 * Config(tag) invents a unique region name and removes that region file when
 * it is destroyed; Config::named(region) and every copy leave the file alone
 * (a fixture or the original removes it). Declare a Config before the
 * attachments that use it: they keep a pointer to its mdcom_config.
 */
#ifndef MDCOM_TESTS_SUPPORT_CONFIG_H
#define MDCOM_TESTS_SUPPORT_CONFIG_H

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "mdcom/mdcom.h"
#include "support/common.h"

namespace tsup {

/* A unique region name that fits MDCOM_NAME_MAX. */
inline std::string unique_name(const char *tag = "ut")
{
    return unique_region(tag).substr(0, MDCOM_NAME_MAX - 1);
}

class Config {
public:
    /* A unique region "<tag>-<pid>-<n>", removed when this object dies. */
    explicit Config(const char *tag = "ut") : region(unique_name(tag)), owned_(region) {}
    /* A given region name (a peer with another config, a region a fixture
     * removes); never removed by this object. */
    static Config named(const std::string &region)
    {
        Config c(nullptr);
        c.region = region;
        return c;
    }
    /* The two-domain system of most multi-process tests: "a" (id 0) master,
     * "b" (id 1) remote. */
    static Config two_domains(const std::string &region)
    {
        Config c = named(region);
        c.domain("a", 0, MDCOM_ROLE_MASTER).domain("b", 1, MDCOM_ROLE_REMOTE);
        return c;
    }
    /* A copy shares the names and never removes the region file. */
    Config(const Config &o)
        : region(o.region), domains(o.domains), channels(o.channels), strings_(o.strings_),
          size_(o.size_), mode_(o.mode_)
    {}
    Config &operator=(const Config &o)
    {
        if (this != &o) {
            region = o.region;
            domains = o.domains;
            channels = o.channels;
            strings_ = o.strings_;
            size_ = o.size_;
            mode_ = o.mode_;
        }
        return *this;
    }
    ~Config()
    {
        if (!owned_.empty())
            region_remove(owned_);
    }

    Config &domain(const std::string &name, uint32_t id, uint32_t role)
    {
        mdcom_domain_cfg d{};
        d.name = keep(name);
        d.id = id;
        d.role = role;
        domains.push_back(d);
        return *this;
    }
    /* master(0), r1(1), r2(2), r3(3) */
    Config &std_domains(uint32_t n = 4)
    {
        static const char *names[] = {"master", "r1", "r2", "r3"};
        for (uint32_t i = 0; i < n && i < 4; i++)
            domain(names[i], i, i == 0 ? MDCOM_ROLE_MASTER : MDCOM_ROLE_REMOTE);
        return *this;
    }
    Config &fifo(const std::string &name, uint32_t block_size, uint32_t block_count,
                 uint32_t queue_depth, uint32_t senders, uint32_t receivers)
    {
        channels.push_back(
            fifo_cfg(keep(name), block_size, block_count, queue_depth, senders, receivers));
        return *this;
    }
    Config &smem(const std::string &name, uint32_t size, uint32_t users)
    {
        channels.push_back(smem_cfg(keep(name), size, users));
        return *this;
    }
    Config &region_size(uint32_t v)
    {
        size_ = v;
        return *this;
    }
    Config &mode(uint32_t v)
    {
        mode_ = v;
        return *this;
    }
    /* The config with pointers refreshed; valid until the next change. */
    mdcom_config *get()
    {
        cfg_ = mdcom_config{};
        cfg_.region_name = region.c_str();
        cfg_.region_size = size_;
        cfg_.mode = mode_;
        cfg_.group = -1;
        cfg_.domains = domains.empty() ? nullptr : domains.data();
        cfg_.n_domains = (uint32_t)domains.size();
        cfg_.channels = channels.empty() ? nullptr : channels.data();
        cfg_.n_channels = (uint32_t)channels.size();
        return &cfg_;
    }
    const std::string &name() const { return region; }
    std::string path() const { return region_path(region); }
    /* Stable storage for a string the config points to. */
    const char *keep(const std::string &s)
    {
        strings_->push_back(s);
        return strings_->back().c_str();
    }

    std::string region;
    std::vector<mdcom_domain_cfg> domains;
    std::vector<mdcom_channel_cfg> channels;

private:
    explicit Config(std::nullptr_t) {}

    std::string owned_; /* the region file this object removes ("" none) */
    std::shared_ptr<std::deque<std::string>> strings_ = std::make_shared<std::deque<std::string>>();
    uint32_t size_ = 0;
    uint32_t mode_ = 0;
    mdcom_config cfg_{};
};

} // namespace tsup

#endif /* MDCOM_TESTS_SUPPORT_CONFIG_H */

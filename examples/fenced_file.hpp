// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// A protected resource kept in a file, fenced: what a store that is not Redis does with the
// fencing tokens of redlock (lock_options::fencing). The file's first line is the highest token
// that wrote it; a write with a lower token is refused. The check and the write are one step for
// every writer of this machine (an exclusive flock on a lock file beside it), and the new
// content replaces the old at once (a temporary file, fsync, rename), so that a reader never
// sees half of it. A database does the same in one statement:
//     UPDATE t SET v = ?, token = ? WHERE id = ? AND token <= ?   -- refused: no row changed
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

namespace redlock_example {

class fenced_file
{
public:
    explicit fenced_file(std::string path) : path_(std::move(path)) {}

    /// Writes `text` when `token` is at least the highest token the file has seen, and keeps
    /// `token` as the highest; returns false, changing nothing, when the token is lower.
    bool write_if_latest(std::uint64_t token, std::string_view text) const
    {
        const descriptor lock(::open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600), path_);
        if (::flock(lock.fd, LOCK_EX) != 0)
            throw std::system_error(errno, std::generic_category(), "flock " + path_);
        if (token < highest())
            return false;  // a holder superseded by a later one
        replace(std::to_string(token) + "\n" + std::string(text));
        return true;
    }

    /// Writes `text` whatever the token: what a resource that does not check tokens does.
    void overwrite(std::string_view text) const { replace("0\n" + std::string(text)); }

    /// The content, without the token line; empty when nothing was written.
    std::string content() const
    {
        std::ifstream in(path_);
        std::string first;
        std::getline(in, first);
        std::ostringstream rest;
        rest << in.rdbuf();
        return rest.str();
    }

private:
    struct descriptor
    {
        int fd;
        descriptor(int f, const std::string& what) : fd(f)
        {
            if (fd < 0)
                throw std::system_error(errno, std::generic_category(), "open " + what);
        }
        ~descriptor() { ::close(fd); }  // releases the flock
        descriptor(const descriptor&) = delete;
        descriptor& operator=(const descriptor&) = delete;
    };

    std::uint64_t highest() const
    {
        std::ifstream in(path_);
        std::uint64_t token = 0;
        in >> token;  // no file yet: 0
        return token;
    }

    void replace(const std::string& all) const
    {
        const std::string tmp = path_ + ".tmp";
        {
            const descriptor out(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), tmp);
            if (::write(out.fd, all.data(), all.size()) != static_cast<ssize_t>(all.size()) || ::fsync(out.fd) != 0)
                throw std::system_error(errno, std::generic_category(), "write " + tmp);
        }
        if (::rename(tmp.c_str(), path_.c_str()) != 0)
            throw std::system_error(errno, std::generic_category(), "rename " + tmp);
    }

    std::string path_;
};

}  // namespace redlock_example

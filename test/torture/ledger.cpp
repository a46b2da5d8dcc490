// The torture test's ledger files (see ledger.hpp).
#include "ledger.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace redlock::torture {

const char* to_string(held_kind k) noexcept
{
    switch (k)
    {
    case held_kind::mutex: return "mutex";
    case held_kind::multi: return "multi-resource";
    case held_kind::fenced: return "fenced";
    case held_kind::permit: return "permit";
    case held_kind::reader: return "reader";
    case held_kind::writer: return "writer";
    case held_kind::fenced_writer: return "fenced writer";
    case held_kind::count_: break;
    }
    return "?";
}

ledger_writer::ledger_writer(const std::string& path)
{
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (fd_ < 0)
        throw std::system_error(errno, std::generic_category(), "ledger: open " + path);
}

ledger_writer::~ledger_writer()
{
    if (fd_ >= 0)
        ::close(fd_);
}

void ledger_writer::append(const record& r)
{
    for (;;)
    {
        const auto n = ::write(fd_, &r, sizeof r);
        if (n == static_cast<ssize_t>(sizeof r))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        // A short write of a regular file means a full disk: the ledger would be torn.
        throw std::system_error(n < 0 ? errno : ENOSPC, std::generic_category(), "ledger: write");
    }
}

std::vector<record> read_ledger(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw std::system_error(errno, std::generic_category(), "ledger: open " + path);
    std::vector<record> out;
    std::string bytes;
    char buf[1 << 16];
    for (;;)
    {
        const auto n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
        {
            const int e = errno;
            ::close(fd);
            throw std::system_error(e, std::generic_category(), "ledger: read " + path);
        }
        if (n == 0)
            break;
        bytes.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (bytes.size() % sizeof(record) != 0)
        throw std::runtime_error("ledger: " + path + " is torn (" + std::to_string(bytes.size()) +
                                 " bytes, not a multiple of the record size)");
    out.resize(bytes.size() / sizeof(record));
    for (std::size_t i = 0; i < out.size(); ++i)
    {
        std::memcpy(&out[i], bytes.data() + i * sizeof(record), sizeof(record));
        if (out[i].magic != record::magic_value)
            throw std::runtime_error("ledger: " + path + ": record " + std::to_string(i) +
                                     " has a bad magic number");
    }
    return out;
}

}  // namespace redlock::torture

// The ledger of the torture test: what each worker did, as fixed-size binary records, one file
// per worker process, appended with write(2).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace redlock::torture {

/// Times are CLOCK_MONOTONIC nanoseconds (std::chrono::steady_clock on Linux/libstdc++), the
/// clock every process of the machine shares.
using nanos = std::int64_t;

enum class record_kind : std::uint32_t
{
    hold = 1,     ///< An acquisition that succeeded, and what became of the lock.
    failure = 2,  ///< An acquisition that failed (after all its attempts).
    stats = 3,    ///< One per process at the end: t_start holds the worst event-loop lag.
};

/// Bits of record::flags.
enum record_flags : std::uint32_t
{
    flag_try_lock = 1u << 0,          ///< Acquired with async_try_lock (else async_lock).
    flag_overran = 1u << 1,           ///< The holder slept past its validity on purpose.
    flag_extend_tried = 1u << 2,      ///< async_extend was called.
    flag_extend_ok = 1u << 3,         ///< ...and succeeded: valid_until_ext is the new validity.
    flag_unlock_called = 1u << 4,     ///< async_unlock was called (not after a failed extension).
    flag_further_resource = 1u << 5,  ///< A multi-resource lock's record for a resource after its
                                      ///< first (the first record counts the acquisition).
};

/// Which kind of lock a hold was (record::lock_kind): which others it excludes.
enum class held_kind : std::uint16_t
{
    mutex = 0,      ///< async_lock: excludes every other holder.
    multi,          ///< async_lock_all over several resources: a record per resource.
    fenced,         ///< A mutex with a fencing token.
    permit,         ///< One of record::permits permits of a semaphore.
    reader,         ///< A read-write lock's reader: beside other readers only.
    writer,         ///< A read-write lock's writer: alone.
    fenced_writer,  ///< A writer with a fencing token.
    count_
};

/// The kind's name, as the summary prints it.
const char* to_string(held_kind k) noexcept;

/// An error as stored: redlock's category, Asio's (operation_aborted), or anything else.
enum class error_domain : std::int32_t
{
    none = 0,
    redlock = 1,
    other = 2,
};

/// One record; the layout is fixed (no padding, checked below) so that the files can be read
/// back with one read(2) per file.
struct record
{
    std::uint32_t magic = magic_value;
    record_kind kind = record_kind::hold;
    std::uint16_t process = 0;  ///< Worker process index.
    std::uint16_t worker = 0;   ///< Coroutine index within the process.
    std::uint32_t resource = 0;
    std::uint32_t flags = 0;
    std::int32_t ttl_ms = 0;         ///< TTL of the acquisition.
    std::int32_t extend_ttl_ms = 0;  ///< TTL asked by the extension.
    held_kind lock_kind = held_kind::mutex;
    std::uint16_t permits = 0;  ///< The semaphore's permits (held_kind::permit), else 0.
    nanos t_start = 0;          ///< Taken just before async_lock / async_try_lock was called.
    nanos t_acquired = 0;       ///< When the acquisition completed (success or failure).
    nanos valid_until = 0;      ///< lock::valid_until() of the acquisition.
    nanos t_extend = 0;         ///< Just before async_extend was called.
    nanos t_extend_done = 0;    ///< When async_extend completed.
    nanos valid_until_ext = 0;  ///< lock::valid_until() after a successful extension.
    nanos t_release = 0;        ///< Just before async_unlock was called (the holder stops).
    nanos t_released = 0;       ///< When async_unlock completed.
    error_domain acquire_domain = error_domain::none;  ///< Failure records: the error.
    std::int32_t acquire_error = 0;
    error_domain extend_domain = error_domain::none;
    std::int32_t extend_error = 0;
    error_domain unlock_domain = error_domain::none;
    std::int32_t unlock_error = 0;
    char token[40] = {};      ///< The lock's token (hold records).
    std::uint64_t fence = 0;  ///< The lock's fencing token (fenced hold records), else 0.

    static constexpr std::uint32_t magic_value = 0x484c5452;  // "RTLH"
};

// No padding: every byte of a record written is a byte of a member.
static_assert(std::has_unique_object_representations_v<record>, "record must have no padding");
static_assert(sizeof(record) == 168);

/// Appends records to one file; each record is one write(2) of the whole record.
class ledger_writer
{
public:
    /// Creates (truncates) `path`. Throws std::system_error on failure.
    explicit ledger_writer(const std::string& path);
    ~ledger_writer();
    ledger_writer(const ledger_writer&) = delete;
    ledger_writer& operator=(const ledger_writer&) = delete;

    /// Throws std::system_error when the record cannot be written whole.
    void append(const record& r);

private:
    int fd_ = -1;
};

/// Reads every record of `path`. Throws std::runtime_error on a truncated file or a record
/// with a bad magic number.
std::vector<record> read_ledger(const std::string& path);

}  // namespace redlock::torture

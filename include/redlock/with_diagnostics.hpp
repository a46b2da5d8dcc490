// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_WITH_DIAGNOSTICS_HPP
#define REDLOCK_WITH_DIAGNOSTICS_HPP

#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/system_error.hpp>

#include <redlock/error.hpp>
#include <redlock/hold.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>

namespace redlock {

/// @brief The exception a failed client operation throws through an exception-based completion
/// token (the default token with `co_await`, `use_awaitable`, `use_future`).
///
/// A `boost::system::system_error` (so `catch (const boost::system::system_error&)` and
/// `code()` work as before) whose what() names the operation, the resource, the reason when
/// the failure is not a master's (e.g. which option was refused) and each master's outcome.
/// It never contains a token or a password.
class operation_error : public boost::system::system_error
{
public:
    /// An exception with code `ec` whose what() is `message`, about `resources`, with each
    /// master's outcome in `masters`.
    operation_error(error_code ec, std::string message, std::vector<std::string> resources,
                    std::vector<master_diagnostic> masters);

    /// The message given at construction, as it is (no error code message appended).
    const char* what() const noexcept override { return message_.c_str(); }

    /// The resources the operation was about (one, or several for async_lock_all).
    std::span<const std::string> resources() const noexcept { return resources_; }

    /// Each master's outcome in the operation's last round (empty when no round ran).
    std::span<const master_diagnostic> masters() const noexcept { return masters_; }

private:
    std::string message_;
    std::vector<std::string> resources_;
    std::vector<master_diagnostic> masters_;
};

/// @brief A completion token adapter (Boost.MySQL's `with_diagnostics` idea): an operation
/// whose handler takes `error_code` first completes instead with a `std::exception_ptr` to an
/// operation_error carrying the resource and the per-master diagnostics (null on success).
///
/// The client applies it for you to its default token, to `use_awaitable` and to `use_future`;
/// write it yourself around other tokens that turn an error into an exception.
template <class CompletionToken>
struct with_diagnostics_t
{
    CompletionToken token;  ///< The wrapped token, which receives the adapted completion.
};

/// Wraps `token` (see with_diagnostics_t).
template <class CompletionToken>
with_diagnostics_t<std::decay_t<CompletionToken>> with_diagnostics(CompletionToken&& token)
{
    return {std::forward<CompletionToken>(token)};
}

namespace detail {

/// What an operation was about, taken from its initiating arguments; formatted only on failure.
struct failure_subject
{
    std::vector<std::string> resources;
    /// The operation's lock options, if it takes some: an operation that returns no lock on
    /// failure (async_try_lock) gets the reason of error::invalid_option from them.
    std::optional<lock_options> options;
};

template <class... Args>
failure_subject subject_of_arguments(const Args&... args)
{
    failure_subject s;
    const auto take = [&s](const auto& a) {
        using type = std::decay_t<decltype(a)>;
        if constexpr (std::is_convertible_v<const type&, std::string_view>)
            s.resources.emplace_back(std::string_view(a));
        else if constexpr (std::is_same_v<type, lock>)
            s.resources.assign(a.resources().begin(), a.resources().end());
        else if constexpr (std::is_same_v<type, std::vector<std::string>>)
            s.resources = a;
        else if constexpr (std::is_same_v<type, lock_options>)
            s.options = a;
    };
    (take(args), ...);
    return s;
}

/// Builds the exception for a failed operation; `result` is the lock the operation returned
/// (if it returns one), `masters` the per-master outcome it returned otherwise.
std::exception_ptr make_operation_error(std::string_view operation, failure_subject subject,
                                        error_code ec, const lock* result,
                                        std::span<const master_diagnostic> masters);

inline std::exception_ptr failure_of(std::string_view op, failure_subject s, error_code ec)
{
    return make_operation_error(op, std::move(s), ec, nullptr, {});
}
inline std::exception_ptr failure_of(std::string_view op, failure_subject s, error_code ec,
                                     const lock& l)
{
    return make_operation_error(op, std::move(s), ec, &l, {});
}
inline std::exception_ptr failure_of(std::string_view op, failure_subject s, error_code ec,
                                     const std::optional<lock>& l)
{
    return make_operation_error(op, std::move(s), ec, l ? &*l : nullptr, {});
}
inline std::exception_ptr failure_of(std::string_view op, failure_subject s, error_code ec,
                                     const check_result& r)
{
    return make_operation_error(op, std::move(s), ec, nullptr, r.masters);
}
template <class T>
std::exception_ptr failure_of(std::string_view op, failure_subject s, error_code ec, const T&)
{
    return make_operation_error(op, std::move(s), ec, nullptr, {});
}

/// The name of an operation, from its named initiation object when it has one.
template <class Initiation>
constexpr std::string_view operation_name_of() noexcept
{
    if constexpr (requires { Initiation::name; })
        return Initiation::name;
    else
        return "operation";
}

template <class Handler>
struct diagnostics_handler
{
    Handler handler;
    std::string_view operation;
    failure_subject subject;

    template <class... Args>
    void operator()(error_code ec, Args&&... args)
    {
        std::exception_ptr failure;
        if (ec)
            failure = failure_of(operation, std::move(subject), ec, args...);
        std::move(handler)(std::move(failure), std::forward<Args>(args)...);
    }
};

template <class Signature>
struct diagnostics_signature
{
    using type = Signature;
};

template <class... Args>
struct diagnostics_signature<void(error_code, Args...)>
{
    using type = void(std::exception_ptr, Args...);
};

}  // namespace detail
}  // namespace redlock

namespace boost::asio {

template <class CompletionToken, class Signature>
struct async_result<redlock::with_diagnostics_t<CompletionToken>, Signature>
    : async_result<CompletionToken,
                   typename redlock::detail::diagnostics_signature<Signature>::type>
{
    using base = async_result<CompletionToken,
                              typename redlock::detail::diagnostics_signature<Signature>::type>;

    template <class Initiation>
    struct init_wrapper
    {
        Initiation initiation;

        template <class Handler, class... Args>
        void operator()(Handler&& handler, Args&&... args)
        {
            if constexpr (std::is_same_v<Signature, typename redlock::detail::diagnostics_signature<
                                                        Signature>::type>)
            {
                std::move(initiation)(std::forward<Handler>(handler), std::forward<Args>(args)...);
            }
            else
            {
                auto subject = redlock::detail::subject_of_arguments(args...);
                std::move(initiation)(
                    redlock::detail::diagnostics_handler<std::decay_t<Handler>>{
                        std::forward<Handler>(handler),
                        redlock::detail::operation_name_of<Initiation>(), std::move(subject)},
                    std::forward<Args>(args)...);
            }
        }
    };

    template <class Initiation, class RawCompletionToken, class... Args>
    static auto initiate(Initiation&& initiation, RawCompletionToken&& token, Args&&... args)
    {
        // Through async_initiate, which also serves the tokens of Boost 1.81 that have no
        // initiate() of their own (use_future).
        CompletionToken inner = std::forward<RawCompletionToken>(token).token;
        return async_initiate<CompletionToken,
                              typename redlock::detail::diagnostics_signature<Signature>::type>(
            init_wrapper<std::decay_t<Initiation>>{std::forward<Initiation>(initiation)}, inner,
            std::forward<Args>(args)...);
    }
};

template <template <class, class> class Associator, class Handler, class DefaultCandidate>
struct associator<Associator, redlock::detail::diagnostics_handler<Handler>, DefaultCandidate>
    : Associator<Handler, DefaultCandidate>
{
    static typename Associator<Handler, DefaultCandidate>::type get(
        const redlock::detail::diagnostics_handler<Handler>& h) noexcept
    {
        return Associator<Handler, DefaultCandidate>::get(h.handler);
    }

    static auto get(const redlock::detail::diagnostics_handler<Handler>& h,
                    const DefaultCandidate& c) noexcept
        -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler, c))
    {
        return Associator<Handler, DefaultCandidate>::get(h.handler, c);
    }
};

}  // namespace boost::asio

#endif

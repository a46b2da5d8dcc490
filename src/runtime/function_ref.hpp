// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_RUNTIME_FUNCTION_REF_HPP
#define REDLOCK_SRC_RUNTIME_FUNCTION_REF_HPP

#include <memory>
#include <type_traits>
#include <utility>

namespace redlock::detail {

template <class Signature>
class function_ref;

/// @brief A callable borrowed for the length of a call: a pointer to it and a pointer to a
/// function that calls it. Nothing is allocated or copied.
///
/// For interfaces that take a callback they call before returning (master_link::submit's
/// encoder): the caller's lambda stays where it is, and the interface can be virtual without
/// becoming a template. Never keep one past the call it was given to: what it refers to is
/// usually a temporary of the caller's full expression.
template <class R, class... Args>
class function_ref<R(Args...)>
{
public:
    template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> &&
             std::is_invocable_r_v<R, F&, Args...>) function_ref(F&& f)
    noexcept  // NOLINT(google-explicit-constructor): a parameter type
        : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* object, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(object))(
                  std::forward<Args>(args)...);
          })
    {}

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    R (*call_)(void*, Args...);
};

}  // namespace redlock::detail

#endif

// Result<T>: an expected-like value that holds either a T or an Error.
//
// Library code returns Result instead of throwing; services turn an Error into a
// response at their edge. Not thread-safe beyond what T itself offers.
#pragma once

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "kport/common/error.h"

namespace kport {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return m_v.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(m_v);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(m_v);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(m_v));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(m_v);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(m_v));
  }

 private:
  std::variant<T, Error> m_v;
};

// Result<void>: success carries nothing.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : m_error(std::move(error)), m_ok(false) {}  // NOLINT
  bool ok() const noexcept { return m_ok; }
  explicit operator bool() const noexcept { return m_ok; }
  const Error& error() const& {
    assert(!m_ok);
    return m_error;
  }
  Error&& error() && {
    assert(!m_ok);
    return std::move(m_error);
  }

 private:
  Error m_error;
  bool m_ok = true;
};

using Status = Result<void>;

}  // namespace kport

// KPORT_TRY(expr): evaluates a Result-returning expression and returns its Error
// from the enclosing function when it failed.
#define KPORT_TRY(expr)                                                       \
  do {                                                                        \
    auto kport_try_result_ = (expr);                                          \
    if (!kport_try_result_.ok()) return std::move(kport_try_result_).error(); \
  } while (0)

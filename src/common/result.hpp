// Result<T>: the return type for expected failures (bad input, missing file).
// Exceptions are reserved for process edges; everything a user can cause comes
// back as an Error whose message says what was wrong and where.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace drover {

struct Error {
  std::string message;
};

// E is the failure type: Error almost everywhere; the Slurm-compatible
// commands use one that also carries an exit status (cli::CliError).
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T& value() & { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const E& error() const { assert(!ok()); return std::get<1>(v_); }
  T value_or(T fallback) const { return ok() ? std::get<0>(v_) : std::move(fallback); }

 private:
  std::variant<T, E> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace drover

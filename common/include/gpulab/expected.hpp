// A small Expected<T>: a value or an error message, for functions whose
// failure is ordinary (parsing user input) rather than exceptional.
// (std::expected arrives in C++23.)
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace gpulab {

struct Error {
  std::string message;
};

template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  // The value built where it will live, from T's constructor (or aggregate)
  // arguments: no T is copied on its way in (a hot path returning a small
  // struct otherwise copies it through the stack).
  template <class... Args>
  explicit Expected(std::in_place_t, Args&&... args) : v_(std::in_place_index<0>, std::forward<Args>(args)...) {}

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    if (!ok()) throw std::runtime_error(error().message);
    return std::get<0>(v_);
  }
  const T& value() const& {
    if (!ok()) throw std::runtime_error(error().message);
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) throw std::runtime_error(error().message);
    return std::get<0>(std::move(v_));
  }
  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }
  // The value, or `fallback` when the failure needs no report.
  [[nodiscard]] T value_or(T fallback) const& { return ok() ? std::get<0>(v_) : std::move(fallback); }
  [[nodiscard]] T value_or(T fallback) && { return ok() ? std::get<0>(std::move(v_)) : std::move(fallback); }

 private:
  std::variant<T, Error> v_;
};

// Success with nothing to return, or an Error (writing a file, for example).
template <>
class Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  // Throws std::runtime_error with the message when this is an error.
  void value() const {
    if (!ok()) throw std::runtime_error(error_->message);
  }
  [[nodiscard]] const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace gpulab

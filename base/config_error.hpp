#pragma once
// The error of a bad input (a file, a flag, a request body): its message
// names where the input is wrong, and a command prints it as it is.
#include <stdexcept>
#include <string>
#include <utility>

namespace april::base {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What base::JsonValue::fail throws: a ConfigError that also carries the
// JSON Pointer path of the value refused, so that a server can name the
// field (OpenAI's error `param`) apart from the message.
class JsonPathError : public ConfigError {
 public:
  JsonPathError(const std::string& message, std::string path) : ConfigError(message), path_(std::move(path)) {}
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace april::base

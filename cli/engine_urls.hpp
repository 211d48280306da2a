#pragma once
// --engines URL,...: the servers a live command drives, as given.
#include <string>
#include <vector>

namespace april::cli {

// "a,b" -> {"a", "b"}; an empty item is refused (std::invalid_argument).
std::vector<std::string> split_urls(const std::string& text);

}  // namespace april::cli

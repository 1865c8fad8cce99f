#include "target_compat.h"

#include <cctype>

namespace kport::harness {

bool target_runs_on(const std::string& target, int major, int minor) {
  if (target.rfind("sm_", 0) != 0) return false;
  std::string digits = target.substr(3);
  char suffix = 0;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    suffix = digits.back();
    digits.pop_back();
  }
  if (digits.size() < 2) return false;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  const int t_major = std::stoi(digits.substr(0, digits.size() - 1));
  const int t_minor = digits.back() - '0';
  if (suffix == 'a') return major == t_major && minor == t_minor;
  return major == t_major && minor >= t_minor;
}

}  // namespace kport::harness

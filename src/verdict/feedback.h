// The feedback text shown to a model, rendered from a verdict JSON document alone.
#pragma once

#include <string>

#include "common/json_check.h"

namespace ptxbench {

/// Plain text, at most about `max_chars` characters (long logs are cut, keeping their start).
std::string render_feedback(const ordered_json& verdict, std::size_t max_chars = 6000);

}  // namespace ptxbench

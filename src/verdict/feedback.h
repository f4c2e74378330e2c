// The feedback text shown to a model, rendered from a verdict alone.
#pragma once

#include <string>

#include "verdict/verdict.h"

namespace ptxbench {

/// Plain text, at most about `max_chars` characters (long logs are cut, keeping their start).
std::string render_feedback(const Verdict& verdict, std::size_t max_chars = 6000);

}  // namespace ptxbench

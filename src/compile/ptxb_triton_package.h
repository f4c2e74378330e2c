// ptxbench's trusted Python for Triton candidates, the package ptxb_triton (src/python/ptxb_triton/,
// docs/triton.md): embedded in this binary at build time (cmake/EmbedText.cmake), so that the
// checker, the build pass and the launch probe always match the C++ that runs them, wherever the
// binary was carried. The scripts run from a copy of the package that this writes to the cache.
#pragma once

#include <string_view>

#include "common/fs.h"

namespace ptxbench {

/// The text of one of the package's modules by file name ("triton_check.py", "launch_probe.py",
/// ...); Error for a name the package does not have.
std::string_view ptxb_triton_module(std::string_view file);

/// The package written to cache_root()/python/ptxb_triton-<digest>/ptxb_triton/ (digest: SHA-256
/// of every module's name and text), once per process; returns that folder. Every file is rewritten
/// when its content differs, so a damaged copy heals; the folder is readable by everyone (the
/// sandboxed checker and build pass run as an unprivileged user).
const fs::path& ptxb_triton_package_dir();

}  // namespace ptxbench

#include "compile/ptxb_triton_package.h"

#include <mutex>
#include <string>

#include "common/error.h"
#include "common/sha256.h"
#include "embedded/ptxb_triton_py.h"  // generated from src/python/ptxb_triton/ (src/CMakeLists.txt)

namespace ptxbench {
namespace {

constexpr const char* kLib = "ptxb_triton";

std::string digest() {
  Sha256 h;
  for (const auto& f : embedded::ptxb_triton::files) h.field(f.name).field(f.text);
  return h.hex_digest();
}

fs::path write_package() {
  fs::path dir = cache_root() / "python" / ("ptxb_triton-" + digest().substr(0, 16)) / "ptxb_triton";
  constexpr fs::perms kDir = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec;
  constexpr fs::perms kFile = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  fs::create_directories(dir);
  fs::permissions(dir, kDir);
  for (const auto& f : embedded::ptxb_triton::files) {
    fs::path file = dir / f.name;
    std::error_code ec;
    bool same = fs::is_regular_file(file, ec) && fs::file_size(file, ec) == f.text.size() && read_file(file) == f.text;
    if (!same) write_file_atomic(file, std::string(f.text));
    fs::permissions(file, kFile);
  }
  return dir;
}

}  // namespace

std::string_view ptxb_triton_module(std::string_view file) {
  for (const auto& f : embedded::ptxb_triton::files)
    if (f.name == file) return f.text;
  throw Error(kLib, "the package ptxb_triton has no module " + std::string(file));
}

const fs::path& ptxb_triton_package_dir() {
  static std::once_flag once;
  static fs::path dir;
  std::call_once(once, [] { dir = write_package(); });
  return dir;
}

}  // namespace ptxbench

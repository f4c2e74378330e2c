#include "common/fs.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "common/enum_names.h"
#include "common/error.h"

#ifndef PTXBENCH_SOURCE_DIR
#define PTXBENCH_SOURCE_DIR "."
#endif

namespace ptxbench {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("files", "cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomic(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(std::random_device{}());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("files", "cannot write " + tmp.string());
    out << content;
    if (!out.flush()) throw Error("files", "write failed: " + tmp.string());
  }
  fs::rename(tmp, path);
}

TempDir::TempDir(const std::string& prefix, const fs::path& parent) {
  fs::path base = parent.empty() ? fs::temp_directory_path() : parent;
  fs::create_directories(base);
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw Error("files", "mkdtemp failed under " + base.string());
  m_path = pattern;
}

TempDir::~TempDir() {
  if (m_keep) return;
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : self.parent_path();
}

std::string to_string(DataRootSource s) {
  constexpr EnumName<DataRootSource> kSources[] = {{DataRootSource::env, "PTXBENCH_HOME"},
                                                   {DataRootSource::checkout, "checkout above the working directory"},
                                                   {DataRootSource::build_tree, "source tree of the build"}};
  return enum_name(kSources, s);
}

fs::path find_checkout_root(const fs::path& start) {
  if (start.empty()) return {};
  std::error_code ec;
  fs::path dir = fs::absolute(start, ec);
  if (ec) return {};
  for (;;) {
    if (fs::is_directory(dir / "definitions", ec) && fs::is_directory(dir / "knowledge", ec)) return dir;
    if (!dir.has_parent_path() || dir.parent_path() == dir) return {};
    dir = dir.parent_path();
  }
}

namespace {

// Two spellings of one folder (a symlink, "a/../b") are the same root.
bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code ea, eb;
  fs::path ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  return (ea || eb) ? a.lexically_normal() == b.lexically_normal() : ca == cb;
}

}  // namespace

DataRoot resolve_data_root(const std::string& env, const fs::path& cwd, const fs::path& build_tree) {
  DataRoot r;
  fs::path checkout = find_checkout_root(cwd);
  // An explicit $PTXBENCH_HOME wins: scripts and services set it on purpose. Standing in another
  // checkout while it points elsewhere is worth a warning (a stale export is the usual cause). A
  // home that differs from the build tree alone is not: that is what the variable is for.
  if (!env.empty()) {
    r.path = env;
    r.source = DataRootSource::env;
    if (!checkout.empty() && !same_folder(checkout, r.path))
      r.warning = "data root is $PTXBENCH_HOME=" + r.path.string() + "; the checkout " + checkout.string() +
                  " above the working directory is not used";
    return r;
  }
  // A checkout around the working directory before the build tree: a binary built in one clone and
  // run in a second one reads the second clone's definitions and knowledge, as the user sees them.
  if (!checkout.empty()) {
    r.path = checkout;
    r.source = DataRootSource::checkout;
    if (!same_folder(checkout, build_tree))
      r.warning = "data root is the checkout " + checkout.string() + " above the working directory, not " +
                  build_tree.string() + " this binary was built from (set PTXBENCH_HOME to choose)";
    return r;
  }
  r.path = build_tree;
  r.source = DataRootSource::build_tree;
  return r;
}

fs::path build_source_dir() { return PTXBENCH_SOURCE_DIR; }

const DataRoot& data_root_choice() {
  static const DataRoot choice = [] {
    const char* home = std::getenv("PTXBENCH_HOME");
    std::error_code ec;
    fs::path cwd = fs::current_path(ec);
    DataRoot r = resolve_data_root(home ? home : "", ec ? fs::path() : cwd, build_source_dir());
    if (!r.warning.empty()) std::fprintf(stderr, "warning: %s\n", r.warning.c_str());
    return r;
  }();
  return choice;
}

fs::path data_root() { return data_root_choice().path; }

fs::path cache_root() {
  if (const char* dir = std::getenv("PTXBENCH_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "ptxbench";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache/ptxbench";
  return fs::temp_directory_path() / "ptxbench-cache";
}

}  // namespace ptxbench

#include "cli/output_path.h"

#include <unistd.h>

#include <cstdio>

#include "common/error.h"

namespace ptxbench::cli {
namespace {

constexpr const char* kLib = "output";

bool writable_folder(const fs::path& dir) { return ::access(dir.c_str(), W_OK | X_OK) == 0; }

}  // namespace

bool is_stdout(const std::string& path) { return path == "-"; }

void check_output_file(const std::string& option, const std::string& path) {
  if (is_stdout(path)) return;
  if (path.empty()) throw InputError(kLib, option + ": empty path (give a file, or - for stdout)");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(kLib, option + " " + path + ": is a folder, not a file");
  fs::path folder = fs::absolute(path, ec).parent_path();
  if (!fs::is_directory(folder, ec))
    throw InputError(kLib, option + " " + path + ": folder " + folder.string() + " does not exist");
  if (!writable_folder(folder)) throw InputError(kLib, option + " " + path + ": folder " + folder.string() + " is not writable");
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw InputError(kLib, option + " " + path + ": the file is not writable");
}

OutputFile::OutputFile(std::string option, std::string path) : m_option(std::move(option)), m_path(std::move(path)) {
  check_output_file(m_option, m_path);
}

void OutputFile::write(const std::string& content) const {
  if (!to_stdout()) {
    write_file_atomic(m_path, content);
    return;
  }
  std::fwrite(content.data(), 1, content.size(), stdout);
  std::fflush(stdout);
}

fs::path prepare_output_dir(const std::string& option, const std::string& dir) {
  if (is_stdout(dir)) throw InputError(kLib, option + ": a folder is needed here, not - (stdout)");
  if (dir.empty()) throw InputError(kLib, option + ": empty folder name");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw InputError(kLib, option + " " + dir + ": is a file, not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw InputError(kLib, option + " " + dir + ": cannot create the folder (" + ec.message() + ")");
  if (!writable_folder(dir)) throw InputError(kLib, option + " " + dir + ": the folder is not writable");
  return dir;
}

}  // namespace ptxbench::cli

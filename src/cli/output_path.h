// Output options of the commands: "-" means stdout; a file or folder is checked before the work
// starts (its folder exists and is writable), so a long evaluation never ends in "cannot write".
// Any command's --out/--json FILE can use these.
#pragma once

#include <string>

#include "common/fs.h"

namespace ptxbench::cli {

/// True for "-", the conventional name of stdout.
[[nodiscard]] bool is_stdout(const std::string& path);

/// Throws InputError naming `option` unless `path` is "-" or a file that can be written: its folder
/// exists and is writable, and the path is not itself a folder. Writes nothing.
void check_output_file(const std::string& option, const std::string& path);

/// An output file given by an option (`--out FILE`), checked on construction (check_output_file).
class OutputFile {
 public:
  OutputFile(std::string option, std::string path);
  [[nodiscard]] bool to_stdout() const noexcept { return is_stdout(m_path); }
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }
  /// The whole content: to stdout (flushed), or to the file atomically (readers never see half).
  void write(const std::string& content) const;

 private:
  std::string m_option;
  std::string m_path;
};

/// An output folder (`--out DIR`): created now, with its parents, when missing. Throws InputError
/// naming `option` when it is "-" (a folder is needed), cannot be created, or is not writable.
fs::path prepare_output_dir(const std::string& option, const std::string& dir);

}  // namespace ptxbench::cli

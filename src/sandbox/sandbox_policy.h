// What a sandboxed process may see and do (docs/sandbox.md): namespaces, the filesystem view (an
// allowlist of read-only and writable paths under a fresh root), the identity it runs as, and
// its host-memory limit. Prepared into a ChildSetup by sandbox.h; the in-process half (seccomp)
// is seccomp_filter.h, installed by the runner itself before it loads a candidate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

/// off: no sandbox; best_effort: what the host permits (recorded); required: all of it or an error.
enum class Enforcement { off, best_effort, required };
std::string to_string(Enforcement e);
/// Throws InputError naming the allowed values.
Enforcement parse_enforcement(const std::string& s);

struct SandboxPolicy {
  Enforcement enforcement = Enforcement::best_effort;
  bool pid_namespace = true;      ///< sees only its own processes; everything dies with its first process
  bool network_namespace = true;  ///< no network at all (a loopback that is down)
  bool ipc_namespace = true;      ///< no System V / POSIX IPC objects of the host
  /// Paths visible read-only (files or folders; missing ones are skipped). Everything else of the
  /// host filesystem is absent, except the standard folders below.
  std::vector<std::string> read_only;
  /// Paths visible read-write at the same place (the evaluation's scratch folder).
  std::vector<std::string> writable;
  bool gpu_devices = false;        ///< /dev/nvidia* device nodes (and /dev/nvidia-caps)
  bool proc = true;                ///< a /proc of its own PID namespace
  bool sys = false;                ///< /sys read-only (the CUDA driver reads PCI topology there)
  std::size_t tmp_bytes = std::size_t{2} << 30;  ///< a private tmpfs on /tmp and /dev/shm
  /// Run as this unprivileged user and group (root only); unset: 65534 (nobody).
  std::optional<uint32_t> uid, gid;
  /// Keep root's identity (still in the namespaces and view, without capabilities other than
  /// those the tool needs): only for a stage that cannot run unprivileged, such as ncu where the
  /// driver restricts GPU performance counters to administrators.
  bool keep_root = false;
  /// Host memory of the whole process tree (a memory cgroup); unset: no limit.
  std::optional<uint64_t> memory_bytes;
  /// Environment variables passed through from ours (by name); every other one is dropped.
  std::vector<std::string> pass_env = {"PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"};
};

/// What was actually enforced for one process (recorded in verdicts: a host without the
/// permission gets a weaker sandbox, and a report must be able to say so).
struct SandboxReport {
  bool namespaces = false;
  bool filesystem_view = false;
  bool unprivileged = false;
  uint32_t uid = 0;
  bool memory_limit = false;
  std::string cgroup;  ///< "v2", "v1", or empty
  std::vector<std::string> notes;  ///< what best effort could not do, and why
};
ordered_json to_json(const SandboxReport& r);

}  // namespace ptxbench

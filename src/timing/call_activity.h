// Device activity attributed to calls: each record of a process's CUPTI activity (kernel, copy,
// memset) belongs to the call whose host-time window contains its start; the call's span is its
// first start to its last end; what belongs to no call is stray. Used by the runner (candidate)
// and the worker (baseline, probe) alike. Plain data, CPU-testable.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

struct DeviceRecord {
  enum class Kind { kernel, memcpy, memset };
  Kind kind = Kind::kernel;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::string name;  ///< mangled kernel name (kernels only)
  uint32_t stream = 0;
  std::array<uint32_t, 3> grid{}, block{};  ///< kernels only
  uint32_t dynamic_smem = 0;                ///< bytes, kernels only
};

/// How a kernel was launched: what must be the same in a profiled call and in the timed calls.
struct KernelLaunch {
  std::string name;
  std::array<uint32_t, 3> grid{}, block{};
  uint32_t dynamic_smem = 0;
  bool operator==(const KernelLaunch& o) const;  // not `= default`: .cu files include this as C++17
  bool operator<(const KernelLaunch& o) const;
};
ordered_json to_json(const KernelLaunch& k);
KernelLaunch kernel_launch_from_json(const ordered_json& j);
/// "name<<<(x,y,z),(x,y,z),smem>>>"
std::string describe(const KernelLaunch& k);

/// A call's host-time window on the CUPTI clock: from before the call to after a device-wide sync.
struct CallWindow {
  uint64_t index = 0;
  uint64_t begin_ns = 0, end_ns = 0;
};

struct CallActivity {
  uint64_t index = 0;
  double span_us = 0.0;              ///< first start to last end; 0 when nothing ran
  bool empty = true;                 ///< no device work at all
  std::vector<KernelLaunch> kernels; ///< in start order
};
ordered_json to_json(const CallActivity& a);
CallActivity call_activity_from_json(const ordered_json& j);

struct Attribution {
  std::vector<CallActivity> calls;   ///< one per window, in window order
  std::vector<std::string> stray;    ///< kernels/copies outside every window (never our memsets)
};

/// Attributes `records` to `windows` (sorted by time, disjoint). A record whose start lies in a
/// window is that call's; a kernel or copy that only overlaps a window's start is charged to it
/// too (clock skew), a memset there is the preparation's.
Attribution attribute_records(const std::vector<DeviceRecord>& records, const std::vector<CallWindow>& windows);

}  // namespace ptxbench

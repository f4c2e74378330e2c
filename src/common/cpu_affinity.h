// The worker's CPUs: the ones local to its GPU (the PCI device's NUMA node, from sysfs). The
// worker, its runners and the trusted probe runner inherit them, so the host bound compares calls
// made from the same CPUs, not one from a near socket and one from a far one (docs/verdict.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ptxbench {

/// "0-7,16,18-19" → {0..7, 16, 18, 19}. Malformed text is nullopt.
std::optional<std::vector<int>> parse_cpu_list(const std::string& text);

/// Restricts the calling thread (and the threads and processes it starts later) to the CPUs
/// local to the PCI device `pci_bus_id` ("0000:19:00.0") that it may already use. Returns what it
/// did, for the verdict's environment; nothing changes (and it says why) when sysfs does not
/// tell, or no local CPU is allowed. `sysfs` is for tests.
std::string pin_to_local_cpus(const std::string& pci_bus_id, const std::string& sysfs = "/sys/bus/pci/devices");

}  // namespace ptxbench

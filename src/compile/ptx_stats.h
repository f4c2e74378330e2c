// Static PTX instruction-family counts (wgmma, TMA, mbarrier, tcgen05, ...) of a candidate.
#pragma once

#include <map>
#include <string>

namespace ptxbench {

struct PtxStats {
  int instructions = 0;                 ///< every PTX instruction statement
  std::map<std::string, int> families;  ///< family -> static occurrences (only non-zero ones)
  [[nodiscard]] int count(const std::string& family) const;
};

/// Families: wgmma.{mma_async,fence,commit_group,wait_group}, cp.async.bulk.tensor (with
/// :load/:store), cp.reduce.async.bulk.tensor, cp.async.bulk.prefetch.tensor, cp.async.bulk,
/// cp.async, mbarrier, fence.proxy.async, fence.mbarrier_init, setmaxnreg, stmatrix, ldmatrix,
/// mma (mma.sync/mma.sp), tcgen05.{mma,ld,st,cp,alloc,dealloc,commit,other}, barrier.cluster,
/// elect.sync, multimem.
PtxStats analyze_ptx(const std::string& ptx);

}  // namespace ptxbench

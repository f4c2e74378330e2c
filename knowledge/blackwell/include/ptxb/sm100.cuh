// ptxb Blackwell (sm_100a, B200) PTX templates: include this for all of them. Compile with
// -gencode arch=compute_100a,code=sm_100a (tcgen05 needs the "a" target). The Hopper helpers
// (ptxb/sm90*.cuh: mbarrier, TMA, cluster, fences) are valid on sm_100a and combine with these.
#pragma once
#include "sm100_desc.cuh"
#include "sm100_tcgen05.cuh"
#include "sm100_tmem.cuh"

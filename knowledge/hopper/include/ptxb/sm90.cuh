// ptxb Hopper (sm_90a) PTX templates: include this for all of them. Compile with
// -gencode arch=compute_90a,code=sm_90a (wgmma and setmaxnreg need the "a" target).
#pragma once
#include "sm90_cluster.cuh"
#include "sm90_fence.cuh"
#include "sm90_matrix.cuh"
#include "sm90_mbarrier.cuh"
#include "sm90_setmaxnreg.cuh"
#include "sm90_sync.cuh"
#include "sm90_tma.cuh"
#include "sm90_wgmma.cuh"

#include "gpu/activity_recorder.h"

#include <cupti.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "common/error.h"
#include "gpu/cupti_call.h"

namespace ptxbench {
namespace {

constexpr std::size_t kBufferBytes = 8 << 20;

struct Shared {
  std::mutex mutex;
  std::vector<DeviceRecord> records;
  std::atomic<uint64_t> dropped{0};
  std::atomic<bool> active{false};
};
Shared& shared() {
  static Shared s;
  return s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  std::vector<DeviceRecord> got;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    DeviceRecord r;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
        r.kind = DeviceRecord::Kind::kernel;
        r.start_ns = k->start;
        r.end_ns = k->end;
        r.name = k->name ? k->name : "";
        r.stream = k->streamId;
        r.grid = {static_cast<uint32_t>(k->gridX), static_cast<uint32_t>(k->gridY), static_cast<uint32_t>(k->gridZ)};
        r.block = {static_cast<uint32_t>(k->blockX), static_cast<uint32_t>(k->blockY), static_cast<uint32_t>(k->blockZ)};
        r.dynamic_smem = k->dynamicSharedMemory;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        r.kind = DeviceRecord::Kind::memcpy;
        r.start_ns = m->start;
        r.end_ns = m->end;
        r.stream = m->streamId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
        r.kind = DeviceRecord::Kind::memset;
        r.start_ns = m->start;
        r.end_ns = m->end;
        r.stream = m->streamId;
        break;
      }
      default:
        continue;
    }
    got.push_back(std::move(r));
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
    shared().dropped += dropped;
  std::free(buffer);
  std::lock_guard<std::mutex> lock(shared().mutex);
  for (auto& r : got) shared().records.push_back(std::move(r));
}

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMSET};

}  // namespace

ActivityRecorder::ActivityRecorder() {
  PTXB_ENSURE(!shared().active.exchange(true), "CUPTI", "only one ActivityRecorder may exist at a time");
  try {
    PTXB_CUPTI_CALL(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    for (auto kind : kKinds) PTXB_CUPTI_CALL(cuptiActivityEnable(kind));
  } catch (...) {
    shared().active = false;
    throw;
  }
}

ActivityRecorder::~ActivityRecorder() {
  for (auto kind : kKinds) cuptiActivityDisable(kind);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(shared().mutex);
  shared().records.clear();
  shared().active = false;
}

uint64_t ActivityRecorder::now_ns() {
  uint64_t t = 0;
  PTXB_CUPTI_CALL(cuptiGetTimestamp(&t));
  return t;
}

std::vector<DeviceRecord> ActivityRecorder::drain() {
  PTXB_CUPTI_CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard<std::mutex> lock(shared().mutex);
  std::vector<DeviceRecord> out;
  out.swap(shared().records);
  return out;
}

uint64_t ActivityRecorder::dropped() const { return shared().dropped.load(); }

}  // namespace ptxbench

#include "verdict/correctness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "common/json_fields.h"
#include "common/parallel.h"

namespace ptxbench {
namespace {

constexpr std::size_t kKeptMismatches = 8;

inline float bf16_to_float(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline float f16_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do { mant <<= 1; ++e; } while (!(mant & 0x400));
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 112) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct Partial {
  int64_t mismatches = 0, non_finite = 0, beyond = 0;
  double max_abs = 0.0, max_rel = 0.0;
  std::vector<std::pair<int64_t, std::pair<double, double>>> first;
};

std::vector<int64_t> unravel(int64_t linear, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

}  // namespace

double element_to_double(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::bf16: return bf16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::f16: return f16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::f32: return static_cast<const float*>(data)[i];
    case DType::i32: return static_cast<const int32_t*>(data)[i];
    case DType::i64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    default: break;
  }
  throw Error("correctness", "comparison of dtype " + dtype_name(dtype) + " is not supported");
}

TensorComparison compare_tensor(const void* got, const float* expected, const TensorSpec& spec,
                                const Tolerance& tol, unsigned threads) {
  TensorComparison c;
  c.name = spec.name;
  c.elements = spec.numel();
  (void)element_to_double(got, spec.dtype, 0);  // rejects unsupported dtypes up front
  const unsigned slices = slice_count(c.elements, threads);
  std::vector<Partial> parts(slices);
  for_each_slice(c.elements, slices, [&](unsigned t, int64_t begin, int64_t end) {
    Partial& p = parts[t];
    for (int64_t i = begin; i < end; ++i) {
      double x = element_to_double(got, spec.dtype, i);
      double y = expected[i];
      bool bad;
      double abs_err = std::fabs(x - y);
      double rel_err = abs_err / (std::fabs(y) + 1e-8);
      if (!std::isfinite(x)) {
        ++p.non_finite;
        bad = true;
      } else if (!std::isfinite(y)) {
        bad = x != y;
      } else {
        bad = abs_err > tol.atol && rel_err > tol.rtol;
        p.max_abs = std::max(p.max_abs, abs_err);
        p.max_rel = std::max(p.max_rel, rel_err);
      }
      if (bad) {
        ++p.mismatches;
        bool bounded = tol.outlier_atol > 0.0 || tol.outlier_rtol > 0.0;
        if (bounded && (!std::isfinite(x) || (abs_err > tol.outlier_atol && rel_err > tol.outlier_rtol))) ++p.beyond;
        if (p.first.size() < kKeptMismatches) p.first.push_back({i, {x, y}});
      }
    }
  });
  for (const auto& p : parts) {  // partitions are in index order, so this keeps the lowest indices
    c.mismatches += p.mismatches;
    c.non_finite += p.non_finite;
    c.beyond_outlier_bound += p.beyond;
    c.max_abs_error = std::max(c.max_abs_error, p.max_abs);
    c.max_rel_error = std::max(c.max_rel_error, p.max_rel);
    for (const auto& [i, v] : p.first)
      if (c.first_mismatches.size() < kKeptMismatches)
        c.first_mismatches.push_back({unravel(i, spec.shape), v.first, v.second});
  }
  double matched = c.elements ? 1.0 - static_cast<double>(c.mismatches) / static_cast<double>(c.elements) : 1.0;
  c.passed = c.non_finite == 0 && matched >= tol.required_ratio && c.elements > 0;
  if (tol.required_ratio >= 1.0) c.passed = c.passed && c.mismatches == 0;
  c.passed = c.passed && c.beyond_outlier_bound == 0;
  return c;
}

Tolerance Tolerance::for_definition(const Definition& def) const {
  Tolerance t = *this;
  if (!def.tolerance) return t;
  const ToleranceOverride& o = *def.tolerance;
  t.atol = o.atol.value_or(t.atol);
  t.rtol = o.rtol.value_or(t.rtol);
  t.required_ratio = o.required_matched_ratio.value_or(t.required_ratio);
  t.outlier_atol = o.outlier_atol.value_or(t.outlier_atol);
  t.outlier_rtol = o.outlier_rtol.value_or(t.outlier_rtol);
  return t;
}

namespace {
ordered_json finite_or_text(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

double number_or_text(const ordered_json& j) {
  if (j.is_number()) return j.get<double>();
  std::string text = j.get<std::string>();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  throw JsonFieldError("", "expected a number, \"nan\", \"inf\" or \"-inf\", got \"" + text + "\"");
}
}  // namespace

void to_json(ordered_json& j, const Mismatch& m) {
  j = {{"index", m.index}, {"got", finite_or_text(m.got)}, {"expected", finite_or_text(m.expected)}};
}

void from_json(const ordered_json& j, Mismatch& m) {
  require_json_object(j);
  read_field(j, "index", m.index);
  for (auto [key, out] : {std::pair{"got", &m.got}, std::pair{"expected", &m.expected}}) {
    if (!j.contains(key)) continue;
    try {
      *out = number_or_text(j[key]);
    } catch (...) {
      detail::rethrow_in_field(key);
    }
  }
}

void json_fields(JsonIo& io, TensorComparison& c) {
  io("name", c.name);
  io("passed", c.passed);
  io("elements", c.elements);
  io("mismatches", c.mismatches);
  io("non_finite", c.non_finite);
  io("max_abs_error", c.max_abs_error);
  io("max_rel_error", c.max_rel_error);
  io("first_mismatches", c.first_mismatches);
  io.when(c.beyond_outlier_bound != 0, "beyond_outlier_bound", c.beyond_outlier_bound);
}

void json_fields(JsonIo& io, Tolerance& t) {
  io("atol", t.atol);
  io("rtol", t.rtol);
  io("required_matched_ratio", t.required_ratio);
  bool bounded = t.outlier_atol > 0.0 || t.outlier_rtol > 0.0;
  io.when(bounded, "outlier_atol", t.outlier_atol);
  io.when(bounded, "outlier_rtol", t.outlier_rtol);
}

}  // namespace ptxbench

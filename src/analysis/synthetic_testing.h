// Test helper: the decomposition of a synthetic run, failing the test when it is an error.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "analysis/decomposition.h"
#include "analysis/synthetic_run.h"

namespace stepscope::analysis {

inline Decomposition DecomposeSpec(const SyntheticRunSpec& spec) {
  Result<Decomposition> d = Decompose(SynthesizeRun(spec));
  EXPECT_TRUE(d.ok()) << d.status().message();
  return std::move(d).value();
}

}  // namespace stepscope::analysis

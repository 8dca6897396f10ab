#include "decide/synthetic_run_set.h"

namespace stepscope::decide {

RunSet SynthesizeRunSet(const analysis::SyntheticRunSpec& spec) {
  const analysis::SyntheticAblationSpecs ablations = analysis::AblationSpecsOf(spec);
  RunSet set;
  set.baseline = analysis::SynthesizeRun(spec);
  set.no_reduce = analysis::SynthesizeRun(ablations.no_reduce);
  set.synthetic_input = analysis::SynthesizeRun(ablations.synthetic_input);
  set.double_batch = analysis::SynthesizeRun(ablations.double_batch);
  return set;
}

}  // namespace stepscope::decide

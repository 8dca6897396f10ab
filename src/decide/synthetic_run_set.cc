#include "decide/synthetic_run_set.h"

namespace stepscope::analysis {

RunSet SynthesizeRunSet(const SyntheticRunSpec& spec) {
  const SyntheticAblationSpecs ablations = AblationSpecsOf(spec);
  RunSet set;
  set.baseline = SynthesizeRun(spec);
  set.no_reduce = SynthesizeRun(ablations.no_reduce);
  set.synthetic_input = SynthesizeRun(ablations.synthetic_input);
  set.double_batch = SynthesizeRun(ablations.double_batch);
  return set;
}

}  // namespace stepscope::analysis

// Turns an MPI return code into a Status naming the call and the rank.
#pragma once

#include <string>

#include "core/status.h"

namespace stepscope::comm {

// Ok for MPI_SUCCESS; otherwise "rank R: WHAT failed: <MPI error string>".
Status MpiStatus(int code, const std::string& what, int rank);

}  // namespace stepscope::comm

#include "comm/mpi_status.h"

#include <mpi.h>

namespace stepscope::comm {

Status MpiStatus(int code, const std::string& what, int rank) {
  if (code == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status::Error("rank " + std::to_string(rank) + ": " + what +
                       " failed: " + std::string(text, length));
}

}  // namespace stepscope::comm

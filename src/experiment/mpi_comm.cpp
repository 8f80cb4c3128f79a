#include "normlab/experiment/mpi_comm.hpp"

#ifdef NORMLAB_HAVE_MPI
#include <mpi.h>
#endif

#include <cstdlib>
#include <vector>

#include "normlab/base/errors.hpp"

namespace normlab {

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

#ifndef NORMLAB_HAVE_MPI

// A build without MPI (-DNORMLAB_MPI=OFF, CMakeLists.txt): started by mpirun, it stops at once
// rather than have every rank train every run into the same store.
MpiComm::MpiComm() {
  throw InputError(
      "this normlab was built without MPI (-DNORMLAB_MPI=OFF): it cannot run under mpirun; "
      "rebuild with -DNORMLAB_MPI=ON or run without mpirun");
}
MpiComm::~MpiComm() = default;
std::optional<MpiComm::Message> MpiComm::poll() {
  return std::nullopt;
}
MpiComm::Message MpiComm::receive(int) {
  return {};
}
void MpiComm::send(int, Tag, const std::string&) {}
void MpiComm::abort(int code) {
  std::_Exit(code);
}

#else

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw InputError(std::string("MPI: ") + what + " failed");
}

MpiComm::Message receive_matched(MPI_Status status) {
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::vector<char> bytes(static_cast<size_t>(count));
  check(MPI_Recv(bytes.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
  return {status.MPI_SOURCE, status.MPI_TAG, std::string(bytes.begin(), bytes.end())};
}

}  // namespace

MpiComm::MpiComm() {
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiComm::~MpiComm() {
  MPI_Finalize();
}

std::optional<MpiComm::Message> MpiComm::poll() {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (flag == 0) return std::nullopt;
  return receive_matched(status);
}

MpiComm::Message MpiComm::receive(int source) {
  MPI_Status status;
  check(MPI_Probe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &status), "MPI_Probe");
  return receive_matched(status);
}

void MpiComm::send(int destination, Tag tag, const std::string& text) {
  check(MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, destination, tag,
                 MPI_COMM_WORLD),
        "MPI_Send");
}

void MpiComm::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

#endif  // NORMLAB_HAVE_MPI

}  // namespace normlab

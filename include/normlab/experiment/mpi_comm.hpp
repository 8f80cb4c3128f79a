// The few MPI calls a distributed sweep needs (docs/cluster.md), behind a small interface so
// that only mpi_comm.cpp includes <mpi.h>. Messages are text (JSON), sent to and from rank 0.
#pragma once

#include <optional>
#include <string>

namespace normlab {

// Whether this process was started by mpirun (Open MPI, or a PMI/PMIx launcher such as srun).
bool launched_by_mpirun();

class MpiComm {
 public:
  // What rank 0 and the other ranks say to each other (docs/cluster.md, "Protocol").
  enum Tag {
    kReady = 1,  // worker → 0: give me a run
    kJob = 2,    // 0 → worker: train this run (its index in the study's run list)
    kStop = 3,   // 0 → worker: no runs left, finish
    kDone = 4,   // worker → 0: a run ended; its rows (and: give me another)
  };
  struct Message {
    int source = 0;
    int tag = 0;
    std::string text;
  };

  MpiComm();   // MPI_Init
  ~MpiComm();  // MPI_Finalize
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // A message from any rank if one has arrived; never blocks.
  std::optional<Message> poll();
  // The next message from rank `source` (blocks).
  Message receive(int source);
  void send(int destination, Tag tag, const std::string& text);
  // Ends every rank of the job (after a fatal error on this one).
  [[noreturn]] void abort(int code);

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace normlab

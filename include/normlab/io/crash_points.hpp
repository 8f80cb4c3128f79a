// Crash points: a test hook for the kill tests (tests/experiment/kill_test.cpp). When the
// environment variable NORMLAB_TEST_CRASH_AT=N is set, the N-th crash point this process
// passes kills it with SIGKILL, as `kill -9` would at that moment: between spawning a run and
// recording it, inside a store transaction, while runs train. With NORMLAB_TEST_CRASH_RANK=R
// only MPI rank R counts (the rank from Open MPI's OMPI_COMM_WORLD_RANK). Unset, a crash point
// costs one comparison.
#pragma once

namespace normlab {

void crash_point();

}  // namespace normlab

// SIGINT (Ctrl-C) and SIGTERM (kill, a cluster's time limit) as a request to stop cleanly: after
// catch_interrupts() the signals set a flag that long work polls at safe points (a training
// step's end, a sweep's loop), saves, and ends with an Interrupted error (base/errors.hpp).
#pragma once

namespace normlab {

// Installs the handlers (idempotent). Until then, the signals end the process as usual.
void catch_interrupts();

// Restores the default actions: a signal ends the process at once again.
void release_interrupts();

// The signal caught since catch_interrupts(), 0 if none.
int interrupt_signal();

// "SIGINT", "SIGTERM" (or "a signal").
const char* interrupt_name(int signal);

}  // namespace normlab

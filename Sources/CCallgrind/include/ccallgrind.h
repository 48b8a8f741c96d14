// Valgrind's RUNNING_ON_VALGRIND as a plain function, for flowmeter-bench's `instructions` subcommand.
//
// The request is a macro in <valgrind/valgrind.h> that Swift cannot call; this wrapper can. Outside Valgrind it is
// a few instructions that return 0, and without the Valgrind headers it is compiled as a plain `return 0`.
//
// Callgrind's own client requests (CALLGRIND_ZERO_STATS, CALLGRIND_DUMP_STATS_AT) are not wrapped: they act on the
// calling thread only, so the benchmark zeroes and dumps every thread through vgdb instead.
#ifndef CCALLGRIND_H
#define CCALLGRIND_H

/// Whether the process runs under Valgrind (any tool): 0 when not, otherwise the nesting depth.
int ccallgrind_running_on_valgrind(void);

/// Whether the Valgrind headers were there at build time (1) or `ccallgrind_running_on_valgrind` always says 0.
int ccallgrind_is_available(void);

#endif

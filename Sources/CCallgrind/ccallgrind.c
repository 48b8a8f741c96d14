#include "ccallgrind.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CCALLGRIND_AVAILABLE 1
#endif
#endif

#ifdef CCALLGRIND_AVAILABLE

int ccallgrind_running_on_valgrind(void) { return (int)RUNNING_ON_VALGRIND; }

int ccallgrind_is_available(void) { return 1; }

#else

int ccallgrind_running_on_valgrind(void) { return 0; }

int ccallgrind_is_available(void) { return 0; }

#endif

#ifndef FLOWMETER_CLIBFUZZER_SHIM_H
#define FLOWMETER_CLIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry for programs with their own main (compiler-rt, FuzzerDriver.cpp). Only the fuzz build links
// libFuzzer (swiftc -sanitize=fuzzer); nothing calls this otherwise.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif

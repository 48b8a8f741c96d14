import CMimalloc

#if canImport(Glibc)
    import Glibc
#endif

/// The memory allocator behind `malloc` in the shipped executables: mimalloc, linked in their place of glibc's.
///
/// Linking `libmimalloc` into an executable (this target does, for `flowmeter` and `flowmeter-bench`) puts its
/// `malloc`, `free` and the rest ahead of glibc's in the dynamic linker's search order, so every allocation of the
/// process goes to mimalloc: the Swift runtime's, libmicrohttpd's and librdkafka's alike. On the ingest path
/// librdkafka allocates each message on the HTTP thread and frees it on the thread that serves its delivery report;
/// glibc hands such a chunk back to the allocating thread's arena under its lock and coalesces it, so the HTTP thread
/// allocated through `_int_malloc` and `malloc_consolidate` nearly every time. mimalloc frees a foreign block onto
/// its page's own list with one atomic push and reuses it without coalescing. Measured in docs/performance.md
/// ("2026-12-05, eleventh session").
///
/// Only the executables depend on this target: the test bundles and the fuzz targets keep glibc's allocator (the
/// fuzz builds run under AddressSanitizer, which must own `malloc`).
public enum ProcessAllocator {
    /// Whether `malloc` in this process is mimalloc's: a block from `malloc` lies in mimalloc's heap.
    public static let isMimalloc: Bool = {
        guard let block = malloc(64) else { return false }
        defer { free(block) }
        return mi_is_in_heap_region(block)
    }()

    /// What `flowmeter --version` prints: `mimalloc 2.0.9`, or `not mimalloc (…)` when the override is not in
    /// effect: a build that links mimalloc after libc (glibc's `malloc` wins), or an `LD_PRELOAD` that puts another
    /// allocator first (which one is not told apart).
    public static var name: String {
        guard isMimalloc else { return "not mimalloc (glibc's malloc, or one preloaded ahead of it)" }
        let version = Int(mi_version())
        return "mimalloc \(version / 100).\(version / 10 % 10).\(version % 10)"
    }
}

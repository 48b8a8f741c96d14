import Foundation
import IngestBenchmarks
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ProcessCountersTests {
    @Test func parsesTheSwitchLinesOfAStatusFile() {
        let text = "Name:\tflowmeter\nThreads:\t9\nvoluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n"
        #expect(ContextSwitches(status: text) == ContextSwitches(voluntary: 1_234, involuntary: 56))
        #expect(ContextSwitches(status: "Name:\tx\nvoluntary_ctxt_switches:\t1\n") == nil)
        #expect(ProcessCounters.statusFields(text)["Threads"] == "9")
    }

    @Test func cpuTicksCountFieldsAfterTheCommandName() {
        // A command name with spaces and a parenthesis must not shift the fields.
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 70 30 0 0 20 0 5 0 123 456 789"
        #expect(ProcessCounters.cpuTicks(stat: stat) == 100)
        #expect(ProcessCounters.cpuTicks(stat: "4242 no parenthesis") == nil)
    }

    /// /proc/self/status holds the main thread's switches only; the sum over /proc/self/task covers every thread,
    /// here a thread that slept 50 times (each sleep a voluntary switch of that thread) and is still alive.
    @Test func sumsSwitchesOverEveryThreadOfThisProcess() throws {
        let pid = getpid()
        let slept = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let taskPath = Mutex<String?>(nil)
        let thread = Thread {
            // /proc/thread-self links to /proc/PID/task/TID of the thread that reads it (Glibc here has no gettid).
            taskPath.withLock { $0 = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") }
            for _ in 0..<50 { usleep(200) }
            slept.signal()
            release.wait()
        }
        thread.start()
        defer { release.signal() }
        #expect(slept.wait(timeout: .now() + 30) == .success)
        // Counts only grow while both threads live, so the sum, read last, covers both earlier readings.
        let mainThread = try #require(
            ContextSwitches(status: try String(contentsOfFile: "/proc/self/status", encoding: .utf8)))
        let task = try #require(taskPath.withLock { $0 })
        let sleeper = try #require(
            ContextSwitches(status: try String(contentsOfFile: "/proc/\(task)/status", encoding: .utf8)))
        let sum = try #require(ContextSwitches.summedOverThreads(ofProcess: pid))
        // Nearly every sleep switches; a timer that expired before the thread blocked does not, so allow a margin.
        #expect(sleeper.voluntary >= 25)
        #expect(sum.voluntary >= mainThread.voluntary + sleeper.voluntary)
        let counters = try #require(ProcessCounters.read(pid: pid))
        #expect(counters.threads > 1)
        #expect(counters.peakRSSMiB > 0)
        #expect(counters.cpuSeconds > 0)
    }

    @Test func aMissingProcessReadsAsNil() {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("no-proc-\(getpid())").path
        #expect(ContextSwitches.summedOverThreads(ofProcess: 1, procRoot: root) == nil)
        #expect(ProcessCounters.read(pid: 1, procRoot: root) == nil)
    }
}

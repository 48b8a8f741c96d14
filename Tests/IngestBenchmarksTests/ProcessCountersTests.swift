import Foundation
import IngestBenchmarks
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

    /// This test process runs several threads (Swift Testing's own and the ones started here), so the sum over
    /// /proc/self/task covers more than the main thread's line in /proc/self/status, which is all that file holds.
    @Test func sumsSwitchesOverEveryThreadOfThisProcess() throws {
        let pid = getpid()
        let before = try #require(ContextSwitches.summedOverThreads(ofProcess: pid))
        let threads = 4
        let done = DispatchGroup()
        // Each thread sleeps 50 times: every sleep is a voluntary switch of that thread, not of the main thread.
        for _ in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                for _ in 0..<50 { usleep(200) }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let after = try #require(ContextSwitches.summedOverThreads(ofProcess: pid))
        // Exited threads take their counts with them, so read while one still runs.
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for _ in 0..<50 { usleep(200) }
            running.signal()
            release.wait()
        }
        running.wait()
        let withLiveThread = try #require(ContextSwitches.summedOverThreads(ofProcess: pid))
        let mainThreadOnly = try #require(
            ContextSwitches(status: try String(contentsOfFile: "/proc/self/status", encoding: .utf8)))
        release.signal()
        #expect(after.voluntary >= before.voluntary)
        #expect(withLiveThread.voluntary - after.voluntary >= 50)
        #expect(withLiveThread.voluntary > mainThreadOnly.voluntary)
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

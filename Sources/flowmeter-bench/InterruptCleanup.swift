import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What an interrupted benchmark leaves behind: nothing. On SIGINT, SIGTERM or SIGHUP every child still registered
/// is resumed (a target paused with SIGSTOP would keep the signal pending and stay stopped for good) and terminated,
/// the work folders are removed, and the benchmark exits with 128 + the signal.
enum InterruptCleanup {
    private static let state = Mutex(State())
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

    private struct State {
        var children: Set<Int32> = []
        var folders: [URL] = []
    }

    /// Catches the three signals from now on; once per process.
    static func install() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM, SIGHUP] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { interrupted(by: number) }
                source.resume()
                sources.append(source)
            }
        }
    }

    static func register(child pid: Int32) {
        state.withLock { _ = $0.children.insert(pid) }
    }

    static func unregister(child pid: Int32) {
        state.withLock { _ = $0.children.remove(pid) }
    }

    static func register(folder: URL) {
        state.withLock { $0.folders.append(folder) }
    }

    private static func interrupted(by number: Int32) {
        let (children, folders) = state.withLock { ($0.children, $0.folders) }
        FileHandle.standardError.write(
            Data("\ninterrupted: stopping \(children.count) child processes and removing the work folder\n".utf8))
        for pid in children {
            kill(pid, SIGCONT)
            kill(pid, SIGTERM)
        }
        let deadline = Date().addingTimeInterval(5)
        var status: Int32 = 0
        var waiting = children
        while !waiting.isEmpty && Date() < deadline {
            waiting = waiting.filter { kill($0, 0) == 0 && waitpid($0, &status, WNOHANG) == 0 }
            if !waiting.isEmpty { usleep(50_000) }
        }
        for pid in waiting { kill(pid, SIGKILL) }
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
        exit(128 + number)
    }
}

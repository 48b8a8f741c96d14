import Foundation
import TestSupport
import Testing

/// The console in a real browser: Tests/Console/console_test.py drives Debian's headless Chromium through
/// chromedriver (Selenium) against the real `flowmeter serve` over the seeded store, checks every page with axe-core
/// and saves screenshots under .build/console-screenshots/ (docs/console.md).
@Suite(.serialized) struct ConsoleBrowserTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func signInSeeTheIncidentFollowItsDeployChangeTheWindowAndSignOut() async throws {
        let seeded = try SeededStore()
        let serve = try await ReadAPITests.serve(seeded)
        defer { _ = serve.child.terminate(timeout: .seconds(20)) }
        let script = Self.repository.appendingPathComponent("Tests/Console/console_test.py").path
        let screenshots = Self.repository.appendingPathComponent(".build/console-screenshots").path
        let profile = try TemporaryDirectory(prefix: "flowmeter-chromium")
        defer { profile.remove() }
        // Bounded: the script quits the browser in every case; the timeout ends a hung run.
        let run = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "/usr/bin/python3", script, "http://127.0.0.1:\(serve.port)", ReadAPITests.allKey, SeededStore.from,
                SeededStore.to, screenshots, profile.path,
            ], timeout: .seconds(240))
        #expect(run.status == 0, "console_test.py:\n\(run.output)\n\(run.errors)")
        #expect(run.output.contains("every check passed"), "\(run.output)")
        // Nothing left behind: no live process (browser, renderer, GPU or utility child) names the run's profile.
        let left = Self.processes(mentioning: profile.path)
        #expect(left.isEmpty, "left running: \(left)")
    }

    /// The command lines of running processes that contain `text`.
    static func processes(mentioning text: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            return line.contains(text) ? "\(pid): \(line.prefix(200))" : nil
        }
    }
}

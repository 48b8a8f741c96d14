import Foundation
import TestSupport
import Testing

/// scripts/portability-gate.py, which `make test` runs over what an app compiles: it passes on the checkout's SDK
/// sources and fails on a copy of them with one planted problem.
@Suite struct PortabilityGateTests {
    static let gate = Repository.path("scripts/portability-gate.py")
    static let folders = ["Sources/FlowmeterModels", "Sources/FlowmeterReporter", "Examples/FlowUIExample"]

    /// A copy of the SDK folders (no Package.swift, so the gate skips the package graph).
    private func copyOfTheSDK() throws -> TemporaryDirectory {
        let copy = try TemporaryDirectory(prefix: "flowmeter-gate")
        for folder in Self.folders {
            try FileManager.default.createDirectory(
                at: copy.url.appendingPathComponent(folder).deletingLastPathComponent(),
                withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Repository.path(folder), toPath: copy.file(folder))
        }
        return copy
    }

    private func plant(_ text: String, atTopOf relative: String, in copy: TemporaryDirectory) throws {
        let path = copy.file(relative)
        let original = try String(contentsOfFile: path, encoding: .utf8)
        try (text + "\n" + original).write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func gate(_ root: String) throws -> Tool.Run {
        try Tool.python.run([Self.gate, "--root", root], timeout: .seconds(120))
    }

    @Test func theSDKAsCheckedInPasses() throws {
        let copy = try copyOfTheSDK()
        let run = try gate(copy.path)
        #expect(run.succeeded, "\(run.transcript)")
    }

    @Test(arguments: [
        ("import Glibc", "`import Glibc` outside `#if canImport(Glibc)`"),
        ("import UIKit", "`import UIKit` outside `#if canImport(UIKit)`"),
        ("#if os(Linux)\n    import Glibc\n#endif", "`import Glibc` outside `#if canImport(Glibc)`"),
        ("#if canImport(Glibc)\n#else\n    import Glibc\n#endif", "`import Glibc` outside `#if canImport(Glibc)`"),
        ("let pause: Duration = .seconds(1)", "Clock and Duration (iOS 16)"),
        ("import Synchronization", "Synchronization (iOS 18, macOS 15)"),
        ("let path = \"/proc/self/stat\"", "a Linux file-system path"),
        ("#if canImport(UIKit)\n    func f() { let x = ( }\n#endif", "(swiftc -parse)"),
    ])
    func aPlantedProblemFailsTheGate(planted: String, finding: String) throws {
        let copy = try copyOfTheSDK()
        let file = "Sources/FlowmeterReporter/FlowmeterReporter.swift"
        try plant(planted, atTopOf: file, in: copy)
        let run = try gate(copy.path)
        #expect(run.status == 1, "\(run.transcript)")
        #expect(run.output.contains(file + ":"), "the finding names the file: \(run.transcript)")
        #expect(run.output.contains(finding), "\(run.transcript)")
    }

    @Test func guardedImportsAndMarkedAPIPass() throws {
        let copy = try copyOfTheSDK()
        try plant(
            """
            #if canImport(Glibc)
                import Glibc
            #elseif canImport(Darwin)
                import Darwin
            #endif
            @available(iOS 16, macOS 13, *)
            func pause() async throws {
                try await Task.sleep(for: Duration.seconds(1))
            }
            """, atTopOf: "Sources/FlowmeterModels/Timestamp.swift", in: copy)
        let run = try gate(copy.path)
        #expect(run.succeeded, "\(run.transcript)")
    }
}

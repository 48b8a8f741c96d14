import Foundation
import FuzzTargets
import Testing

/// Every fuzz target's checked-in corpus (`Tests/Fuzz/<target>/`) through the target's own invariant checks,
/// without sanitizers: the seeds, and every input a fuzzing run found and that was fixed since.
@Suite struct CorpusTests {
    static let corpusRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    @Test(arguments: FuzzTargets.names)
    func everyCorpusFilePassesItsTargetsChecks(target name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let files = FuzzMain.corpusFiles(at: Self.corpusRoot.appendingPathComponent(name))
        #expect(files.count >= 5, "the \(name) corpus has only \(files.count) files")
        for file in files {
            let input = try [UInt8](Data(contentsOf: file))
            if let failure = FuzzTargets.failure(of: target, on: input) {
                Issue.record("\(name)/\(file.lastPathComponent): \(failure.message)")
            }
        }
    }

    @Test func everyTargetHasACorpusFolder() {
        for name in FuzzTargets.names {
            var isFolder: ObjCBool = false
            let path = Self.corpusRoot.appendingPathComponent(name).path
            #expect(
                FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue, "\(path)")
        }
    }
}

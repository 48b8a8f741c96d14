import Foundation
import Testing

/// The checked-in fixture files, read through the test bundle.
enum Fixtures {
    static func all() throws -> [URL] {
        let directory = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" || $0.pathExtension == "bin" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        let directory = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

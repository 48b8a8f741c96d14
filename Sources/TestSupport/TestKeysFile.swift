import Foundation

/// The keys file a test's collector reads (docs/api.md#keys-file): one ingest key for `apps` at a rate no test
/// reaches, and the admin keys; the one way the tests write it.
public enum TestKeysFile {
    /// Writes the file to `path` and returns `path`. `adminKeys` nil leaves the field out.
    @discardableResult
    public static func write(
        to path: String, ingestKey: String, apps: [String] = ["*"], adminKeys: [String]? = nil,
        eventsPerSecond: Int = 1_000_000
    ) throws -> String {
        var file: [String: Any] = [
            "ingestKeys": [
                [
                    "key": ingestKey, "apps": apps,
                    "rateLimit": ["eventsPerSecond": eventsPerSecond, "burst": eventsPerSecond],
                ]
            ]
        ]
        if let adminKeys { file["adminKeys"] = adminKeys }
        try JSONSerialization.data(withJSONObject: file, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        return path
    }
}

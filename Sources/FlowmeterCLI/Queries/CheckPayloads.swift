import Foundation

/// The page payloads one `flowmeter check` judges: files, every `*.json` under a directory, and NDJSON on standard
/// input (`-`: one payload per non-empty line).
struct CheckPayload: Sendable {
    /// What findings name it by: the path as given (a file, or a file found under a directory), or `-:LINE` for a
    /// line of standard input.
    var name: String
    /// The file its findings point at in CI (`stdin` for standard input).
    var uri: String
    /// The payload's bytes.
    var bytes: [UInt8]
    /// The line its first byte is on in `uri`.
    var firstLine: Int

    /// The payloads `arguments` name, in order; a directory's files sorted by path. Throws ``CommandError`` when one
    /// cannot be read.
    static func gather(_ arguments: [String], standardInput: () -> Data) throws -> [CheckPayload] {
        var payloads: [CheckPayload] = []
        for argument in arguments {
            if argument == "-" {
                let text = standardInput()
                var line = 1
                for slice in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                    defer { line += 1 }
                    let bytes = [UInt8](slice)
                    guard bytes.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") && $0 != 9 })
                    else { continue }
                    payloads.append(CheckPayload(name: "-:\(line)", uri: "stdin", bytes: bytes, firstLine: line))
                }
                continue
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                throw CommandError(.unreadableInput, "cannot read payload '\(argument)'")
            }
            if isDirectory.boolValue {
                let root = argument.hasSuffix("/") ? String(argument.dropLast()) : argument
                let found = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [])
                    .filter { $0.hasSuffix(".json") }.sorted()
                for relative in found {
                    let path = root + "/" + relative
                    guard let data = FileManager.default.contents(atPath: path) else {
                        throw CommandError(.unreadableInput, "cannot read payload '\(path)'")
                    }
                    payloads.append(CheckPayload(name: path, uri: path, bytes: [UInt8](data), firstLine: 1))
                }
            } else {
                guard let data = FileManager.default.contents(atPath: argument) else {
                    throw CommandError(.unreadableInput, "cannot read payload '\(argument)'")
                }
                payloads.append(CheckPayload(name: argument, uri: argument, bytes: [UInt8](data), firstLine: 1))
            }
        }
        return payloads
    }
}

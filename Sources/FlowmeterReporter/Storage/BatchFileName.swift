import Foundation

/// A batch file's name: `<creation time in ms, 13 digits>-<batch id>.open` while events are appended, `.batch`
/// once sealed.
///
/// Ages come from the name, never from file timestamps, which backups, restores and copies rewrite. The batch id
/// is fixed when the file is created and kept through sealing and every retry; the halves of a split batch get the
/// id with `-a` or `-b` appended, the same on every run, so a crash during a split cannot produce different ids.
struct BatchFileName: Hashable, Sendable, Comparable {
    /// Milliseconds since 1970 when the batch was opened.
    let createdAt: Int64
    /// The batch id sent to the collector.
    let id: String

    init(createdAt: Int64, id: String) {
        self.createdAt = createdAt
        self.id = id
    }

    /// Parses `name` as a batch file name; `isOpen` says which suffix it had.
    init?(_ name: String, isOpen: inout Bool) {
        let suffix: String
        if name.hasSuffix(".open") {
            suffix = ".open"
            isOpen = true
        } else if name.hasSuffix(".batch") {
            suffix = ".batch"
            isOpen = false
        } else {
            return nil
        }
        let stem = name.dropLast(suffix.count)
        guard let dash = stem.firstIndex(of: "-"), let millis = Int64(stem[..<dash]), millis >= 0 else { return nil }
        let id = String(stem[stem.index(after: dash)...])
        guard !id.isEmpty, id.utf8.count <= 200,
            id.utf8.allSatisfy({
                $0 == UInt8(ascii: "-") || (48...57).contains($0) || (65...90).contains($0)
                    || (97...122).contains($0)
            })
        else { return nil }
        self.init(createdAt: millis, id: id)
    }

    var openName: String { stem + ".open" }
    var sealedName: String { stem + ".batch" }

    /// The name of half `suffix` (`a` or `b`) of a split.
    func half(_ suffix: String) -> BatchFileName {
        BatchFileName(createdAt: createdAt, id: id + "-" + suffix)
    }

    private var stem: String {
        let digits = String(createdAt)
        return String(repeating: "0", count: max(0, 13 - digits.count)) + digits + "-" + id
    }

    /// Oldest first; the id breaks ties (so the halves of a split keep their order).
    static func < (lhs: BatchFileName, rhs: BatchFileName) -> Bool {
        (lhs.createdAt, lhs.id) < (rhs.createdAt, rhs.id)
    }
}

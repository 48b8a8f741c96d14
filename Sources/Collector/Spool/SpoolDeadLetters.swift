import Foundation

/// The spool's dead-letter segment: records Kafka refused for good (topic authorization failed, a message too
/// large, an unknown topic), kept for an operator instead of dropped.
///
/// `dead-letters.seg` in the spool directory, in the segment format (``SpoolFormat``: the 16-byte header, then
/// checksummed frames, each the record exactly as it was spooled: topic, headers, key, value and when it was
/// accepted). The start-up scan never reads it (its name is not a segment number) and it does not count toward
/// `--spool-max-bytes`. The collector appends to it under an exclusive `flock`, then `fdatasync`s it (and the
/// directory when it made the file); `flowmeter spool replay-dead-letters` takes the same lock, renames the file
/// to `dead-letters.replaying-<time>.seg`, produces its records and removes it once Kafka persisted them all, so
/// the two never race while the collector runs. Records refused again go back into `dead-letters.seg`.
struct SpoolDeadLetters: Sendable {
    /// The spool directory.
    let directory: String

    /// The dead-letter segment's file name.
    static let fileName = "dead-letters.seg"
    /// The prefix of a dead-letter segment claimed by a replay.
    static let replayingPrefix = "dead-letters.replaying-"

    /// The path of the dead-letter segment.
    var path: String { directory + "/" + Self.fileName }

    /// Appends `frames` (valid, checksummed frames back to back) durably.
    func append(_ frames: [UInt8]) throws(CollectorError) {
        guard !frames.isEmpty else { return }
        while true {
            let file = try SpoolFile.openForAppending(path)
            try file.lockExclusively()
            // A replay renamed the file between our open and our lock: append to the new one instead.
            guard file.isStillAtPath else { continue }
            let size = try file.size()
            if size == 0 { try file.write(SpoolFormat.segmentHeader) }
            try file.write(frames)
            try file.synchronize()
            if size == 0 { try SpoolFile.synchronizeDirectory(directory) }
            return
        }
    }

    /// Claims the current dead-letter segment for a replay: renames it (under its lock) to a
    /// `dead-letters.replaying-…` name. Returns every claimed segment, oldest first, also ones an earlier replay
    /// claimed and did not finish.
    func claim() throws(CollectorError) -> [String] {
        if access(path, F_OK) == 0 {
            let file = try SpoolFile.openForAppending(path)
            try file.lockExclusively()
            if file.isStillAtPath {
                let stamp = String(SpoolBatch.now())
                var target = directory + "/" + Self.replayingPrefix + stamp + ".seg"
                var attempt = 1
                while access(target, F_OK) == 0 {
                    target = directory + "/" + Self.replayingPrefix + stamp + "-\(attempt).seg"
                    attempt += 1
                }
                try SpoolFile.rename(path, to: target)
                try SpoolFile.synchronizeDirectory(directory)
            }
        }
        return claimed()
    }

    /// The claimed segments waiting for a replay to finish, oldest first.
    func claimed() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(Self.replayingPrefix) && $0.hasSuffix(".seg") }
            .sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
            .map { directory + "/" + $0 }
    }

    /// The records of a dead-letter (or any) segment file, with how many damaged stretches were skipped.
    static func records(in path: String) throws(CollectorError) -> (records: [SpoolRecord], damaged: Int) {
        let file = try SpoolFile.openForReading(path)
        let bytes = try file.read(at: 0, count: try file.size())
        return bytes.withUnsafeBytes { buffer in
            guard SpoolFormat.hasSegmentHeader(buffer) else { return ([], buffer.isEmpty ? 0 : 1) }
            var records: [SpoolRecord] = []
            var damaged = 0
            var offset = SpoolFormat.segmentHeaderSize
            walking: while offset < buffer.count {
                switch SpoolSegmentScan.step(in: buffer, at: offset, limit: buffer.count) {
                case .record(let view):
                    records.append(SpoolFormat.record(view, in: buffer))
                    offset = view.end
                case .damaged(let next):
                    damaged += 1
                    offset = next
                case .needsBytes, .damagedToEnd:
                    damaged += 1
                    break walking
                }
            }
            return (records, damaged)
        }
    }
}

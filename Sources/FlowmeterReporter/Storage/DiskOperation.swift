/// One change to the queue directory, decided under the reporter's lock and carried out in order by the writer.
enum DiskOperation: Sendable {
    /// Create the open batch file with its header line.
    case create(BatchFileName, header: [UInt8])
    /// Append lines holding `occurrences` occurrences to the open batch file.
    case append(BatchFileName, [UInt8], occurrences: Int)
    /// Close the open file and rename it to its sealed name.
    case seal(BatchFileName)
    /// Append the lines that mark a sealed batch attempted (its client report, if any, then `A`), before its first
    /// attempt.
    case markAttempted(BatchFileName, [UInt8])
    /// Write a sealed batch file whole, replacing any file of that name in one rename (the halves of a split, a
    /// batch rewritten without its damaged lines).
    case write(BatchFileName, [UInt8])
    /// Delete a sealed batch file.
    case delete(BatchFileName)
    /// Replace the file of counts not yet reported.
    case saveDiscards(DiscardCounts)
    /// Delete every batch file and the counts (``FlowmeterReporter/clearAll()``).
    case removeAll

    /// What it does to which file, such as `write 0001733400000000-<id>-a.batch`.
    var summary: String {
        switch self {
        case .create(let name, _): return "create " + name.openName
        case .append(let name, _, _): return "append " + name.openName
        case .seal(let name): return "seal " + name.sealedName
        case .markAttempted(let name, _): return "markAttempted " + name.sealedName
        case .write(let name, _): return "write " + name.sealedName
        case .delete(let name): return "delete " + name.sealedName
        case .saveDiscards: return "saveDiscards"
        case .removeAll: return "removeAll"
        }
    }
}

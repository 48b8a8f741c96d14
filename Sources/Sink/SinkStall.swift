public import Foundation
public import RollupStore

/// Why a sink makes no progress now: its store fails as a whole, or its dead letters cannot be written.
///
/// While stalled, the sink moves no offset and dead-letters nothing: it retries the same step with a bounded
/// exponential backoff and resumes by itself when the cause is gone. `/readyz` answers 503 with ``reason`` and
/// ``message``.
public struct SinkStall: Sendable, Hashable {
    /// A stable word for machines: `store_read_only`, `store_permission_denied`, `store_disk_full`,
    /// `store_unreachable`, `store_timed_out`, `store_io_error`, `store_corrupt`, `store_busy` (the store fails as a
    /// whole), `store_error` (any other failure that holds a step back, such as a conflict being retried), or
    /// `dead_letters_unwritable`.
    public var reason: String
    /// A sentence for people, with the store's or the file system's own words (never a password).
    public var message: String
    /// When the stall began (the first failure of the run of failures).
    public var since: Date

    /// A stall for `reason` since `since`.
    public init(reason: String, message: String, since: Date = Date()) {
        self.reason = reason
        self.message = message
        self.since = since
    }

    /// The stall a store-wide error causes, or nil for an error that is not store-wide.
    public init?(storeError error: RollupStoreError, since: Date = Date()) {
        guard error.isStoreWide else { return nil }
        let reason =
            switch error.code {
            case .readOnly: "store_read_only"
            case .permissionDenied: "store_permission_denied"
            case .diskFull: "store_disk_full"
            case .timedOut: "store_timed_out"
            case .ioError: "store_io_error"
            case .corrupt: "store_corrupt"
            case .busy: "store_busy"
            default: "store_unreachable"
            }
        self.init(reason: reason, message: "The store fails as a whole: \(error.message)", since: since)
    }

    /// The `kind` label of a store error in `flowmeter_sink_store_errors_total`.
    public static func kind(of error: any Error) -> String {
        guard let error = error as? RollupStoreError else { return "other" }
        return switch error.code {
        case .connectionFailed: "connection"
        case .timedOut: "timeout"
        case .readOnly: "read_only"
        case .permissionDenied: "permission_denied"
        case .diskFull: "disk_full"
        case .ioError: "io"
        case .corrupt: "corrupt"
        case .busy: "busy"
        case .conflict: "conflict"
        case .refused: "refused"
        case .queryFailed: "query"
        default: "other"
        }
    }

    /// Every `kind` label, so each series exists from the first scrape.
    public static let kinds = [
        "connection", "timeout", "read_only", "permission_denied", "disk_full", "io", "corrupt", "busy", "conflict",
        "refused", "query", "dead_letters", "other",
    ]
}

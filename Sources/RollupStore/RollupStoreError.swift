public import FlowmeterModels

/// An error from a rollup store: the database refused, was unreachable, or held data this build cannot read.
///
/// `isRetriable` says whether the same call may succeed later unchanged (a busy or unreachable database, a
/// serialization failure); a caller such as the sink retries those and stops on the rest.
public struct RollupStoreError: FlowmeterError {
    /// What went wrong, extensible without breaking callers that switch on known codes.
    public struct Code: FlowmeterErrorCode {
        /// The code's name.
        public let rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The store URL is neither a path, `sqlite:PATH`, nor `postgres://…`.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// The database could not be opened or reached.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// The database stayed locked or busy past the busy timeout.
        public static let busy = Code(rawValue: "busy")
        /// Two transactions conflicted (PostgreSQL serialization failure or deadlock).
        public static let conflict = Code(rawValue: "conflict")
        /// A read or write of the database file failed, or the disk is full or read-only.
        public static let ioError = Code(rawValue: "ioError")
        /// The database refused a statement.
        public static let queryFailed = Code(rawValue: "queryFailed")
        /// The database holds a newer schema than this build knows, or a migration failed.
        public static let schema = Code(rawValue: "schema")
        /// A stored value could not be decoded.
        public static let invalidData = Code(rawValue: "invalidData")
        /// The database accepts no writes: a PostgreSQL standby or a read-only transaction after a failover
        /// (SQLSTATE 25006), a read-only SQLite file.
        public static let readOnly = Code(rawValue: "readOnly")
        /// The database user may not do this (SQLSTATE 42501; class 28, a login refused).
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// The disk or a size limit is full (SQLSTATE class 53, `SQLITE_FULL`).
        public static let diskFull = Code(rawValue: "diskFull")
        /// The database file is damaged or is not a database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
        public static let corrupt = Code(rawValue: "corrupt")
        /// The server sent no answer within the client's deadline (a stalled or half-open connection).
        public static let timedOut = Code(rawValue: "timedOut")
        /// The database refused this call's own data: a constraint on a row, a value out of range (PostgreSQL
        /// classes 22 and 23, SQLite's constraint and size errors). The only error that blames the data.
        public static let refused = Code(rawValue: "refused")
    }

    /// What went wrong.
    public let code: Code
    /// The database's own message, or ours.
    public let message: String
    /// Whether the same call may succeed if tried again later.
    public let isRetriable: Bool
    /// The source file where the error was made.
    public let file: String
    /// The source line where the error was made.
    public let line: UInt

    /// Whether the store fails as a whole rather than over this call's data: unreachable, stalled, read-only,
    /// permission denied, full, damaged or busy past its timeout. Every call fails the same way until an operator or
    /// a failover fixes the store, so a caller stops and waits (docs/reliability.md, C2) instead of blaming a message.
    public var isStoreWide: Bool {
        switch code {
        case .connectionFailed, .busy, .ioError, .readOnly, .permissionDenied, .diskFull, .corrupt, .timedOut:
            true
        default:
            false
        }
    }

    /// Whether the database refused this call's own data (``Code/refused``): the only store error for which a
    /// caller may set one message aside (dead-letter it) and go on.
    public var refusesData: Bool { code == .refused }

    /// Makes an error; `file` and `line` default to the caller's position.
    public init(
        _ code: Code, _ message: String, isRetriable: Bool = false, file: String = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.file = file
        self.line = line
    }

}

import FlowmeterModels
import FlowmeterWire
import Foundation
import Synchronization

/// The whole program's structured log lines, one per event: a JSON object or a logfmt line, with a level threshold.
/// Every service logs through one (the collector, the sink, the detector loop, the service group).
///
/// Callers pass only values that are safe to print: key ids (never keys) and install pseudonyms (never raw install
/// IDs); this type cannot tell the difference, so the collector never hands it either secret. Lines go to the sink
/// (standard error by default) under a lock, so concurrent lines never interleave. Safe from any thread.
public final class Logger: Sendable {
    /// How serious a line is; lines below the threshold are skipped.
    public enum Level: String, Sendable, Hashable, Comparable, CaseIterable {
        /// Per-request detail.
        case debug
        /// Lifecycle: started, stopping, stopped.
        case info
        /// Something an operator should look at, such as a generated salt.
        case warning
        /// Something failed.
        case error

        private var rank: Int { Level.allCases.firstIndex(of: self)! }

        /// Orders by seriousness.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// The shape of a line.
    public enum Format: String, Sendable, Hashable {
        /// `{"ts":"…","level":"info","msg":"…","key":"value"}`.
        case json
        /// `ts=… level=info msg="…" key=value`.
        case logfmt
    }

    /// Lines below this level are skipped.
    public let threshold: Level
    /// The line format.
    public let format: Format
    private let sink: Mutex<@Sendable (String) -> Void>

    /// A logger writing lines at or above `threshold` in `format` to `sink` (default: standard error).
    public init(
        threshold: Level = .info, format: Format = .json,
        sink: @escaping @Sendable (String) -> Void = Logger.standardError
    ) {
        self.threshold = threshold
        self.format = format
        self.sink = Mutex(sink)
    }

    /// Writes a line to standard error, unbuffered.
    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Logs `message` with `fields` (in order) at `level`.
    public func log(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(level, message, fields: fields.map { ($0.key, $0.value) })
    }

    /// Logs `message` with `fields` (in order) at `level`, for fields only known at run time.
    public func log(_ level: Level, _ message: String, fields: [(key: String, value: String)]) {
        guard level >= threshold else { return }
        let line = render(level, message, fields)
        sink.withLock { $0(line) }
    }

    /// Logs at `.debug`.
    public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, message, fields) }
    /// Logs at `.info`.
    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, message, fields) }
    /// Logs at `.warning`.
    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.warning, message, fields)
    }
    /// Logs at `.error`.
    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, message, fields) }

    // Every value may hold text an app sent (a widget type inside an error, a libmicrohttpd line quoting a request):
    // whatever ``DisplaySafety`` flags is escaped, so one line stays one line and no terminal escape gets through.
    private func render(_ level: Level, _ message: String, _ fields: [(key: String, value: String)]) -> String {
        let timestamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        let all =
            [("ts", timestamp + "Z"), ("level", level.rawValue), ("msg", message)] + fields.map { ($0.key, $0.value) }
        switch format {
        case .json:
            var line = "{"
            for (index, (key, value)) in all.enumerated() {
                if index > 0 { line += "," }
                line += Self.jsonString(key) + ":" + Self.jsonString(value)
            }
            return line + "}"
        case .logfmt:
            return all.map { key, value in "\(Self.logfmtKey(key))=\(Self.logfmtValue(value))" }.joined(separator: " ")
        }
    }

    /// `text` as a display-safe JSON string (``JSONString``): no line break, terminal escape or bidi control gets
    /// through.
    static func jsonString(_ text: String) -> String {
        JSONString.quoted(text, displaySafe: true)
    }

    /// A logfmt value: bare when it is a plain word, else quoted with `\\`, `\"`, `\n`, `\r`, `\t` and `\uXXXX`
    /// escapes, so a value can never start another key or another line.
    static func logfmtValue(_ value: String) -> String {
        let needsQuotes =
            value.isEmpty
            || value.unicodeScalars.contains {
                $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || DisplaySafety.mustEscape($0)
                    || $0.properties.isWhitespace
            }
        guard needsQuotes else { return value }
        return jsonString(value)
    }

    /// A logfmt key: letters, digits, `_`, `.`, `-` and `/`; anything else (a space, `=`, a quote) becomes `_`.
    static func logfmtKey(_ key: String) -> String {
        let safe = key.unicodeScalars.map { scalar -> Unicode.Scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "_.-/".unicodeScalars.contains(scalar))
                ? scalar : "_"
        }
        return safe.isEmpty ? "_" : String(String.UnicodeScalarView(safe))
    }
}

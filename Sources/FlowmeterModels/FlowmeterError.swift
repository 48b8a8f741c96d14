/// The shape every Flowmeter module's error shares (one error type per module, STYLE.md): an extensible code, a
/// message for people, whether the same call may succeed later, and where the error was made.
///
/// Each module's type is made the same way, `ModuleError(.code, "message", isRetriable:, file:, line:)` with the
/// file and line defaulting to the caller's, and prints the same way unless it has more to say.
public protocol FlowmeterError: Error, Sendable, CustomStringConvertible {
    /// The code's type: a small struct of named static values, so modules can add codes without breaking callers.
    associatedtype Code: Hashable, Sendable, CustomStringConvertible
    /// What went wrong, as a code a caller can switch on.
    var code: Code { get }
    /// What went wrong, in words a user may see.
    var message: String { get }
    /// Whether the same call may succeed if tried again later unchanged.
    var isRetriable: Bool { get }
    /// The source file where the error was made.
    var file: String { get }
    /// The source line where the error was made.
    var line: UInt { get }
}

extension FlowmeterError {
    /// `TypeName.code: message (retriable) [file:line]`.
    public var description: String {
        "\(Self.self).\(code): \(message)\(isRetriable ? " (retriable)" : "") [\(file):\(line)]"
    }
}

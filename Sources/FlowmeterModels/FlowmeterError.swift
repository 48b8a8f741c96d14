/// The shape every Flowmeter module's error shares (one error type per module, STYLE.md): an extensible code, a
/// message for people, whether the same call may succeed later, and where the error was made.
///
/// Each module's type is made the same way, `ModuleError(.code, "message", isRetriable:, file:, line:)` with the
/// file and line defaulting to the caller's, and prints the same way unless it has more to say.
public protocol FlowmeterError: Error, Sendable, CustomStringConvertible {
    /// The code's type: a small struct of named static values, so modules can add codes without breaking callers.
    associatedtype Code: FlowmeterErrorCode
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

/// The one way a module's error code is written: a struct wrapping a raw value (a name, or a library's number),
/// with the codes as static values, so a module adds codes without breaking callers that switch with a `default`.
///
/// ```swift
/// public struct Code: FlowmeterErrorCode {
///     public let rawValue: String
///     public init(rawValue: String) { self.rawValue = rawValue }
///     public static let tooLarge = Code(rawValue: "tooLarge")
/// }
/// ```
///
/// A code named by a string prints as that name; a code over another raw value says how it prints.
public protocol FlowmeterErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible
where RawValue: Hashable & Sendable {
    /// Wraps a raw value; every raw value is a code, named or not.
    init(rawValue: RawValue)
}

extension FlowmeterErrorCode where RawValue == String {
    /// The code's name, such as `tooLarge`.
    public var description: String { rawValue }
}

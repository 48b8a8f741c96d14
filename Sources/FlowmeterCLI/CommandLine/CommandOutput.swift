import Foundation
import Synchronization

/// Where a command writes its results and messages: the process's standard output and error, or a buffer.
///
/// Query commands write through the `output` of their `ParsedArguments`, so a test can run the command tree
/// in-process and read what a user would see. Colour is on only for the real standard output on a terminal.
public struct CommandOutput: Sendable {
    private let standardOutput: @Sendable (String) -> Void
    private let standardError: @Sendable (String) -> Void
    /// Whether text may carry ANSI colour: only on a terminal, and never when `NO_COLOR` is set.
    public let usesColor: Bool
    /// Whether standard output is a terminal, where app-sent text in CSV is shown escaped.
    public let isTerminal: Bool

    /// The process's standard output and error.
    public static var standard: CommandOutput {
        CommandOutput(
            standardOutput: { FileHandle.standardOutput.write(Data($0.utf8)) },
            standardError: { FileHandle.standardError.write(Data($0.utf8)) },
            usesColor: Terminal.usesColor, isTerminal: Terminal.isInteractive)
    }

    /// Output collected in `buffer`, without colour; `isTerminal` makes it read as a terminal would be written to.
    public init(buffer: CommandOutputBuffer, isTerminal: Bool = false) {
        self.init(
            standardOutput: { buffer.append($0, toError: false) }, standardError: { buffer.append($0, toError: true) },
            usesColor: false, isTerminal: isTerminal)
    }

    private init(
        standardOutput: @escaping @Sendable (String) -> Void, standardError: @escaping @Sendable (String) -> Void,
        usesColor: Bool, isTerminal: Bool
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.usesColor = usesColor
        self.isTerminal = isTerminal
    }

    /// Writes `text` and a newline to standard output.
    public func print(_ text: String) {
        standardOutput(text.utf8.last == UInt8(ascii: "\n") ? text : text + "\n")
    }

    /// Writes `text` to standard output as it is, adding no newline.
    public func write(_ text: String) {
        standardOutput(text)
    }

    /// Writes `text` and a newline to standard error.
    public func printError(_ text: String) {
        standardError(text.utf8.last == UInt8(ascii: "\n") ? text : text + "\n")
    }

    /// `text` in `style` when colour is on, else unchanged.
    func styled(_ text: String, _ style: Terminal.Style) -> String {
        Terminal.styled(text, style, when: usesColor)
    }
}

/// What a command wrote to a ``CommandOutput`` made with ``CommandOutput/init(buffer:)``; safe from any thread.
public final class CommandOutputBuffer: Sendable {
    private let texts = Mutex<(output: String, error: String)>(("", ""))

    /// Creates an empty buffer.
    public init() {}

    /// Everything written to standard output so far.
    public var standardOutput: String { texts.withLock { $0.output } }

    /// Everything written to standard error so far.
    public var standardError: String { texts.withLock { $0.error } }

    fileprivate func append(_ text: String, toError: Bool) {
        texts.withLock { texts in
            if toError { texts.error += text } else { texts.output += text }
        }
    }
}

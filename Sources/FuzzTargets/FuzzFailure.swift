/// An invariant a fuzz target checks that did not hold: the finding, in words.
///
/// Under libFuzzer the driver prints it and aborts, so the input is saved as a crash artifact; the test suite
/// records it as an issue naming the corpus file.
package struct FuzzFailure: Error, Sendable, CustomStringConvertible {
    /// What did not hold, with the values involved.
    package let message: String

    /// Creates a failure.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}

/// Throws a ``FuzzFailure`` with `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// At most the first `limit` bytes of `bytes` as text, for failure messages.
func show(_ bytes: some Collection<UInt8>, limit: Int = 300) -> String {
    let text = String(decoding: bytes.prefix(limit), as: UTF8.self).debugDescription
    return bytes.count > limit ? text + "… (\(bytes.count) bytes)" : text
}

/// How the reporting app was built; debug builds never count toward ungated-type detection.
///
/// Any string other than `debug` decodes as `release`, the contract's default: an unexpected spelling from some SDK is
/// far more likely a shipping build than a developer's, and counting it keeps real users' problems visible.
public enum BuildConfiguration: String, Hashable, Sendable, Codable {
    /// A development build.
    case debug
    /// A shipping build; also the default and what any unrecognised value means.
    case release

    /// Maps a wire value to a configuration: exactly `debug` is debug, anything else is release.
    @inlinable
    public init(wireValue: String) {
        self = wireValue == "debug" ? .debug : .release
    }

    /// Decodes a string; any value other than `debug` becomes `.release`.
    public init(from decoder: any Decoder) throws {
        self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }
}

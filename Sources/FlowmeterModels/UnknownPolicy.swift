/// What the app does with a widget type it does not know.
///
/// Batch decoding maps an unrecognised spelling to nil (absent) rather than failing the batch.
public enum UnknownPolicy: String, Hashable, Sendable, Codable {
    /// The app draws a placeholder in the unknown widget's place.
    case placeholder
    /// The app leaves the unknown widget out.
    case skip
}

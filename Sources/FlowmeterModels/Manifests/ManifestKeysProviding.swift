/// A content type that says its manifest keys itself, instead of ``ManifestBuilder`` learning them from its decoder.
///
/// For content whose `init(from:)` cannot run on placeholders (it decodes a `String`-backed enum, or validates
/// values), or reads keys only on some branches.
public protocol ManifestKeysProviding {
    /// The keys the content requires and the ones it reads when present (dotted paths for nested ones).
    static var manifestShape: CapabilityManifest.TypeShape { get }
}

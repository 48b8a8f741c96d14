import FlowmeterModels
import FlowmeterWire

/// Remembers the normalized form (``RollupSample/normalizedPath(_:)``) of coding paths seen again and again, so a
/// new series' first sample reuses the normalized string instead of building one.
///
/// The decoders share their strings across batches (the collector's interners), so the same few hundred coding
/// paths come back as the same `String`s; normalizing one walks its bytes and allocates twice (a byte buffer and the
/// new string), a lookup in the ``StringKeyedCache`` behind it hashes its bytes a word at a time and compares it with
/// the path held in the slot. Not thread-safe: keep one per lock (each aggregator shard holds one).
struct NormalizedPathCache {
    private var cache: StringKeyedCache<String>

    /// An empty cache with `slots` entries, rounded up to a power of two.
    init(slots: Int = 256) {
        cache = StringKeyedCache(slots: slots, placeholder: "")
    }

    /// `RollupSample.normalizedPath(raw)`, from the cache when `raw` is the path held in its slot.
    mutating func normalized(_ raw: String) -> String {
        cache.value(for: raw, computing: RollupSample.normalizedPath)
    }
}

/// One app build's traffic in one bucket of `bucketSeconds` (aligned to multiples of `bucketSeconds` since the epoch).
public struct VersionBucket: Hashable, Sendable {
    /// The app build.
    public var key: VersionKey
    /// The bucket's first second since the epoch, a multiple of the bucket length.
    public var bucketStart: Int64
    /// Batches received in the bucket.
    public var batches: Int64
    /// Batches without any diagnostics.
    public var cleanBatches: Int64
    /// Page decodes reported in the bucket: the denominator for rates.
    public var decodes: Int64

    /// Creates a bucket.
    public init(key: VersionKey, bucketStart: Int64, batches: Int64, cleanBatches: Int64, decodes: Int64) {
        self.key = key
        self.bucketStart = bucketStart
        self.batches = batches
        self.cleanBatches = cleanBatches
        self.decodes = decodes
    }
}

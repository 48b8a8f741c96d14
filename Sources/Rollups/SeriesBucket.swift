/// One series' events in one bucket of `bucketSeconds` (aligned to multiples of `bucketSeconds` since the epoch).
public struct SeriesBucket: Hashable, Sendable {
    /// The series.
    public var series: RollupSeries
    /// The bucket's first second since the epoch, a multiple of the bucket length.
    public var bucketStart: Int64
    /// The sum of the series' events over the bucket's minutes.
    public var events: Int64

    /// Creates a bucket.
    public init(series: RollupSeries, bucketStart: Int64, events: Int64) {
        self.series = series
        self.bucketStart = bucketStart
        self.events = events
    }
}

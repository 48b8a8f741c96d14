/// A key id and a bucket start: what a bucket read sums by before it looks up the keys.
struct BucketKey: Hashable {
    var id: Int64
    var bucketStart: Int64
}

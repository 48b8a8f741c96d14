/// The address of `string`'s UTF-8 bytes: two strings that report the same address share one buffer, which is how
/// tests see that a cache handed back the string it made before rather than an equal copy.
public func storageAddress(of string: String) -> UnsafeRawPointer? {
    var copy = string
    return copy.withUTF8 { UnsafeRawPointer($0.baseAddress) }
}

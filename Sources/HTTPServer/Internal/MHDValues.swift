import CMicroHTTPD

/// Copies a request's headers and query arguments out of libmicrohttpd, which owns them only for the request.
enum MHDValues {
    static func headers(of connection: OpaquePointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(16)
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, collectHeader, pointer)
        }
        return headers
    }

    static func queryItems(of connection: OpaquePointer) -> [(name: String, value: String?)] {
        var items: [(name: String, value: String?)] = []
        withUnsafeMutablePointer(to: &items) { pointer in
            _ = MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, collectQueryItem, pointer)
        }
        return items
    }
}

private func collectHeader(
    context: UnsafeMutableRawPointer?,
    kind: MHD_ValueKind,
    key: UnsafePointer<CChar>?,
    value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let context, let key else { return MHD_Result.YES }
    let headers = context.assumingMemoryBound(to: HTTPHeaders.self)
    headers.pointee.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
    return MHD_Result.YES
}

private func collectQueryItem(
    context: UnsafeMutableRawPointer?,
    kind: MHD_ValueKind,
    key: UnsafePointer<CChar>?,
    value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let context, let key else { return MHD_Result.YES }
    let items = context.assumingMemoryBound(to: [(name: String, value: String?)].self)
    items.pointee.append((name: String(cString: key), value: value.map { String(cString: $0) }))
    return MHD_Result.YES
}

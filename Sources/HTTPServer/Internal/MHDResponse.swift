import CMicroHTTPD

/// Turns an `HTTPResponse` into a queued libmicrohttpd response, adding the headers every response carries.
enum MHDResponse {
    static func queue(_ response: HTTPResponse, on connection: OpaquePointer, closingConnection: Bool) -> MHD_Result {
        let created = response.body.withUnsafeBytes { bytes in
            // Copying lets the Swift array go at once; bodies here are small JSON documents.
            MHD_create_response_from_buffer(
                bytes.count,
                UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                MHD_ResponseMemoryMode.RESPMEM_MUST_COPY
            )
        }
        guard let created else { return MHD_Result.NO }
        defer { MHD_destroy_response(created) }
        var hasCacheControl = false
        var hasContentTypeOptions = false
        for field in response.headers {
            if HTTPHeaders.equalIgnoringASCIICase(field.name, "Cache-Control") { hasCacheControl = true }
            if HTTPHeaders.equalIgnoringASCIICase(field.name, "X-Content-Type-Options") { hasContentTypeOptions = true }
            _ = MHD_add_response_header(created, field.name, field.value)
        }
        if !hasCacheControl {
            _ = MHD_add_response_header(created, "Cache-Control", "no-store")
        }
        if !hasContentTypeOptions {
            _ = MHD_add_response_header(created, "X-Content-Type-Options", "nosniff")
        }
        if closingConnection {
            _ = MHD_add_response_header(created, "Connection", "close")
        }
        return MHD_queue_response(connection, UInt32(clamping: response.status.rawValue), created)
    }
}

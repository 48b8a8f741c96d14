import HTTPServer

extension IngestHandler {
    /// The ingest route's check from the request line and headers, before any body byte is read: a request without
    /// a known key gets 401, a batch that would need a full spool gets 503 (before the key's bucket is charged) and
    /// a key whose bucket is spent gets 429, each answered at once with the connection closed; any other request is
    /// admitted under its key id, which bounds its share of the body budget and labels its answer in
    /// `flowmeter_ingest_answers_total`.
    ///
    /// The admitted key's ID comes back with the request (``HTTPServer/HTTPRequest/admittedClient``), so the handler
    /// does not digest the token again; a request handed over in process, without a server, is looked up by its
    /// token there.
    func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        let token = IngestKeys.bearerToken(fromAuthorization: head.headers["Authorization"])
        guard let token, let key = settings.keys.key(for: token) else {
            let rejection = IngestRejection.unauthorized
            metrics.rejections.labels(rejection.reason).increment()
            metrics.rejectedBatches.increment()
            return .reject(rejection.response)
        }
        // A batch that would need the spool while the spool is full gets its 503 now: before its body is read and
        // decoded, and before its key's bucket is charged for a batch that cannot be taken.
        if let delivery, delivery.isRefusingForRoom {
            let rejection = IngestRejection.unavailable(reason: .spoolFull)
            metrics.spoolRefused.labels("full").increment()
            metrics.rejections.labels(rejection.reason).increment()
            metrics.rejectedBatches.increment()
            return .reject(rejection.response, client: key.keyID)
        }
        if case .limited(let seconds) = rateLimiter.check(keyID: key.keyID, limit: key.rateLimit) {
            let rejection = IngestRejection.rateLimited(retryAfterSeconds: seconds)
            metrics.rateLimited.labels(key.keyID).increment()
            metrics.rejections.labels(rejection.reason).increment()
            metrics.rejectedBatches.increment()
            return .reject(rejection.response, client: key.keyID)
        }
        return .admit(client: key.keyID)
    }
}

extension IngestHandler {
    /// The most batch ids remembered for retries: 250,000, about 100 bytes each besides the answer (a 16-byte
    /// digest, its entry and its place in the expiry queue), so about 25 MB at most.
    static let maxRememberedBatchIDs = 250_000
    /// The most bytes of remembered answers: 16 MiB. A remembered answer holds the counts and the first few
    /// diagnostics (``AcceptedAnswer/stored(accepted:diagnostics:)``, at most 4 KiB); past the bound the oldest ids
    /// are forgotten first, and a late retry of one is published again (downstream dedupe absorbs it).
    static let maxRememberedAnswerBytes = 16 << 20
}

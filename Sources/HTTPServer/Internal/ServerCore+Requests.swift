import CMicroHTTPD
import FlowmeterModels
import FlowmeterWire

/// The request path through libmicrohttpd's access handler: limits, body, handler, suspend, resume, queue.
extension ServerCore {
    /// The first access-handler call for a request: headers are in, no body byte has been read.
    func beginRequest(
        connection: OpaquePointer,
        url: UnsafePointer<CChar>?,
        method: UnsafePointer<CChar>?,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let socketContext = MHDConnectionInfo.socketContext(of: connection) else { return MHD_Result.NO }
        let connectionContext = Unmanaged<ConnectionContext>.fromOpaque(socketContext).takeUnretainedValue()
        let now = MonotonicClock.nanoseconds()
        let receiveDeadline = connectionContext.receiveDeadline.load(ordering: .relaxed)
        if receiveDeadline != 0, now > receiveDeadline {
            receiveDeadlineExpirations.add(1, ordering: .relaxed)
            return MHD_Result.NO
        }
        let state = RequestState(
            slot: ResponseSlot(connection: connection),
            connection: connectionContext,
            method: HTTPMethod(rawValue: method.map { String(cString: $0) } ?? ""),
            path: url.map { String(cString: $0) } ?? "",
            start: now
        )
        inFlightRequests.add(1, ordering: .relaxed)
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()

        let declared = contentLength(of: connection)
        if let declared, declared > UInt64(configuration.maxBodyBytes) {
            // Answering now, before any body byte is read, makes libmicrohttpd close after the response.
            bodiesTooLarge.add(1, ordering: .relaxed)
            return queue(Self.tooLarge(limit: configuration.maxBodyBytes), for: state, connection: connection)
        }
        if let admission = configuration.admission {
            let headers = MHDValues.headers(of: connection)
            state.headers = headers
            switch admission(
                HTTPRequestHead(method: state.method, path: state.path, headers: headers, contentLength: declared))
            {
            case .admit(let client):
                state.client = client
            case .reject(let response, let client):
                // The body is never read: the connection closes after the answer, so no unread body is parsed as
                // the next request.
                state.client = client
                admissionRejections.add(1, ordering: .relaxed)
                return queue(response, for: state, connection: connection, closing: true)
            }
        }
        // A chunked body may grow to the limit; a request without either header has no body.
        let hasChunkedBody =
            declared == nil
            && MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Transfer-Encoding") != nil
        let reservation = declared.map { Int($0) } ?? (hasChunkedBody ? configuration.maxBodyBytes : 0)
        guard bodyBudget.reserve(reservation, client: state.client) else {
            bodyBudgetRejections.add(1, ordering: .relaxed)
            return queue(
                configuration.serverAnswer(configuration.bodyBudgetResponse), for: state, connection: connection,
                closing: true)
        }
        state.reservedBytes = reservation
        if let declared {
            state.body = bodyBuffers.take(capacity: Int(declared))
        }
        return MHD_Result.YES
    }

    /// Gives back the request's share of the body budget; idempotent.
    private func releaseBody(_ state: RequestState) {
        guard state.reservedBytes > 0 else { return }
        bodyBudget.release(state.reservedBytes, client: state.client)
        state.reservedBytes = 0
    }

    /// Every later access-handler call: a piece of body, the end of the body, or the wake-up after a resume.
    func continueRequest(
        _ state: RequestState,
        connection: OpaquePointer,
        uploadData: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        switch state.stage {
        case .receiving:
            let size = uploadSize.pointee
            if size > 0 {
                let deadline = state.connection.receiveDeadline.load(ordering: .relaxed)
                if deadline != 0, MonotonicClock.nanoseconds() > deadline {
                    state.abortReason = .receiveDeadlineExceeded
                    receiveDeadlineExpirations.add(1, ordering: .relaxed)
                    return MHD_Result.NO
                }
                guard state.body.count + size <= configuration.maxBodyBytes else {
                    // libmicrohttpd cannot queue a response while upload data is arriving: closing is the answer.
                    state.abortReason = .bodyTooLarge
                    bodiesTooLarge.add(1, ordering: .relaxed)
                    return MHD_Result.NO
                }
                if let uploadData {
                    state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
                }
                uploadSize.pointee = 0
                return MHD_Result.YES
            }
            state.connection.receiveDeadline.store(0, ordering: .relaxed)
            return dispatch(state, connection: connection)

        case .suspended:
            state.connection.responseDeadline.store(0, ordering: .relaxed)
            state.connection.suspendedSlot.withLock { $0 = nil }
            suspendedRequests.subtract(1, ordering: .sequentiallyConsistent)
            guard let (response, isFallback) = state.slot.takeAnswer() else { return MHD_Result.NO }
            state.answeredByFallback = isFallback
            return queue(response, for: state, connection: connection)

        case .answered:
            return MHD_Result.YES
        }
    }

    /// The request is complete: hand it to the handler, then send its answer or suspend until it comes.
    private func dispatch(_ state: RequestState, connection: OpaquePointer) -> MHD_Result {
        var body: [UInt8] = []
        swap(&body, &state.body)
        handle(body: body, state: state, connection: connection)
        // The request is gone; unless the handler kept its own copy, this is the only reference to the buffer.
        bodyBuffers.give(&body)
        releaseBody(state)
        switch state.slot.takeAnswerOrSuspend() {
        case .answered(let response, let isFallback):
            state.answeredByFallback = isFallback
            return queue(response, for: state, connection: connection)
        case .suspended:
            state.stage = .suspended
            state.connection.suspendedSlot.withLock { $0 = state.slot }
            state.connection.responseDeadline.store(
                MonotonicClock.nanoseconds() + responseDeadlineNanoseconds,
                ordering: .relaxed
            )
            let suspended = suspendedRequests.add(1, ordering: .sequentiallyConsistent).newValue
            if let onEveryConnectionWaiting = configuration.onEveryConnectionWaiting,
                suspended >= openConnections.load(ordering: .relaxed)
            {
                onEveryConnectionWaiting()
            }
            // Pairs with stop(): either it sees this suspension and answers it, or this sees it stopping.
            if isStopping.load(ordering: .sequentiallyConsistent),
                state.slot.respond(configuration.serverAnswer(configuration.timeoutResponse), isFallback: true)
            {
                responseDeadlineExpirations.add(1, ordering: .relaxed)
            }
            return MHD_Result.YES
        }
    }

    @inline(never)
    private func handle(body: [UInt8], state: RequestState, connection: OpaquePointer) {
        let request = HTTPRequest(
            method: state.method,
            path: state.path,
            queryItems: MHDValues.queryItems(of: connection),
            headers: state.headers ?? MHDValues.headers(of: connection),
            body: body,
            remoteAddress: state.connection.remoteAddress,
            admittedClient: state.client
        )
        handler(request, HTTPResponder(slot: state.slot))
    }

    /// The completion callback: counts, reports, and restarts the receive clock for a kept-alive connection.
    func finishRequest(_ state: RequestState, termination: MHD_RequestTerminationCode) {
        let now = MonotonicClock.nanoseconds()
        if state.stage == .suspended {
            // Only when the daemon stops with the request still suspended; stop() answers them first.
            suspendedRequests.subtract(1, ordering: .sequentiallyConsistent)
            state.connection.responseDeadline.store(0, ordering: .relaxed)
            state.connection.suspendedSlot.withLock { $0 = nil }
        }
        releaseBody(state)
        state.connection.receiveDeadline.store(now + requestDeadlineNanoseconds, ordering: .relaxed)
        inFlightRequests.subtract(1, ordering: .relaxed)
        completedRequests.add(1, ordering: .relaxed)

        guard let onRequestCompleted = configuration.onRequestCompleted else { return }
        let outcome: HTTPRequestCompletion.Outcome
        if let abortReason = state.abortReason {
            outcome = abortReason
        } else if termination == MHD_RequestTerminationCode.REQUEST_TERMINATED_COMPLETED_OK {
            outcome = state.answeredByFallback ? .respondedAfterDeadline : .responded
        } else if termination == MHD_RequestTerminationCode.REQUEST_TERMINATED_DAEMON_SHUTDOWN {
            outcome = .serverStopped
        } else if state.connection.wasReaped.load(ordering: .relaxed) {
            outcome = .receiveDeadlineExceeded
        } else {
            outcome = .connectionFailed
        }
        onRequestCompleted(
            HTTPRequestCompletion(
                method: state.method,
                path: state.path,
                route: state.slot.route.withLock { $0 },
                client: state.client,
                status: state.queuedStatus,
                outcome: outcome,
                duration: .nanoseconds(now - state.startNanoseconds)
            )
        )
    }

    private func queue(
        _ response: HTTPResponse, for state: RequestState, connection: OpaquePointer, closing: Bool = false
    ) -> MHD_Result {
        state.stage = .answered
        state.queuedStatus = response.status
        return MHDResponse.queue(
            response,
            on: connection,
            closingConnection: closing || isDraining.load(ordering: .relaxed)
        )
    }

    private func contentLength(of connection: OpaquePointer) -> UInt64? {
        guard let text = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Content-Length") else {
            return nil
        }
        var value: UInt64 = 0
        var pointer = text
        while pointer.pointee != 0 {
            let digit = UInt8(bitPattern: pointer.pointee) &- UInt8(ascii: "0")
            // libmicrohttpd rejects malformed lengths itself; saturating keeps a huge one "too large".
            guard digit < 10 else { break }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            value = (overflow1 || overflow2) ? .max : sum
            pointer += 1
        }
        return value
    }

    private static func tooLarge(limit: Int) -> HTTPResponse {
        .error(
            status: .contentTooLarge,
            code: "too_large",
            message: "The request body exceeds the limit of \(limit) bytes."
        )
    }
}

import FlowmeterModels
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

@testable import Collector

/// ``IngestRejection`` is the one place the collector's failures become answers: every case against docs/api.md's
/// status, `error` code and headers (ingest's table, deploy markers, capability manifests, `/readyz`).
@Suite struct CollectorAnswersTests {
    /// Every case, with the status, `error` code and header docs/api.md gives it.
    static let documented: [(IngestRejection, status: Int, code: String, header: String?)] = [
        (.unauthorized, 401, "unauthorized", "WWW-Authenticate"),
        (.adminUnauthorized, 401, "unauthorized", "WWW-Authenticate"),
        (.forbidden, 403, "forbidden", nil),
        (.notAdmin(.deploys), 403, "forbidden", nil),
        (.notAdmin(.manifests), 403, "forbidden", nil),
        (.rateLimited(retryAfterSeconds: 3), 429, "rate_limited", "Retry-After"),
        (.unsupportedContentType, 415, "unsupported_media_type", nil),
        (.unsupportedEncoding, 415, "unsupported_media_type", nil),
        (.encodingNotTaken, 415, "unsupported_media_type", nil),
        (.inflatedTooLarge(limit: 8), 413, "too_large", nil),
        (.tooManyEvents(limit: 1_000), 413, "too_large", nil),
        (.manifestTooLarge(message: "Too many types.", path: "types"), 413, "too_large", nil),
        (.corruptEncoding, 400, "invalid_json", nil),
        (.invalidJSON(message: "Missing key 'client'", path: "client"), 400, "invalid_json", nil),
        (.notReady(reason: "spool_full", message: "The disk spool is full."), 503, "unavailable", "Retry-After"),
    ]

    @Test(arguments: documented.indices)
    func everyRejectionAnswersItsDocumentedStatus(_ index: Int) throws {
        let (rejection, status, code, header) = Self.documented[index]
        let response = rejection.response
        #expect(response.status.rawValue == status, "\(rejection)")
        #expect(response.headers["Content-Type"] == "application/json", "\(rejection)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(body["error"] as? String == code, "\(rejection)")
        #expect((body["message"] as? String)?.isEmpty == false, "\(rejection)")
        if let header { #expect(response.headers[header] != nil, "\(rejection) carries \(header)") }
    }

    @Test(arguments: [
        IngestRejection.UnavailableReason.queueFull, .deliveryFailed, .deadline, .retryInFlight, .shuttingDown,
        .spoolFull, .spoolFailed,
    ])
    func everyUnavailableReasonIsA503WithRetryAfter(_ reason: IngestRejection.UnavailableReason) throws {
        let response = IngestRejection.unavailable(reason: reason).response
        #expect(response.status == .serviceUnavailable)
        #expect(response.headers["Retry-After"] != nil)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(body["error"] as? String == "unavailable")
        #expect(IngestRejection.unavailable(reason: reason).reason == "unavailable_" + reason.rawValue)
    }

    /// The bodies docs/api.md shows keep their bytes: `path` where the table has one, the admin routes' messages.
    @Test func theAdminAnswersKeepTheirBytes() {
        #expect(
            String(decoding: IngestRejection.notAdmin(.deploys).response.body, as: UTF8.self)
                == #"{"error":"forbidden","message":"Deploys need an admin key."}"#)
        #expect(
            String(decoding: IngestRejection.notAdmin(.manifests).response.body, as: UTF8.self)
                == #"{"error":"forbidden","message":"Manifests need an admin key."}"#)
        #expect(
            String(decoding: IngestRejection.adminUnauthorized.response.body, as: UTF8.self)
                == #"{"error":"unauthorized","message":"Send an admin key as 'Authorization: Bearer <key>'."}"#)
        #expect(
            String(decoding: IngestRejection.manifestTooLarge(message: "m", path: "types").response.body, as: UTF8.self)
                == #"{"error":"too_large","message":"m","path":"types"}"#)
        #expect(
            String(decoding: IngestRejection.notReady(reason: "r", message: "m").response.body, as: UTF8.self)
                == #"{"error":"unavailable","reason":"r","message":"m"}"#)
    }

    /// The `outcome` labels of `flowmeter_events_total` are the words dashboards query.
    @Test func eventOutcomesKeepTheirLabels() {
        let labels: [EventOutcome: String] = [
            .accepted: "accepted", .unavailable: "unavailable", .duplicate: "duplicate",
            .droppedMalformed: "dropped_malformed", .droppedTooOld: "dropped_too_old",
            .droppedFuture: "dropped_future", .rejectedForbidden: "rejected_forbidden",
            .rejectedRateLimited: "rejected_rate_limited",
        ]
        for (outcome, label) in labels { #expect(outcome.rawValue == label) }
        #expect(AdminOutcome.recorded.rawValue == "recorded")
        #expect(AdminOutcome.rejected.rawValue == "rejected")
        #expect(AdminOutcome.failed.rawValue == "failed")
    }

    /// The admin write queue runs writes one at a time in order, and refuses one past its capacity at once (503)
    /// instead of holding it behind a store that hangs.
    @Test func theAdminWriteQueueKeepsOrderAndRefusesPastItsCapacity() async {
        let queue = AdminWriteQueue(capacity: 2)
        let gate = DispatchSemaphore(value: 0)
        let ran = Mutex<[Int]>([])
        #expect(
            queue.enqueue {
                ran.withLock { $0.append(0) }
                gate.wait()
            })
        #expect(await eventually { ran.withLock { $0 } == [0] }, "the first write runs and hangs")
        #expect(queue.enqueue { ran.withLock { $0.append(1) } })
        #expect(queue.enqueue { ran.withLock { $0.append(2) } })
        #expect(!queue.enqueue { ran.withLock { $0.append(3) } }, "two wait already")
        #expect(queue.waiting == 2)
        gate.signal()
        #expect(await eventually { ran.withLock { $0 } == [0, 1, 2] })
        #expect(await eventually { queue.waiting == 0 })
        #expect(queue.enqueue { ran.withLock { $0.append(4) } }, "a drained queue starts its thread again")
        #expect(await eventually { ran.withLock { $0 } == [0, 1, 2, 4] })
    }
}

import Foundation
import Testing

@testable import FlowmeterReporter

/// docs/api.md#client-sdk's answer table and `Retry-After`, as pure functions.
@Suite struct AnswerPolicyTests {
    static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    static func decide(_ status: Int, _ headers: [String: String] = [:]) -> AnswerPolicy.Decision {
        AnswerPolicy.decide(
            UploadResponse(status: status, headers: headers), wasCancelled: false, now: now, policy: UploadPolicy())
    }

    @Test func theTable() {
        #expect(Self.decide(202) == .delivered(accepted: 0, dropped: 0))
        #expect(Self.decide(429, ["Retry-After": "7"]) == .wait(seconds: 7, isRateLimit: true))
        #expect(Self.decide(503, ["Retry-After": "7"]) == .wait(seconds: 7, isRateLimit: false))
        #expect(Self.decide(429) == .wait(seconds: 60, isRateLimit: true))
        #expect(Self.decide(503, ["Retry-After": "soon"]) == .wait(seconds: 60, isRateLimit: false))
        #expect(Self.decide(503, ["Retry-After": "999999"]) == .wait(seconds: 3_600, isRateLimit: false))
        for status in [408, 500, 502, 504, 501, 200, 204, 302] {
            #expect(Self.decide(status) == .backOff, "\(status)")
        }
        #expect(Self.decide(413) == .split)
        #expect(Self.decide(401) == .dropAndPause)
        #expect(Self.decide(403) == .dropAndPause)
        for status in [400, 404, 405, 415, 422] {
            #expect(Self.decide(status) == .drop(.sendError), "\(status)")
        }
        #expect(
            AnswerPolicy.decide(nil, wasCancelled: false, now: Self.now, policy: UploadPolicy()) == .backOff)
        #expect(
            AnswerPolicy.decide(nil, wasCancelled: true, now: Self.now, policy: UploadPolicy()) == .cancelled)
    }

    @Test func acceptedCountsComeFromTheBody() {
        let answer = UploadResponse(status: 202, body: Array(#"{"accepted":49,"dropped":1,"diagnostics":[]}"#.utf8))
        #expect(
            AnswerPolicy.decide(answer, wasCancelled: false, now: Self.now, policy: UploadPolicy())
                == .delivered(accepted: 49, dropped: 1))
    }

    @Test(arguments: [
        ("120", 120.0), (" 3 ", 3), ("0", 0),
        ("Sun, 06 Nov 1994 08:51:37 GMT", 120), ("Sunday, 06-Nov-94 08:50:37 GMT", 60),
        ("Sun Nov  6 08:49:47 1994", 10), ("Sun, 06 Nov 1994 08:00:00 GMT", 0),
    ])
    func retryAfterReadsSecondsAndTheThreeDateFormats(value: String, seconds: Double) {
        #expect(RetryAfter.seconds(value, now: Self.now) == seconds, "\(value)")
    }

    @Test(arguments: ["", "-5", "1.5", "tomorrow", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 CET"])
    func retryAfterRejectsTheRest(value: String) {
        #expect(RetryAfter.seconds(value, now: Self.now) == nil, "\(value)")
    }

    @Test func backoffIsFullJitterUnderADoublingCap() {
        let policy = UploadPolicy()
        #expect(AnswerPolicy.backoff(failures: 1, policy: policy, random: 1) == 2)
        #expect(AnswerPolicy.backoff(failures: 2, policy: policy, random: 1) == 4)
        #expect(AnswerPolicy.backoff(failures: 5, policy: policy, random: 1) == 32)
        #expect(AnswerPolicy.backoff(failures: 9, policy: policy, random: 1) == 300)
        #expect(AnswerPolicy.backoff(failures: 1_000, policy: policy, random: 1) == 300)
        #expect(AnswerPolicy.backoff(failures: 3, policy: policy, random: 0.25) == 2)
        #expect(AnswerPolicy.backoff(failures: 3, policy: policy, random: 0) == 0)
    }
}

import Foundation

/// What the reporter does with a batch after an upload attempt: docs/api.md#client-sdk's table, as a pure function.
enum AnswerPolicy {
    /// The decision for one answer.
    enum Decision: Equatable, Sendable {
        /// 202: done.
        case delivered(accepted: Int, dropped: Int)
        /// 429 or 503: keep, wait `seconds`.
        case wait(seconds: TimeInterval, isRateLimit: Bool)
        /// 408, 500, 502, 504, another 5xx or unexpected status, or no answer: keep, back off.
        case backOff
        /// 413: split, or drop a single event as `payload_too_large`.
        case split
        /// Drop for good, counted as `reason`.
        case drop(DiscardReason)
        /// 401 or 403: drop (`send_error`) and pause uploads for the process.
        case dropAndPause
        /// The attempt was cancelled (close, background time over): keep, no penalty.
        case cancelled
    }

    /// Decides what `response` (nil: no answer) means.
    static func decide(_ response: UploadResponse?, wasCancelled: Bool, now: Date, policy: UploadPolicy) -> Decision {
        guard let response else { return wasCancelled ? .cancelled : .backOff }
        switch response.status {
        case 202:
            let counts = acceptedCounts(response.body)
            return .delivered(accepted: counts.accepted, dropped: counts.dropped)
        case 429, 503:
            let asked = response.headers["retry-after"].flatMap { RetryAfter.seconds($0, now: now) }
            let seconds = min(asked ?? policy.defaultRetryAfter, policy.maximumRetryAfter)
            return .wait(seconds: seconds, isRateLimit: response.status == 429)
        case 413:
            return .split
        case 401, 403:
            return .dropAndPause
        case 400..<500 where response.status != 408:
            return .drop(.sendError)
        default:
            // 408, 5xx, and anything a proxy or captive portal might say (200 with a login page, 302): not the
            // collector's 202, so the batch is kept and tried again later.
            return .backOff
        }
    }

    /// The backoff before the next attempt after `failures` consecutive failures: full jitter, uniform in
    /// `0...cap` where the cap starts at `initialBackoff` and doubles up to `maximumBackoff`.
    static func backoff(failures: Int, policy: UploadPolicy, random: Double) -> TimeInterval {
        let exponent = Double(max(0, min(failures - 1, 30)))
        let cap = min(policy.maximumBackoff, policy.initialBackoff * pow(2, exponent))
        return cap * min(max(random, 0), 1)
    }

    /// `accepted` and `dropped` of a 202 body; zeros when it is not the collector's.
    static func acceptedCounts(_ body: [UInt8]) -> (accepted: Int, dropped: Int) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return (0, 0)
        }
        return ((object["accepted"] as? NSNumber)?.intValue ?? 0, (object["dropped"] as? NSNumber)?.intValue ?? 0)
    }
}

public import Foundation

/// The reference decoder: Foundation's `JSONSerialization` to validate the bytes, then `JSONDecoder` with the
/// models' `Decodable` conformances.
///
/// It is slow (allocation per value) and exists so the fast path has something to be proven equal to; the ingest
/// path uses ``FastBatchDecoder``. Foundation's `JSONDecoder` alone does not validate strings it never reads, so the
/// `JSONSerialization` pass is what makes invalid UTF-8 or a lone surrogate anywhere reject the batch.
public enum CodableBatchDecoder {
    /// Decodes a batch, dropping and reporting bad events; throws ``BatchDecodingError`` when the batch as a whole
    /// cannot be taken.
    public static func decode(_ data: Data) throws(BatchDecodingError) -> DecodedBatch {
        // A NUL byte is never valid in UTF-8 JSON; rejecting it also stops Foundation from guessing UTF-16 or UTF-32.
        if data.contains(0) || (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) == nil {
            throw BatchDecodingError(.invalidJSON, DecodeMessages.invalidJSON, path: "")
        }
        do {
            return try JSONDecoder().decode(DecodedBatch.self, from: data)
        } catch let error as DecodingError {
            let code: BatchDecodingError.Code
            switch error {
            case .keyNotFound: code = .missingKey
            case .typeMismatch, .valueNotFound: code = .typeMismatch
            case .dataCorrupted: code = .invalidValue
            @unknown default: code = .invalidValue
            }
            throw BatchDecodingError(code, error.contractMessage, path: error.contractPath)
        } catch {
            throw BatchDecodingError(.invalidJSON, String(describing: error), path: "")
        }
    }
}

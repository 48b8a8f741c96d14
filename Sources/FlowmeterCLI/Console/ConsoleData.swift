import Collector
import FlowmeterModels
import Foundation

/// A read query's JSON answer as Foundation values, for the console's pages; the same queries as the read API.
struct ConsoleData: Sendable {
    let service: ReadService
    let access: IngestKeys.ReadAccess

    /// A failed query, shown on the page instead of its content.
    struct Failure: Error {
        /// The HTTP status the page answers with.
        var status: Int
        /// What to tell the reader.
        var message: String
    }

    /// The JSON object `query` answers with `parameters`.
    func json(_ query: String, _ parameters: [(name: String, value: String?)]) async throws(Failure) -> [String: Any] {
        let answer = await service.queries.answer(query, parameters: parameters, access: access)
        switch answer {
        case .ok(let body, _):
            guard let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] else {
                throw Failure(status: 503, message: "The \(query) query gave no answer.")
            }
            return object
        case .badRequest(let parameter, let message):
            throw Failure(status: 400, message: parameter.isEmpty ? message : "\(parameter): \(message)")
        case .forbidden(let message):
            throw Failure(status: 403, message: message)
        case .failed(let message):
            throw Failure(status: 503, message: message)
        }
    }

    /// The raw answer of `query` (the report in HTML).
    func text(_ query: String, _ parameters: [(name: String, value: String?)]) async throws(Failure) -> String {
        switch await service.queries.answer(query, parameters: parameters, access: access) {
        case .ok(let body, _): return body
        case .badRequest(let parameter, let message):
            throw Failure(status: 400, message: parameter.isEmpty ? message : "\(parameter): \(message)")
        case .forbidden(let message): throw Failure(status: 403, message: message)
        case .failed(let message): throw Failure(status: 503, message: message)
        }
    }
}

/// Reading Foundation JSON values without ceremony.
extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String { self[key] as? String ?? "" }
    func optionalString(_ key: String) -> String? { self[key] as? String }
    func number(_ key: String) -> Double? { (self[key] as? NSNumber)?.doubleValue }
    func integer(_ key: String) -> Int64 { (self[key] as? NSNumber)?.int64Value ?? 0 }
    func objects(_ key: String) -> [[String: Any]] { self[key] as? [[String: Any]] ?? [] }
    func object(_ key: String) -> [String: Any]? { self[key] as? [String: Any] }
    func strings(_ key: String) -> [String] { self[key] as? [String] ?? [] }
}

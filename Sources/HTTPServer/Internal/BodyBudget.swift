import Synchronization

/// The request-body bytes the server holds at once, in total and per client, with a bound on each.
///
/// A request reserves its declared `Content-Length` (or the body limit, for a chunked body) before its first body
/// byte is read, and gives the reservation back once the handler has returned with the body. A reservation that
/// would pass either bound is refused whole: the request is then answered from its headers alone.
final class BodyBudget: Sendable {
    private struct State {
        var total = 0
        var byClient: [String: Int] = [:]
    }

    let maxTotal: Int
    let maxPerClient: Int
    private let state = Mutex(State())

    init(maxTotal: Int, maxPerClient: Int) {
        self.maxTotal = maxTotal
        self.maxPerClient = maxPerClient
    }

    /// The bytes reserved now, across every client.
    var reserved: Int { state.withLock { $0.total } }

    /// Reserves `bytes` for `client` (nil: bounded by the total alone); false when a bound would be passed.
    func reserve(_ bytes: Int, client: String?) -> Bool {
        guard bytes > 0 else { return true }
        return state.withLock { state in
            guard state.total + bytes <= maxTotal else { return false }
            if let client {
                let clientTotal = state.byClient[client, default: 0]
                guard clientTotal + bytes <= maxPerClient else { return false }
                state.byClient[client] = clientTotal + bytes
            }
            state.total += bytes
            return true
        }
    }

    /// Gives back a reservation made by `reserve(_:client:)`.
    func release(_ bytes: Int, client: String?) {
        guard bytes > 0 else { return }
        state.withLock { state in
            state.total -= bytes
            guard let client else { return }
            let left = state.byClient[client, default: 0] - bytes
            // Clients come and go: an entry at zero is removed, so the map holds only clients with bytes in flight.
            state.byClient[client] = left > 0 ? left : nil
        }
    }
}

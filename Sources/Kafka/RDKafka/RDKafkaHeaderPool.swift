import CRdKafka
import Synchronization

/// Ready-made librdkafka header lists (`rd_kafka_headers_t`) holding one fixed set of headers, handed to
/// `rd_kafka_produceva` as `RD_KAFKA_VTYPE_HEADERS` and taken back from each message's delivery report.
///
/// Given the headers one by one (`RD_KAFKA_VTYPE_HEADER`), librdkafka 2.0.2 builds a list per message: four or five
/// allocations on the producing thread (the list, its array, one block per header), freed with the message on the
/// thread that serves delivery reports. That was the largest allocator cost of the ingest path (the contract puts
/// two headers on every value), and the frees landed on another thread than the allocations. A list handed over as
/// `VTYPE_HEADERS` becomes the message's; the delivery report detaches it (`rd_kafka_message_detach_headers`)
/// before librdkafka destroys the message, and it comes back here for the next message. A list is never changed
/// after it is built, so a reused list carries the same bytes.
///
/// The pool keeps at most ``maxKept`` lists (256 bytes of heap each for the contract's two headers, measured with
/// `mallinfo2` over 1,000 of them: 4 MiB at the default bound); one given back beyond that is destroyed.
/// A message whose report never comes (its handle destroyed with it still queued) takes its list with it:
/// librdkafka destroys the headers with the message.
final class RDKafkaHeaderPool: Sendable {
    /// The headers every list holds.
    let headers: [KafkaHeader]
    let maxKept: Int
    // The lists, as addresses: `OpaquePointer` is not `Sendable`, and a list is only ever used by one thread at a
    // time (the pool's lock hands it from the reporting thread to the producing one).
    private let kept = Mutex<[UInt]>([])
    /// Lists built because the pool was empty, for tests and the benchmark's notes.
    let built = Atomic<Int>(0)

    init(headers: [KafkaHeader], maxKept: Int = 16_384) {
        self.headers = headers
        self.maxKept = maxKept
    }

    deinit {
        for address in kept.withLock({ $0 }) {
            rd_kafka_headers_destroy(OpaquePointer(bitPattern: address))
        }
    }

    /// A list holding ``headers``: a kept one, or a new one. The caller owns it until librdkafka takes it.
    func take() -> OpaquePointer {
        if let address = kept.withLock({ $0.popLast() }), let list = OpaquePointer(bitPattern: address) {
            return list
        }
        built.wrappingAdd(1, ordering: .relaxed)
        return Self.build(headers)
    }

    /// Takes back a list from ``take()`` (refused by `rd_kafka_produceva`, or detached from a delivered message).
    func give(_ list: OpaquePointer) {
        let address = UInt(bitPattern: list)
        let isKept = kept.withLock { kept in
            guard kept.count < maxKept else { return false }
            kept.append(address)
            return true
        }
        if !isKept { rd_kafka_headers_destroy(list) }
    }

    /// How many lists the pool holds now.
    var keptCount: Int { kept.withLock { $0.count } }

    /// A new list with `headers` in order; a nil value is a header without one, an empty value one of size 0.
    static func build(_ headers: [KafkaHeader]) -> OpaquePointer {
        let list = rd_kafka_headers_new(headers.count)!
        for header in headers {
            // rd_kafka_header_add copies the name and value; it fails only for a read-only list.
            let error: rd_kafka_resp_err_t
            if let value = header.value {
                error = value.withUnsafeBytes { value in
                    // A non-nil pointer even for an empty value: nil with size 0 would mean "no value".
                    rd_kafka_header_add(list, header.name, -1, value.baseAddress ?? UnsafeRawPointer(list), value.count)
                }
            } else {
                error = rd_kafka_header_add(list, header.name, -1, nil, -1)
            }
            precondition(error == RD_KAFKA_RESP_ERR_NO_ERROR, "a new header list refused a header")
        }
        return list
    }
}

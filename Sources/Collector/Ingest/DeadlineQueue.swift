import Lifecycle

/// Answers batches whose Kafka delivery takes longer than the response deadline, from one thread
/// (`ingest-deadline`, a ``DeadlineWatch``: it looks at the oldest unanswered batch every 20 ms).
final class DeadlineQueue: Sendable {
    private let watch: DeadlineWatch<PendingBatch>
    private let expire: @Sendable (PendingBatch) -> Void

    /// A queue that calls `expire` (on its thread) for every batch still unanswered at its deadline.
    init(expire: @escaping @Sendable (PendingBatch) -> Void) {
        self.expire = expire
        watch = DeadlineWatch(
            named: "ingest-deadline", deadline: { $0.deadline }, isSettled: { $0.responder.isAnswered })
    }

    /// Starts the thread.
    func start() {
        watch.start(expire: expire)
    }

    /// Stops the thread after answering every batch still waiting with `expire`; returns at once.
    func stop() {
        for batch in watch.stop() where !batch.responder.isAnswered {
            expire(batch)
        }
    }

    /// Watches `batch` until it is answered or its deadline passes.
    func add(_ batch: PendingBatch) {
        if !watch.add(batch) { expire(batch) }
    }
}

import Dispatch

/// Runs read queries' tasks on a queue of their own rather than the cooperative pool: a query command opens the
/// store and reads small tables synchronously (its large reads already go to threads of their own), and those
/// blocking calls must not hold the pool's few threads (STYLE.md, "Concurrency").
///
/// ``ReadService`` bounds how many queries run at once, so the queue's threads are bounded too.
final class QueryExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "flowmeter-read-queries", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}

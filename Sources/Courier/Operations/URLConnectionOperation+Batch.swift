import Foundation

extension URLConnectionOperation {
    /// The operations, each with its completion block wrapped to report the batch's progress, plus one last
    /// operation that depends on all of them and calls `completion` (AFNetworking 2's
    /// `batchOfRequestOperations:progressBlock:completionBlock:`). Add them all to a queue.
    ///
    /// `progress` is called with `(1, n)`, `(2, n)`, … `(n, n)` in that order, each after the completion block of
    /// the operation that finished has run; `completion` runs after every completion block, with the operations.
    /// Both run on ``defaultCompletionQueue``. Set the operations' completion blocks before making the batch. An
    /// empty batch is one operation that calls `completion` with `[]`.
    public static func batch(
        of operations: [URLConnectionOperation], progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)?,
        completion: (@Sendable ([URLConnectionOperation]) -> Void)?
    ) -> [Operation] {
        let queue = defaultCompletionQueue
        guard !operations.isEmpty else {
            return [BlockOperation { queue.async { completion?([]) } }]
        }
        let group = DispatchGroup()
        let finished = Locked(0)
        // One serial queue orders the progress calls even when the operations' completion queues differ.
        let ordered = DispatchQueue(label: "Courier.URLConnectionOperation.batch")
        let batch = BlockOperation {
            group.notify(queue: queue) { completion?(operations) }
        }
        for operation in operations {
            operation.completionGroup = group
            group.enter()
            operation.setAfterCompletion {
                ordered.sync {
                    let count = finished.withLock { count -> Int in
                        count += 1
                        return count
                    }
                    progress?(count, operations.count)
                }
                group.leave()
            }
            batch.addDependency(operation)
        }
        return operations + [batch]
    }
}

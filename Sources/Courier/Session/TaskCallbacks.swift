import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AFNetworking's `success(task, object)` / `failure(task, error)` pair as one completion handler; the task is known
/// once ``attach(to:)`` has been called, which happens before the task can complete (it is not resumed yet).
final class TaskCallbacks: Sendable {
    private let task = Locked<DataTask?>(nil)
    private let success: (@Sendable (DataTask, (any Sendable)?) -> Void)?
    private let failure: (@Sendable (DataTask?, any Error) -> Void)?

    init(
        success: (@Sendable (DataTask, (any Sendable)?) -> Void)?, failure: (@Sendable (DataTask?, any Error) -> Void)?
    ) {
        self.success = success
        self.failure = failure
    }

    var completionHandler: TaskCompletionHandler {
        { [self] _, object, error in
            guard let task = task.value else { return }
            if let error {
                failure?(task, error)
            } else {
                success?(task, object)
            }
        }
    }

    func attach<Task: DataTask>(to task: Task) -> Task {
        self.task.withLock { $0 = task }
        return task
    }
}

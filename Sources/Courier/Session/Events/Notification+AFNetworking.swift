import Foundation

// AFNetworking's notification names and their user-info keys, with AFNetworking's string values, so code that observes
// them by name keeps working. The session posts them from its one event sink (`SessionEventSink`).

extension Notification.Name {
    /// Posted when a task resumes (`AFNetworkingTaskDidResumeNotification`); the object is the ``SessionTask``.
    public static let taskDidResume = Notification.Name("com.alamofire.networking.task.resume")
    /// Posted when a task is suspended (`AFNetworkingTaskDidSuspendNotification`).
    public static let taskDidSuspend = Notification.Name("com.alamofire.networking.task.suspend")
    /// Posted when a task completes (`AFNetworkingTaskDidCompleteNotification`), with ``SessionNotificationKey``s
    /// in the user info.
    public static let taskDidComplete = Notification.Name("com.alamofire.networking.task.complete")
    /// Posted once when a session has been invalidated and its last task has completed
    /// (`AFURLSessionDidInvalidateNotification`); the object is the ``SessionManager``, or `nil` once it was released.
    public static let sessionDidInvalidate = Notification.Name("com.alamofire.networking.session.invalidate")
    /// Posted when a download's file was moved to its destination; the object is the task.
    public static let downloadTaskDidMoveFileSuccessfully = Notification.Name(
        "com.alamofire.networking.session.download.file-manager-succeed")
    /// Posted when a download's file could not be moved; the object is the task, the user info has the error.
    public static let downloadTaskDidFailToMoveFile = Notification.Name(
        "com.alamofire.networking.session.download.file-manager-error")
}

/// The user-info keys of `Notification.Name.taskDidComplete`, with AFNetworking's values.
public enum SessionNotificationKey {
    /// The response serializer used.
    public static let responseSerializer = "com.alamofire.networking.task.complete.responseserializer"
    /// The response body, for data tasks.
    public static let responseData = "com.alamofire.networking.complete.finish.responsedata"
    /// The serialized object: when serialization succeeded, and beside ``error`` when the status was unacceptable
    /// but the body could still be serialized (as AFNetworking posts both).
    public static let serializedResponse = "com.alamofire.networking.task.complete.serializedresponse"
    /// The error, when the task failed.
    public static let error = "com.alamofire.networking.task.complete.error"
    /// The downloaded file's URL, for download tasks.
    public static let assetPath = "com.alamofire.networking.task.complete.assetpath"
    /// The task's ``TaskMetrics``.
    public static let sessionTaskMetrics = "com.alamofire.networking.complete.sessiontaskmetrics"
}

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one way a change in a session's tasks leaves the session.
///
/// The session hands each change to ``send(_:of:)`` exactly once, where it happens; the sink feeds everything that
/// watches from there, on two channels: AFNetworking's (the hooks that only watch, ``SessionHooks/didReceiveData``,
/// ``SessionHooks/didSendBodyData``, ``SessionHooks/didComplete``, ``SessionHooks/sessionDidBecomeInvalid``, and the
/// notifications) and the observers' (``SessionManager/events()`` and the configuration's ``EventMonitor``s). Hooks that decide (redirects,
/// challenges, response dispositions, caching) are read from ``hooks`` by the steps that ask them.
///
/// Hooks, notifications and streams run on the thread that sends the event; each monitor on its own queue.
final class SessionEventSink: Sendable {
    /// A change in a task or the session.
    enum Event {
        case created(SessionTask)
        case resumed(SessionTask)
        case suspended(SessionTask)
        case cancelled(SessionTask)
        case redirected(SessionTask, response: HTTPURLResponse, request: URLRequest)
        /// A retrier asked for the request to be sent again after `delay`.
        case retrying(SessionTask, error: CourierError, delay: Duration)
        case receivedResponse(SessionTask, ResponseHead)
        case receivedData(SessionTask, Data)
        case sentBodyData(SessionTask, bytes: Int64, total: Int64, expected: Int64)
        /// The metrics are there when the session has monitors, which alone receive them.
        case completed(SessionTask, TaskMetrics?, error: (any Error)?)
        /// The task's outcome, with what the did-complete notification adds to it: the serializer and the body or file.
        case serialized(
            SessionTask, object: (any Sendable)?, error: (any Error)?, serializer: any ResponseSerializer,
            payload: CompletionUserInfo.Payload)
        case movedDownload(SessionTask)
        case failedToMoveDownload(SessionTask, any Error)
        /// The session was invalidated and its last task delivered; the manager, while it exists.
        case invalidated((any AnyObject & Sendable)?)
    }

    /// A monitor and the queue it is called on (its own, or one made for it).
    struct Monitor: Sendable {
        let monitor: any EventMonitor
        let queue: DispatchQueue

        /// `monitors` with their queues.
        static func wrap(_ monitors: [any EventMonitor]) -> [Monitor] {
            monitors.enumerated().map { index, monitor in
                Monitor(monitor: monitor, queue: monitor.queue ?? DispatchQueue(label: "Courier.EventMonitor.\(index)"))
            }
        }
    }

    /// The session's hooks, as one unchanging snapshot replaced whole when they are set: the sink reads a hook from
    /// it, and each task keeps the snapshot it started with (a reference, not a copy of every hook).
    let hooks = Locked(HookSnapshot(SessionHooks()))

    /// An unchanging copy of the hooks, made when they are set, shared by the tasks that start meanwhile.
    final class HookSnapshot: Sendable {
        let hooks: SessionHooks

        init(_ hooks: SessionHooks) {
            self.hooks = hooks
        }
    }
    private let monitors: [Monitor]
    private let continuations = Locked([UUID: AsyncStream<SessionEvent>.Continuation]())
    /// Where notifications are posted (``SessionManager/notificationQueue``): the main queue by default, `nil` for
    /// the thread of the change.
    let notificationQueue = Locked<DispatchQueue?>(.main)

    init(monitors: [any EventMonitor]) {
        self.monitors = Monitor.wrap(monitors)
    }

    /// Whether the session has event monitors (fixed when it is made).
    var hasMonitors: Bool { !monitors.isEmpty }

    /// Whether anything watches response heads and body chunks, so the session must report them.
    var watchesExchanges: Bool {
        !monitors.isEmpty || hooks.withLock { $0.hooks.didReceiveData != nil || $0.hooks.didSendBodyData != nil }
    }

    /// Hands `event` to everything that watches it, on two channels: AFNetworking's (the hooks that only watch, and
    /// the notifications) and the observers' (``SessionManager/events()``, the session's monitors, then those of the
    /// task `delegate` runs, ``TaskHooks/eventMonitors``). A task notification goes to ``notificationQueue`` only for
    /// a task of the callback API: an `async` call's is posted at once, off the main queue.
    func send(_ event: Event, of delegate: TaskDelegate?) {
        toAFNetworking(event, onNotificationQueue: delegate?.hopsToCompletionQueue ?? true)
        toObservers(event)
        if let monitors = delegate?.monitors, !monitors.isEmpty { forward(event, to: monitors) }
        if case .invalidated = event { finishEvents() }
    }

    /// AFNetworking's channel: the blocks that watch (``SessionHooks``) and the notifications.
    private func toAFNetworking(_ event: Event, onNotificationQueue hops: Bool) {
        switch event {
        case .created, .cancelled, .redirected, .receivedResponse, .retrying:
            break
        case .resumed(let task):
            post(.taskDidResume, object: task, hops: hops)
        case .suspended(let task):
            post(.taskDidSuspend, object: task, hops: hops)
        case .receivedData(let task, let data):
            let (onData, onWrite) = hooks.withLock { ($0.hooks.didReceiveData, $0.hooks.downloadTaskDidWriteData) }
            onData?(task, data)
            if let onWrite, let download = task as? DownloadTask {
                // The file's totals: a resumed download's offset counts, as its progress does.
                let (written, expected) = download.mutable.withLock {
                    ($0.downloadBytesWritten, $0.bytesExpectedToReceive)
                }
                onWrite(download, Int64(data.count), written, expected)
            }
        case .sentBodyData(let task, let bytes, let total, let expected):
            hooks.withLock { $0.hooks.didSendBodyData }?(task, bytes, total, expected)
        case .completed(let task, _, let error):
            hooks.withLock { $0.hooks.didComplete }?(task, error)
        case .serialized(let task, let object, let error, let serializer, let payload):
            let metrics = task.metrics
            post(.taskDidComplete, object: task, hops: hops) {
                CompletionUserInfo.make(
                    serializer: serializer, object: object, error: error, payload: payload, metrics: metrics)
            }
        // As AFNetworking: these three are posted where the change happens, not on the main queue.
        case .movedDownload(let task):
            post(.downloadTaskDidMoveFileSuccessfully, object: task, hops: false)
        case .failedToMoveDownload(let task, let error):
            post(.downloadTaskDidFailToMoveFile, object: task, hops: false) { [SessionNotificationKey.error: error] }
        case .invalidated(let manager):
            hooks.withLock { $0.hooks.sessionDidBecomeInvalid }?(nil)
            post(.sessionDidInvalidate, object: manager, hops: false)
        }
    }

    /// The observers' channel: the lifecycle changes ``SessionManager/events()`` streams, then every event to the
    /// monitors.
    private func toObservers(_ event: Event) {
        switch event {
        case .resumed(let task): yield(.didResume(task))
        case .suspended(let task): yield(.didSuspend(task))
        case .serialized(let task, let object, let error, _, _):
            yield(.didComplete(task, error.map { .failure($0) } ?? .success(object)))
        default: break
        }
        // Checked first: the closures handed to monitors would be allocated even for none.
        if hasMonitors { forward(event, to: monitors) }
    }

    /// ``send(_:of:)``'s part for `monitors`, each on its queue.
    private func forward(_ event: Event, to monitors: [Monitor]) {
        func toMonitors(_ call: @escaping @Sendable (any EventMonitor) -> Void) {
            for entry in monitors {
                let monitor = entry.monitor
                entry.queue.async { call(monitor) }
            }
        }
        switch event {
        case .created(let task):
            toMonitors { $0.taskCreated(task) }
        case .resumed(let task):
            toMonitors { $0.taskResumed(task) }
        case .suspended(let task):
            toMonitors { $0.taskSuspended(task) }
        case .cancelled(let task):
            toMonitors { $0.taskCancelled(task) }
        case .redirected(let task, let response, let request):
            toMonitors { $0.task(task, willRedirectWith: response, to: request) }
        case .retrying(let task, let error, let delay):
            toMonitors { $0.task(task, willRetryAfter: delay, dueTo: error) }
        case .receivedResponse(let task, let head):
            guard let response = head.response else { return }
            toMonitors { $0.task(task, didReceiveResponse: response) }
        case .receivedData(let task, let data):
            toMonitors { $0.task(task, didReceiveData: data) }
        case .sentBodyData(let task, let bytes, let total, let expected):
            toMonitors {
                $0.task(task, didSendBodyData: bytes, totalBytesSent: total, totalBytesExpectedToSend: expected)
            }
        case .completed(let task, let metrics, let error):
            if let metrics { toMonitors { $0.task(task, didCompleteWith: metrics, error: error) } }
        case .serialized(let task, let object, let error, _, _):
            let result: Result<(any Sendable)?, any Error> = error.map { .failure($0) } ?? .success(object)
            toMonitors { $0.task(task, didSerializeResponse: result) }
        case .movedDownload, .failedToMoveDownload:
            break
        case .invalidated:
            toMonitors { $0.sessionDidBecomeInvalid(error: nil) }
        }
    }

    /// Every task's resume, suspend and completion from now on, until the session is invalidated.
    func events() -> AsyncStream<SessionEvent> {
        let id = UUID()
        return AsyncStream { continuation in
            continuations.withLock { $0[id] = continuation }
            continuation.onTermination = { [weak self] _ in
                self?.continuations.withLock { _ = $0.removeValue(forKey: id) }
            }
        }
    }

    /// Ends every stream ``events()`` gave out.
    func finishEvents() {
        let ended = continuations.withLock { state -> [AsyncStream<SessionEvent>.Continuation] in
            defer { state = [:] }
            return Array(state.values)
        }
        ended.forEach { $0.finish() }
    }

    /// Posts `name` on ``notificationQueue``, in the order the changes happened (the queue is serial), or at once
    /// when there is none. The user info is made where it is posted: a dictionary of `Any` cannot cross threads.
    private func post(
        _ name: Notification.Name, object: (any Sendable & AnyObject)?, hops: Bool,
        userInfo: @escaping @Sendable () -> [AnyHashable: Any]? = { nil }
    ) {
        guard hops, let queue = notificationQueue.withLock({ $0 }) else {
            return NotificationCenter.default.post(name: name, object: object, userInfo: userInfo())
        }
        queue.async { NotificationCenter.default.post(name: name, object: object, userInfo: userInfo()) }
    }

    private func yield(_ event: SessionEvent) {
        let open = continuations.withLock { $0.isEmpty ? [] : Array($0.values) }
        for continuation in open { continuation.yield(event) }
    }
}

/// The user info of `Notification.Name.taskDidComplete`, built for every task that completes, so built
/// without hashing a key.
///
/// The keys a completion can carry are fixed (``SessionNotificationKey``), and only nine combinations occur. Each
/// has a template dictionary made once, with the positions of its keys; a completion copies its template (the copy
/// keeps the template's buckets, so nothing is hashed again) and sets the values at those positions. Hashing the
/// long AFNetworking key strings for every task cost more than posting the notification.
enum CompletionUserInfo {
    /// What a task's kind adds to the serializer, object and error.
    enum Payload: Sendable {
        case none
        /// A data task's body (``SessionNotificationKey/responseData``).
        case responseData(Data)
        /// A download's file (``SessionNotificationKey/assetPath``).
        case assetPath(URL)
    }

    /// The user info for a task that completed with `object` or `error` and took `metrics`.
    static func make(
        serializer: any ResponseSerializer, object: (any Sendable)?, error: (any Error)?, payload: Payload,
        metrics: TaskMetrics?
    ) -> [AnyHashable: Any] {
        let outcome: Int
        let outcomeValue: Any?
        if let error {
            (outcome, outcomeValue) = (2, error)
        } else if let object {
            (outcome, outcomeValue) = (1, object)
        } else {
            (outcome, outcomeValue) = (0, nil)
        }
        let payloadValue: Any?
        let kind: Int
        switch payload {
        case .none: (kind, payloadValue) = (0, nil)
        case .responseData(let data): (kind, payloadValue) = (1, data)
        case .assetPath(let url): (kind, payloadValue) = (2, url)
        }
        let template = templates[kind * 3 + outcome]
        var info = template.info
        info.values[template.serializer] = serializer
        if let metrics {
            info.values[template.metrics] = metrics
        } else {
            info[SessionNotificationKey.sessionTaskMetrics] = nil
        }
        if let index = template.payload, let payloadValue { info.values[index] = payloadValue }
        if let index = template.outcome, let outcomeValue { info.values[index] = outcomeValue }
        // A failure that still parsed a body (an unacceptable status) carries both, as AFNetworking's does.
        if error != nil, let object { info[SessionNotificationKey.serializedResponse] = object }
        return info
    }

    private struct Template {
        let info: [AnyHashable: Any]
        let serializer: Dictionary<AnyHashable, Any>.Index
        let metrics: Dictionary<AnyHashable, Any>.Index
        let payload: Dictionary<AnyHashable, Any>.Index?
        let outcome: Dictionary<AnyHashable, Any>.Index?

        init(payloadKey: String?, outcomeKey: String?) {
            var info: [AnyHashable: Any] = [
                SessionNotificationKey.responseSerializer: (), SessionNotificationKey.sessionTaskMetrics: (),
            ]
            if let payloadKey { info[payloadKey] = () }
            if let outcomeKey { info[outcomeKey] = () }
            self.info = info
            func index(of key: String?) -> Dictionary<AnyHashable, Any>.Index? {
                key.flatMap { key in info.indices.first { info.keys[$0] == AnyHashable(key) } }
            }
            serializer = index(of: SessionNotificationKey.responseSerializer) ?? info.startIndex
            metrics = index(of: SessionNotificationKey.sessionTaskMetrics) ?? info.startIndex
            payload = index(of: payloadKey)
            outcome = index(of: outcomeKey)
        }
    }

    /// Indexed by payload kind × 3 + outcome (0 none, 1 object, 2 error).
    ///
    /// `nonisolated(unsafe)`: `[AnyHashable: Any]` is not `Sendable`, but these values are made once and never
    /// mutated; every use copies one.
    nonisolated(unsafe) private static let templates: [Template] = {
        let payloadKeys = [nil, SessionNotificationKey.responseData, SessionNotificationKey.assetPath]
        let outcomeKeys = [nil, SessionNotificationKey.serializedResponse, SessionNotificationKey.error]
        return payloadKeys.flatMap { payloadKey in
            outcomeKeys.map { Template(payloadKey: payloadKey, outcomeKey: $0) }
        }
    }()
}

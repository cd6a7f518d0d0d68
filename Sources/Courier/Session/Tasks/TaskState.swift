import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Everything about one task that changes while it runs, as one plain value: its lifecycle, its requests and
/// response, its counters, its body, its progress, its clocks and how it ended. ``SessionTask`` keeps it behind the
/// task's one lock (the session's `TaskDelegate` shares that lock); each transition is one call under it and returns
/// what must be done outside it (progress to report, waiters to release), so a transition never calls out.
///
/// Invariants: each count is kept in one field and moved by one transition (bytes by ``sent(total:watched:)`` and
/// ``received(_:keep:watched:now:)``, requests by ``beginExchange(request:)``, redirects by ``followedRedirect()``, retries
/// by ``retried()``); ``complete(error:end:)`` succeeds once and freezes the metrics; the idle clock does not run
/// while the task is suspended, waits for its consumer or waits out a retry's delay.
struct TaskState {
    var lifecycle = TaskLifecycle()
    var state: SessionTask.State { lifecycle.state }
    /// Callers waiting while the task is suspended.
    private var gate: [CheckedContinuation<Void, Never>] = []
    /// Cancels the Swift task running this task, once there is one.
    var cancelRunner: (@Sendable () -> Void)?

    /// Set once a request other than the original is sent (`nil` means the original).
    var currentRequest: URLRequest?
    /// The original request, once made from a plain one.
    var madeOriginal: URLRequest?
    var response: ResponseHead?
    var error: (any Error)?
    var taskDescription: String?
    /// Set when the task completes.
    private(set) var metrics: TaskMetrics?

    /// How many times a retrier sent the request again.
    private(set) var retryCount = 0
    private(set) var redirectCount = 0
    /// Requests sent: the first, and one per redirect, answered challenge, retry or restarted download.
    private(set) var exchangeCount = 0
    /// One per response: from the network, or the cache's.
    private(set) var transactions: [TransactionMetrics] = []
    /// When the task started, for its metrics.
    private(set) var startDate: Date?

    private(set) var bytesSent: Int64 = 0
    private(set) var bytesExpectedToSend: Int64 = -1
    private(set) var bytesReceived: Int64 = 0
    private(set) var bytesExpectedToReceive: Int64 = -1
    /// The body kept in memory, for the serializer.
    private(set) var data = Data()
    private(set) var upload = ProgressMeter()
    private(set) var download = ProgressMeter()
    private var uploadStreams: [AsyncStream<TaskProgress>.Continuation] = []
    private var downloadStreams: [AsyncStream<TaskProgress>.Continuation] = []
    /// Set by ``finishProgress(succeeded:hadUpload:watched:)``: a stream added later ends at once.
    private var progressEnded = false
    /// ``SessionTask/progress``, once asked for, and whether it follows the upload (else the download).
    private(set) var live: (progress: Progress, followsUpload: Bool)?
    /// The download's file: made for a download task, or when a response turns a task into one.
    var downloadFile: DownloadFile?

    private(set) var clocks = Clocks()

    /// The timeouts' clocks.
    struct Clocks {
        var lastActivity = ContinuousClock.now
        var idleTimeout: Duration?
        var resourceDeadline: ContinuousClock.Instant?
        private(set) var timedOut = false
        /// The consumer of a streamed body has not asked for the next chunk: like a suspension, not idleness.
        var waitingForConsumer = false
        /// The task waits out a retrier's delay: the idle timeout measures silence from a server that was asked for
        /// something, so the backoff counts against the resource deadline only.
        var waitingToRetry = false

        /// Marks the task timed out and returns `nil` when a deadline has passed at `now`; else the nearest
        /// deadline. A task that is `suspended` (or waiting) is never idle.
        mutating func expire(now: ContinuousClock.Instant, suspended: Bool) -> ContinuousClock.Instant? {
            guard let idleTimeout, let resourceDeadline else { return now + .seconds(3600) }
            if suspended || waitingForConsumer || waitingToRetry { lastActivity = now }
            let deadline = min(lastActivity + idleTimeout, resourceDeadline)
            guard now < deadline else {
                timedOut = true
                return nil
            }
            return deadline
        }
    }

    /// Progress to hand to a direction's closure and streams, outside the lock.
    struct ProgressReport {
        var progress: TaskProgress
        var streams: [AsyncStream<TaskProgress>.Continuation]
        /// The task's live `Progress`, when it follows this direction.
        var live: Progress?
    }

    // MARK: Lifecycle

    /// `resume()`; see ``TaskLifecycle/resume()``.
    mutating func resume() -> TaskLifecycle.Actions {
        let actions = lifecycle.resume()
        if actions.releaseWaiters { releaseWaiters() }
        return actions
    }

    /// `cancel()`; see ``TaskLifecycle/cancel()``.
    mutating func cancel() -> TaskLifecycle.Actions {
        let actions = lifecycle.cancel()
        if actions.releaseWaiters { releaseWaiters() }
        return actions
    }

    /// Makes `continuation` wait while the task is suspended; `false` (and nothing kept) when it is not.
    mutating func wait(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard state == .suspended else { return false }
        gate.append(continuation)
        return true
    }

    /// Completes the task at `end` with `error`, and makes its metrics; `false` when it had completed already.
    mutating func complete(error: (any Error)?, end: Date) -> Bool {
        guard lifecycle.complete() else { return false }
        self.error = error
        cancelRunner = nil
        releaseWaiters()
        endLastTransaction(at: end)  // a body cut short by a failure ends with the task
        let start = startDate ?? end
        metrics = TaskMetrics(
            taskInterval: DateInterval(start: min(start, end), end: end), redirectCount: redirectCount,
            exchangeCount: exchangeCount, countOfBytesSent: bytesSent, countOfBytesReceived: bytesReceived,
            transactionMetrics: transactions)
        return true
    }

    private mutating func releaseWaiters() {
        let waiting = gate
        gate = []
        waiting.forEach { $0.resume() }
    }

    // MARK: Exchanges

    /// Starts the clocks: the idle and resource timeouts from now, the task's start at `startDate` unless it has one.
    mutating func armTimeouts(idle: Duration, resource: Duration, startDate: Date) {
        clocks.lastActivity = .now
        clocks.idleTimeout = idle
        clocks.resourceDeadline = .now + resource
        if self.startDate == nil { self.startDate = startDate }
    }

    /// Notes the start of a task that has no timeouts of its own (a connection task).
    mutating func noteStart(_ date: Date) {
        if startDate == nil { startDate = date }
    }

    /// A request goes out: `request`, or the original when `nil`.
    mutating func beginExchange(request: URLRequest?) {
        if let request { currentRequest = request }
        exchangeCount += 1
        clocks.lastActivity = .now
    }

    mutating func followedRedirect() { redirectCount += 1 }

    mutating func retried() { retryCount += 1 }

    /// Bytes moved: the idle clock starts again.
    mutating func touch() { clocks.lastActivity = .now }

    mutating func waitForConsumer(_ waiting: Bool) {
        clocks.waitingForConsumer = waiting
        clocks.lastActivity = .now  // the idle clock starts again when the consumer is back
    }

    mutating func waitToRetry(_ waiting: Bool) {
        clocks.waitingToRetry = waiting
        clocks.lastActivity = .now  // the idle clock starts again with the next try
    }

    /// See ``Clocks/expire(now:suspended:)``; `consumerBehind` when a streamed chunk waits for its consumer, which
    /// counts as a suspension.
    mutating func expire(now: ContinuousClock.Instant, consumerBehind: Bool = false) -> ContinuousClock.Instant? {
        clocks.expire(now: now, suspended: state == .suspended || consumerBehind)
    }

    /// Records a response's transaction; the one before it ends at `date` if it had not ended yet.
    mutating func recordTransaction(_ metrics: TransactionMetrics, at date: Date) {
        endLastTransaction(at: date)
        transactions.append(metrics)
    }

    /// Ends the latest transaction at `date` if nothing said when it ended (a body read or dropped by the session);
    /// `received`, when given, is its body's length.
    mutating func endLastTransaction(at date: Date, received: Int64? = nil) {
        guard let last = transactions.indices.last else { return }
        if transactions[last].responseEndDate == nil { transactions[last].responseEndDate = date }
        if let received, transactions[last].countOfResponseBodyBytesReceived == 0 {
            transactions[last].countOfResponseBodyBytesReceived = received
        }
    }

    // MARK: Bodies and progress

    mutating func expectUpload(total: Int64) {
        bytesExpectedToSend = total
        upload.expect(total: total)
    }

    /// `total` request-body bytes have gone out; returns the progress to report, if it is time.
    mutating func sent(total: Int64, watched: Bool) -> ProgressReport? {
        clocks.lastActivity = .now
        bytesSent = total
        let watched = watched || !uploadStreams.isEmpty || livesOn(upload: true)
        return upload.update(completed: total, watched: watched).map {
            ProgressReport(progress: $0, streams: uploadStreams, live: liveProgress(upload: true))
        }
    }

    /// A response is about to deliver its body: `expected` bytes in all (counting a resumed download's), of which
    /// progress expects `progressTotal` (0 for a HEAD).
    mutating func expectDownload(expected: Int64, progressTotal: Int64) {
        bytesExpectedToReceive = expected
        download.expect(total: progressTotal)
    }

    /// The bytes a download's file holds so far: a resumed download's offset and what has arrived since.
    var downloadBytesWritten: Int64 { download.completedCount }

    /// Sets the bytes a download's progress starts from (its file's, when it continues one).
    mutating func startDownload(at offset: Int64) {
        download.start(at: offset)
    }

    /// A chunk of the body arrived; kept in memory when `keep`. Returns the progress to report, if it is time.
    /// `watched`: the direction has a progress closure (its streams are known here).
    mutating func received(_ chunk: Data, keep: Bool, watched: Bool, now: ContinuousClock.Instant = .now)
        -> ProgressReport?
    {
        clocks.lastActivity = now
        bytesReceived += Int64(chunk.count)
        // A collected body arrives as one chunk: keep it rather than copy it into an empty buffer.
        if keep { if data.isEmpty { data = chunk } else { data.append(chunk) } }
        let completed = download.completedCount + Int64(chunk.count)
        let watched = watched || !downloadStreams.isEmpty || livesOn(upload: false)
        return download.update(completed: completed, now: now, watched: watched).map {
            ProgressReport(progress: $0, streams: downloadStreams, live: liveProgress(upload: false))
        }
    }

    /// The task's live `Progress`, made on first call (the caller sets its handlers outside the lock), following the
    /// upload when `followsUpload`, else the download; `made` tells whether this call made it.
    mutating func liveProgress(followsUpload: Bool) -> (progress: Progress, made: Bool) {
        if let live { return (live.progress, false) }
        let current = followsUpload ? upload.progress : download.progress
        let progress = Progress(totalUnitCount: current.total)
        progress.completedUnitCount = current.completed
        live = (progress, followsUpload)
        return (progress, true)
    }

    private func livesOn(upload isUpload: Bool) -> Bool { live?.followsUpload == isUpload }

    private func liveProgress(upload isUpload: Bool) -> Progress? { livesOn(upload: isUpload) ? live?.progress : nil }

    /// Adds a progress stream, which gets the current value at once (and ends at once when progress has ended).
    mutating func addStream(_ continuation: AsyncStream<TaskProgress>.Continuation, upload isUpload: Bool) {
        continuation.yield(isUpload ? upload.progress : download.progress)
        if progressEnded { return continuation.finish() }
        if isUpload { uploadStreams.append(continuation) } else { downloadStreams.append(continuation) }
    }

    /// Ends progress: after a success, each direction's final value (fraction 1) to report (an upload's only when it
    /// had a body or reported); the streams to finish either way, which are dropped.
    mutating func finishProgress(succeeded: Bool, hadUpload: Bool, watched: (upload: Bool, download: Bool)) -> (
        upload: ProgressReport?, download: ProgressReport?, streams: [AsyncStream<TaskProgress>.Continuation]
    ) {
        var reports: (upload: ProgressReport?, download: ProgressReport?) = (nil, nil)
        if succeeded {
            if hadUpload || upload.hasReported {
                let watched = watched.upload || !uploadStreams.isEmpty || livesOn(upload: true)
                reports.upload = upload.finish(watched: watched).map {
                    ProgressReport(progress: $0, streams: uploadStreams, live: liveProgress(upload: true))
                }
            }
            let watched = watched.download || !downloadStreams.isEmpty || livesOn(upload: false)
            reports.download = download.finish(watched: watched).map {
                ProgressReport(progress: $0, streams: downloadStreams, live: liveProgress(upload: false))
            }
        }
        defer { (uploadStreams, downloadStreams, progressEnded) = ([], [], true) }
        return (reports.upload, reports.download, uploadStreams + downloadStreams)
    }
}

/// One direction's progress of one task: the counts so far, when they were last reported, and the rate.
///
/// Reports are throttled to ``TaskProgress/reportingInterval``; the first report, a report that reaches the total
/// and the final report are never dropped. The counts are kept as plain numbers and made into a ``TaskProgress``
/// only for a report or a read, and only a watched direction reports: most transfers have nobody watching.
struct ProgressMeter {
    private var completed: Int64 = 0
    private var total: Int64 = -1
    private var throughput: Double = 0
    private var estimatedTimeRemaining: TimeInterval?
    private var startedAt: ContinuousClock.Instant?
    private var startedWith: Int64 = 0
    private var lastReport: ContinuousClock.Instant?
    private var lastReported: (completed: Int64, total: Int64)?

    /// The current value.
    var progress: TaskProgress {
        TaskProgress(
            completed: completed, total: total, throughput: throughput, estimatedTimeRemaining: estimatedTimeRemaining)
    }

    /// Bytes transferred so far.
    var completedCount: Int64 { completed }

    /// Sets the expected total.
    mutating func expect(total: Int64) {
        self.total = total
    }

    /// Sets the bytes already done before this transfer started (a resumed download's file on disk).
    mutating func start(at completed: Int64) {
        self.completed = completed
        startedWith = completed
    }

    /// Records `completed` bytes; returns the value to report, or `nil` when it is too soon since the last one or
    /// nobody `watches`.
    mutating func update(completed: Int64, now: ContinuousClock.Instant = .now, watched: Bool = true) -> TaskProgress? {
        if startedAt == nil { startedAt = now }
        self.completed = completed
        refreshRate(now: now)
        guard watched else { return nil }
        let reachedTotal = total >= 0 && completed >= total
        if let lastReport, now - lastReport < TaskProgress.reportingInterval, !reachedTotal { return nil }
        return report(now: now)
    }

    /// The last value of a successful transfer: the total becomes the bytes actually moved, so the fraction is
    /// exactly 1 (a decompressed body is longer than its `Content-Length`). `nil` when that was already reported or
    /// nobody `watches`.
    mutating func finish(now: ContinuousClock.Instant = .now, watched: Bool = true) -> TaskProgress? {
        total = completed
        estimatedTimeRemaining = 0
        guard watched else { return nil }
        if let lastReported, lastReported.completed == completed, lastReported.total == total { return nil }
        return report(now: now)
    }

    /// Whether anything was reported at all.
    var hasReported: Bool { lastReport != nil }

    private mutating func report(now: ContinuousClock.Instant) -> TaskProgress {
        lastReport = now
        lastReported = (completed, total)
        return progress
    }

    private mutating func refreshRate(now: ContinuousClock.Instant) {
        guard let startedAt else { return }
        let elapsed = now - startedAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard seconds > 0 else { return }
        throughput = Double(completed - startedWith) / seconds
        if total >= 0, throughput > 0 {
            estimatedTimeRemaining = Double(max(0, total - completed)) / throughput
        } else {
            estimatedTimeRemaining = nil
        }
    }
}

/// A task's lifecycle as a plain value: its state, whether it has started, and what each call must do, decided under
/// the task's lock and carried out outside it (``SessionTask`` holds it in its locked state and applies the actions).
///
/// Invariants: a task starts at most once, and only from ``SessionTask/State/suspended``; it completes at most once;
/// ``SessionTask/State/completed`` is final; every transition out of ``SessionTask/State/suspended`` releases the
/// callers waiting for it to run.
struct TaskLifecycle: Sendable, Hashable {
    private(set) var state: SessionTask.State = .suspended
    /// Whether the task has begun running (its first `resume()` or its `async` run).
    private(set) var started = false

    /// What a transition asks of the task, outside its lock.
    struct Actions: Sendable, Hashable {
        /// The state to tell the session about, if it changed.
        var announce: SessionTask.State?
        /// Start the task's run: its first resume.
        var start = false
        /// Release whoever waits while the task is suspended.
        var releaseWaiters = false
        /// Interrupt the Swift task running the task.
        var cancelRunner = false
        /// The task never started: the session completes it as cancelled.
        var completeUnstarted = false
    }

    /// `resume()`: a suspended task runs, starting if it never has.
    mutating func resume() -> Actions {
        guard state == .suspended else { return Actions() }
        state = .running
        defer { started = true }
        return Actions(announce: .running, start: !started, releaseWaiters: true)
    }

    /// `suspend()`: a running task pauses.
    mutating func suspend() -> Actions {
        guard state == .running else { return Actions() }
        state = .suspended
        return Actions(announce: .suspended)
    }

    /// `cancel()`: a suspended or running task winds down; one that never started is completed by the session.
    mutating func cancel() -> Actions {
        guard state == .suspended || state == .running else { return Actions() }
        state = .canceling
        return Actions(announce: .canceling, releaseWaiters: true, cancelRunner: true, completeUnstarted: !started)
    }

    /// The `async` API's run, which the caller's task drives: `false` when the task was cancelled, completed or run
    /// already.
    mutating func beginRun() -> Bool {
        guard state == .suspended, !started else { return false }
        state = .running
        started = true
        return true
    }

    /// Completion: `false` when the task had completed already (it completes exactly once).
    mutating func complete() -> Bool {
        guard state != .completed else { return false }
        state = .completed
        return true
    }
}
